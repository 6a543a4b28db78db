// The price of the durability guarantee, and the time to come back after a crash.
//  1. PATCH /v1/device with 16 connections under synchronous = FULL (what the appliance runs), NORMAL and OFF:
//     requests/s and latency. FULL fsyncs the WAL on every commit; device writes share commits (group commit), so the
//     price is one fsync per batch, not per request.
//  2. Restart after kill -9 of dist/gridkeeper right after 200,000 telemetry points were written: time from spawn to
//     the listening line (WAL recovery included; wal_autocheckpoint bounds the WAL at ~40 MB), against a clean restart.
// Every load is bounded by a request count and a time cap. Run: node build.mjs && node bench/hardening.mjs
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from './lib/load.mjs';
import { call as httpCall, accessToken as adminAccessToken } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const REQUESTS = Number(process.env.PATCH_REQUESTS ?? 4000);
const ADMIN_PASSWORD = 'bench-password-1';
const fmt = (n, d = 1) => Number(n).toFixed(d);

const call = (url, method, path, options = {}) => httpCall(url, method, path, { expect: '2xx', ...options });
const accessToken = (url) => adminAccessToken(url, 'admin@localhost', ADMIN_PASSWORD);

async function patchThroughput(mode) {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-sync-'));
  const env = { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir, BENCH_SYNC: mode };
  const server = await startServer(process.execPath, ['--import', join(root, 'test/support/register.mjs'), join(root, 'bench/hardening-server.ts')], { env, timeoutMs: 60_000 });
  try {
    const token = await accessToken(server.url);
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push(JSON.parse(await call(server.url, 'POST', '/v1/device?roleId=1', { token, body: { properties: { n: i } } })).device.id);
    let k = 0;
    const r = await load({
      url: `${server.url}/v1/device/${ids[0]}`, method: 'PATCH', connections: 16, requests: REQUESTS, seconds: 20,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: () => JSON.stringify([{ op: 'replace', path: '/n', value: k++ }]),
    });
    return r;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function recovery() {
  const exe = join(root, 'dist/gridkeeper');
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-recovery-'));
  const env = { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir };
  try {
    let server = await startServer(exe, ['serve'], { env, timeoutMs: 60_000 });
    const token = await accessToken(server.url);
    const nodeId = 'bench-ctrl';
    await call(server.url, 'POST', '/v1/device?roleId=1', { token, body: { properties: { nodeId, nodeType: 'smartgridController' } } });
    const t0 = Date.now() - 86_400_000;
    for (let b = 0; b < 10; b++) {
      const lines = Array.from({ length: 20_000 }, (_, i) => `m,nodeId=${nodeId},k=${i % 5} a=${i}.5,b=${b}i ${t0 + b * 20_000 + i}`).join('\n');
      await call(server.url, 'POST', '/v1/telemetry?db=bench&rp=autogen&precision=ms', { token, raw: lines, type: 'text/plain' });
    }
    const walMb = statSync(join(dir, 'gridkeeper.db-wal')).size / 1024 / 1024;
    server.child.kill('SIGKILL');
    await new Promise((r) => server.child.once('exit', r));
    server = await startServer(exe, ['serve'], { env, timeoutMs: 60_000 });
    const afterKill = server.startedMs;
    await server.stop();
    server = await startServer(exe, ['serve'], { env, timeoutMs: 60_000 });
    const clean = server.startedMs;
    await server.stop();
    return { walMb, afterKill, clean };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Modes interleaved over ROUNDS rounds, medians reported: the machine's other load drifts during a run.
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const runs = { FULL: [], NORMAL: [], OFF: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of Object.keys(runs)) runs[mode].push(await patchThroughput(mode));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rps = {};
for (const [mode, rs] of Object.entries(runs)) {
  rps[mode] = median(rs.map((r) => r.rps));
  console.log(`synchronous=${mode.padEnd(6)} PATCH, 16 connections, ${ROUNDS} x ${rs[0].requests}: median ${fmt(rps[mode], 0)} req/s `
    + `(${rs.map((r) => fmt(r.rps, 0)).join(', ')}), p50 ${fmt(median(rs.map((r) => r.p50)))} ms, p99 ${fmt(median(rs.map((r) => r.p99)))} ms, `
    + `errors ${rs.reduce((n, r) => n + r.errors, 0)}`);
}
console.log(`FULL / NORMAL throughput: ${fmt(rps.FULL / rps.NORMAL, 2)}`);
const rec = await recovery();
console.log(`restart after kill -9 with ${fmt(rec.walMb)} MB of WAL: ${fmt(rec.afterKill, 0)} ms to listening; clean restart: ${fmt(rec.clean, 0)} ms`);
