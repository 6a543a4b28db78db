// Issue 5 figures on a 10,001-role / 100,000-device / 200,000-monitors installation (bench/lib/devices-installation.mjs):
//  - POST /v1/device/query for a user who can read 10,000 devices: median latency (aim < 150 ms), sequential requests;
//  - PATCH of one property with 16 connections, requests/s as a ratio of /healthz in the same run (aim >= 0.25);
//  - peak RSS of the server.
// The server is a separate process on loopback (dist/gridkeeper when GK_EXE is set, else the sources through the
// test loader). Every load is bounded by a request count and a time cap. Both storage backends in one run: the embedded
// SQLite database, then PostgreSQL (GRIDKEEPER_TEST_DATABASE_URL's server; the same installation moved there with
// gridkeeper copy's code). Run: node bench/devices.mjs   (BACKENDS=sqlite or BACKENDS=postgres for one)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { cpuMs, load, percentile, rssOf } from './lib/load.mjs';
import { accessToken, call } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';
import { benchDatabase } from './lib/postgres.mjs';
import { writeDevicesInstallation } from './lib/devices-installation.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const QUERY_RUNS = Number(process.env.QUERY_RUNS ?? 40);
const PATCH_REQUESTS = Number(process.env.PATCH_REQUESTS ?? 6000);
const ADMIN_PASSWORD = 'bench-password-1';
const USER_PASSWORD = 'bench-user-password-1';
const fmt = (n, d = 1) => Number(n).toFixed(d);

const BACKENDS = (process.env.BACKENDS ?? 'sqlite,postgres').split(',');

function server(dir, extraEnv = {}) {
  const env = { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir, ...extraEnv };
  if (process.env.GK_EXE) return startServer(process.env.GK_EXE, ['serve'], { env, timeoutMs: 60_000 });
  return startServer(process.execPath, ['--import', join(root, 'test/support/register.mjs'), join(root, 'src/main.ts'), 'serve'], { env, timeoutMs: 60_000 });
}

/**
 * Sequential requests (one at a time): latency of one query as a client sees it (until its last byte), and the server's CPU time per
 * request (robust against other load on the machine, which inflates wall-clock latency but not CPU time).
 */
