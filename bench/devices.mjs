// Issue 5 figures on a 10,001-role / 100,000-device / 200,000-monitors installation (bench/lib/devices-installation.mjs):
//  - POST /v1/device/query for a user who can read 10,000 devices: median latency (aim < 150 ms), sequential requests;
//  - PATCH of one property with 16 connections, requests/s as a ratio of /healthz in the same run (aim >= 0.25);
//  - peak RSS of the server.
// The server is a separate process on loopback (dist/gridkeeper when GK_EXE is set, else the sources through the
// test loader). Every load is bounded by a request count and a time cap. Run: node bench/devices.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, load, percentile, rssOf } from './lib/load.mjs';
import { accessToken, call } from './lib/http.mjs';
import { startServer } from './lib/spawn.mjs';
import { writeDevicesInstallation } from './lib/devices-installation.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const QUERY_RUNS = Number(process.env.QUERY_RUNS ?? 40);
const PATCH_REQUESTS = Number(process.env.PATCH_REQUESTS ?? 6000);
const ADMIN_PASSWORD = 'bench-password-1';
const USER_PASSWORD = 'bench-user-password-1';
const fmt = (n, d = 1) => Number(n).toFixed(d);

function server(dir) {
  const env = { GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_DATA_DIR: dir };
  if (process.env.GK_EXE) return startServer(process.env.GK_EXE, ['serve'], { env, timeoutMs: 60_000 });
  return startServer(process.execPath, ['--import', join(root, 'test/support/register.mjs'), join(root, 'src/main.ts'), 'serve'], { env, timeoutMs: 60_000 });
}

/**
 * Sequential requests (one at a time): latency of one query as a client sees it, and the server's CPU time per
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
    const text = await res.text();
    if (res.status !== 200 && res.status !== 204) throw new Error(`query: ${res.status} ${text.slice(0, 300)}`);
    if (i >= 3) times.push(performance.now() - t0); // the first three warm caches
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

    const gk = await server(dir);
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
    console.log(JSON.stringify({ layout: { roles: layout.roles, devices: layout.devices, monitors: layout.monitors }, query, patchRps, patchCpuPerReq, healthRps, healthCpuPerReq, ratio: patchRps / healthRps, rssPeakMb: mem.peak }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
