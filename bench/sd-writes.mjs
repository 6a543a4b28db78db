// Bytes an appliance writes to its disk (an SD card on a gateway), per day: /proc/<pid>/io write_bytes of the server
// (every thread, the telemetry fold worker's included) over a window, scaled to 24 h, beside the bytes it logs to
// stdout (what journald then stores, with its own overhead). Three loads, each on a fresh data dir after a warm-up:
//   idle       nothing calls;
//   console    the console's Operations page open: GET /healthz and GET /metrics every 5 s, as it polls;
//   telemetry  100 points/s: 10 devices, each posting one request per second of 10 lines (one float field each).
// Usage: node build.mjs && node bench/sd-writes.mjs   (GK_EXE: another executable; SECONDS_PER_LOAD: window, default
// 120; LOADS=idle,console,telemetry; GRIDKEEPER_LOG: the server's level, default info)
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { accessToken, call } from './lib/http.mjs';

const EXE = process.env.GK_EXE ?? new URL('../dist/gridkeeper', import.meta.url).pathname;
const WINDOW_S = Number(process.env.SECONDS_PER_LOAD ?? 120);
const WARMUP_S = 20;
const LOADS = (process.env.LOADS ?? 'idle,console,telemetry').split(',');
const LOG = process.env.GRIDKEEPER_LOG ?? 'info';
const PASSWORD = 'sd-bench-password';
const DAY = 86_400;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const writeBytes = (pid) => Number(/^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))[1]);
const mb = (n) => (n / 1e6).toFixed(n < 1e6 ? 3 : 1);

function start(dataDir) {
  const child = spawn(EXE, ['--data-dir', dataDir], {
    env: { PATH: process.env.PATH, GRIDKEEPER_PORT: '0', GRIDKEEPER_LOG: LOG, GRIDKEEPER_ADMIN_PASSWORD: PASSWORD },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const server = { child, stdoutBytes: 0, url: undefined };
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      server.stdoutBytes += d.length;
      if (server.url) return;
      buf += d;
      const m = /"url":"(http:\/\/[^"]+)"/.exec(buf);
      if (m) { server.url = m[1]; resolve(server); }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });
}

/** What each load does once a second (t: seconds since the load started). */
const LOAD_STEPS = {
  idle: async () => {},
  console: async (s, t) => {
    if (t % 5 === 0) await Promise.all([call(s.url, 'GET', '/healthz'), call(s.url, 'GET', '/metrics')]);
  },
  telemetry: async (s) => {
    const ns = BigInt(Date.now()) * 1_000_000n;
    await Promise.all(s.devices.map((d) => call(s.url, 'POST', '/v1/telemetry?db=site&rp=autogen', {
      token: s.token, type: 'text/plain', expect: 204,
      raw: Array.from({ length: 10 }, (_, i) => `m${i},nodeId=${d} v=${(Math.random() * 1000).toFixed(3)} ${ns}`).join('\n'),
    })));
  },
};

async function measure(load) {
  const dir = mkdtempSync(join(tmpdir(), 'gk-sd-'));
  const s = await start(join(dir, 'data'));
  try {
    s.token = await accessToken(s.url, 'admin@localhost', PASSWORD);
    s.devices = Array.from({ length: 10 }, (_, i) => `sd-${i}`);
    for (const nodeId of s.devices) await call(s.url, 'POST', '/v1/device?roleId=1', { token: s.token, body: { properties: { nodeId } } });
    let t = 0;
    const tick = async (seconds) => {
      const until = Date.now() + seconds * 1000;
      while (Date.now() < until) {
        const next = Date.now() + 1000;
        await LOAD_STEPS[load](s, t++);
        await sleep(Math.max(0, next - Date.now()));
      }
    };
    await tick(WARMUP_S);
    const before = { disk: writeBytes(s.child.pid), out: s.stdoutBytes, at: performance.now() };
    await tick(WINDOW_S);
    const seconds = (performance.now() - before.at) / 1000;
    const disk = writeBytes(s.child.pid) - before.disk;
    const out = s.stdoutBytes - before.out;
    const files = readdirSync(join(dir, 'data')).filter((f) => f.startsWith('gridkeeper.db'))
      .map((f) => `${f.replace('gridkeeper.db', 'db')} ${mb(statSync(join(dir, 'data', f)).size)}`).join(', ');
    console.log(`${load.padEnd(10)} disk ${mb(disk).padStart(8)} MB in ${seconds.toFixed(0)} s = ${mb((disk / seconds) * DAY).padStart(8)} MB/day;`
      + ` log (stdout at ${LOG}) ${mb((out / seconds) * DAY).padStart(7)} MB/day; files (MB): ${files}`);
  } finally {
    s.child.kill('SIGTERM');
    await new Promise((r) => s.child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`${EXE}: ${WINDOW_S} s per load after ${WARMUP_S} s of warm-up, log level ${LOG}`);
for (const load of LOADS) await measure(load);