async function latency(url, pid, token, body, runs = QUERY_RUNS) {
  const times = [];
  let cpu0 = 0;
  let bytes = 0;
  let count = 0;
  for (let i = 0; i < runs + 3; i++) {
    if (i === 3) cpu0 = cpuMs(pid);
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/device/query`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    // Timed until the answer's last byte has arrived. Decoding it into one JavaScript string is the client's own work
    // and not timed: V8 builds a string of megabytes slowly (7.3 MB: 21-27 ms on the reference machine), which the
    // figures up to issue 18's third step included.
    const raw = Buffer.from(await res.arrayBuffer());
    if (i >= 3) times.push(performance.now() - t0); // the first three warm caches
    const text = raw.toString('utf8');
    if (res.status !== 200 && res.status !== 204) throw new Error(`query: ${res.status} ${text.slice(0, 300)}`);
    bytes = text.length;
    count = res.status === 204 ? 0 : JSON.parse(text).device.length;
  }
  const cpu = (cpuMs(pid) - cpu0) / runs;
  times.sort((a, b) => a - b);
  return { devices: count, kb: bytes / 1024, p50: percentile(times, 50), p90: percentile(times, 90), max: times[times.length - 1], cpu };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'gk-bench-devices-'));
  try {
    // first start: migrations, root role, admin; then the installation is written into the stopped database
    const first = await server(dir);
    await first.stop();
    const t0 = performance.now();
    const layout = writeDevicesInstallation(join(dir, 'gridkeeper.db'));
    const generatedS = (performance.now() - t0) / 1000;

    const results = {};
    for (const backend of BACKENDS) {
      let dropDatabase = async () => {};
      let extraEnv = {};
      if (backend === 'postgres') {
        const moved = await intoPostgres(join(dir, 'gridkeeper.db'));
        dropDatabase = moved.drop;
        extraEnv = { GRIDKEEPER_DATABASE_URL: moved.url };
        console.log(`\ncopied into PostgreSQL in ${fmt(moved.seconds)} s`);
      }
      try {
        results[backend] = await measure(dir, layout, backend, extraEnv, generatedS);
      } finally {
        await dropDatabase();
      }
    }
    if (results.sqlite && results.postgres) {
      const r = (k) => fmt(results.postgres.query[k].p50 / results.sqlite.query[k].p50, 2);
      console.log(`\nPostgreSQL / SQLite: device query p50 operatorAll ${r('operatorAll')}x, operatorPage ${r('operatorPage')}x, skipHash ${r('operatorSkipHash')}x; `
        + `PATCH req/s ${fmt(results.postgres.patchRps / results.sqlite.patchRps, 2)}x; PATCH/healthz ${fmt(results.sqlite.ratio, 3)} vs ${fmt(results.postgres.ratio, 3)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The installation of the SQLite file moved into a fresh PostgreSQL database by `gridkeeper copy` itself. */
async function intoPostgres(file) {
  const { default: pg } = await import('pg');
  const database = await benchDatabase(`gk_bench_devices_${process.pid}`);
  const url = database.url;
  const t0 = performance.now();
  const [command, ...args] = process.env.GK_EXE ? [process.env.GK_EXE] : [process.execPath, '--import', join(root, 'test/support/register.mjs'), join(root, 'src/main.ts')];
  const copied = spawnSync(command, [...args, 'copy', '--from', file, '--to', url], { encoding: 'utf8', env: { ...process.env, GRIDKEEPER_DATA_DIR: dirname(file) } });
  if (copied.status !== 0) throw new Error(`copy failed: ${copied.stderr}`);
  const analyze = new pg.Client({ connectionString: url });
  await analyze.connect();
  await analyze.query('ANALYZE');
  await analyze.end();
  return { url, seconds: (performance.now() - t0) / 1000, drop: database.drop };
}

async function measure(dir, layout, backend, extraEnv, generatedS) {
  {
    const gk = await server(dir, extraEnv);
    const admin = await accessToken(gk.url, 'admin@localhost', ADMIN_PASSWORD);
    // members through the API (creates the users with a password)
    const operator = 'operator@bench.test';
    const reader = 'reader@bench.test';
    await call(gk.url, 'PUT', `/v1/role/${layout.companyRoles[0]}/member?userEmail=${operator}&password=${USER_PASSWORD}`, { token: admin, body: {} });
    await call(gk.url, 'PUT', `/v1/role/${layout.readersRoles[1]}/member?userEmail=${reader}&password=${USER_PASSWORD}`, { token: admin, body: {} });
    const operatorToken = await accessToken(gk.url, operator, USER_PASSWORD);
    const readerToken = await accessToken(gk.url, reader, USER_PASSWORD);
    const idle = rssOf(gk.child.pid);

    const query = {
      operatorAll: await latency(gk.url, gk.child.pid, operatorToken, {}),
      readerAll: await latency(gk.url, gk.child.pid, readerToken, {}),
      operatorFiltered: await latency(gk.url, gk.child.pid, operatorToken, { filter: { nodeType: ['battery'] }, conditions: { isActive: [true] } }),
      operatorPage: await latency(gk.url, gk.child.pid, operatorToken, { limit: 100, afterId: 5000 }),
      readerFields: await latency(gk.url, gk.child.pid, readerToken, { fields: ['name'] }),
    };
    const hash = await (async () => {
      const full = JSON.parse(await call(gk.url, 'POST', '/v1/device/query', { token: operatorToken, body: {} }));
      const { createHash } = await import('node:crypto');
      return createHash('sha256').update(full.device.map((d) => d.lastUpdate).join('\n')).digest('base64');
    })();
    query.operatorSkipHash = await latency(gk.url, gk.child.pid, operatorToken, { skipHash: hash });

    // PATCH one property of one device vs /healthz; two interleaved rounds, 16 connections, bounded
    const device = 1 + Math.floor(layout.devices / 20); // a company-1 device the operator manages
    let n = 0;
    const patch = {
      url: `${gk.url}/v1/device/${device}`, method: 'PATCH', connections: 16, requests: PATCH_REQUESTS, seconds: 15,
      headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
      body: () => JSON.stringify([{ op: 'replace', path: '/name', value: `renamed ${++n}` }]),
    };
    const health = { url: `${gk.url}/healthz`, connections: 16, requests: PATCH_REQUESTS * 4, seconds: 15 };
    await load({ ...patch, requests: 500 }); // warm-up
    await load({ ...health, requests: 2000 });
    const rounds = [];
    let patchCpu = 0;
    let healthCpu = 0;
    for (let i = 0; i < 2; i++) {
      const c0 = cpuMs(gk.child.pid);
      const p = await load(patch);
      const c1 = cpuMs(gk.child.pid);
      const h = await load(health);
      healthCpu += cpuMs(gk.child.pid) - c1;
      patchCpu += c1 - c0;
      rounds.push({ patch: p, health: h });
    }
    const patchCpuPerReq = patchCpu / rounds.reduce((s, r) => s + r.patch.requests, 0);
    const healthCpuPerReq = healthCpu / rounds.reduce((s, r) => s + r.health.requests, 0);
    const patchRps = rounds.reduce((s, r) => s + r.patch.rps, 0) / rounds.length;
    const healthRps = rounds.reduce((s, r) => s + r.health.rps, 0) / rounds.length;
    const errors = rounds.reduce((s, r) => s + r.patch.errors + r.health.errors, 0);
    const mem = rssOf(gk.child.pid);
    await gk.stop();

    console.log(`\n=== ${backend} ===`);
    const row = (name, q) => `  ${name.padEnd(18)} ${String(q.devices).padStart(6)} devices ${fmt(q.kb, 0).padStart(6)} KiB   p50 ${fmt(q.p50).padStart(6)} ms   p90 ${fmt(q.p90).padStart(6)} ms   max ${fmt(q.max).padStart(6)} ms   server CPU ${fmt(q.cpu).padStart(6)} ms/req`;
    console.log(`installation: ${layout.roles} roles, ${layout.devices} devices, ${layout.monitors} monitors relations (written in ${fmt(generatedS)} s)`);
    console.log(`POST /v1/device/query, ${QUERY_RUNS} sequential requests each (aim: operator p50 < 150 ms)`);
    for (const [name, q] of Object.entries(query)) console.log(row(name, q));
    console.log(`PATCH one property, 16 connections: ${fmt(patchRps, 0)} req/s (p50 ${fmt(rounds[1].patch.p50, 2)} ms, p99 ${fmt(rounds[1].patch.p99, 2)} ms)`);
    console.log(`  server CPU per PATCH: ${fmt(patchCpuPerReq, 3)} ms`);
    console.log(`/healthz, 16 connections:           ${fmt(healthRps, 0)} req/s`);
    console.log(`  server CPU per /healthz: ${fmt(healthCpuPerReq, 3)} ms`);
    console.log(`ratio PATCH / healthz: ${fmt(patchRps / healthRps, 3)} (aim >= 0.25); by server CPU per request: ${fmt(healthCpuPerReq / patchCpuPerReq, 3)}; non-2xx or errors: ${errors}`);
    console.log(`server RSS: idle after start ${fmt(idle.rss, 0)} MB, now ${fmt(mem.rss, 0)} MB, peak ${fmt(mem.peak, 0)} MB`);
    const result = { backend, layout: { roles: layout.roles, devices: layout.devices, monitors: layout.monitors }, query, patchRps, patchCpuPerReq, healthRps, healthCpuPerReq, ratio: patchRps / healthRps, rssPeakMb: mem.peak };
    console.log(JSON.stringify(result));
    return result;
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
