// Telemetry reads on PostgreSQL, each build on its own (issue 18): the benchmark data set (1M points, 100 series, 5
// fields; bench/lib/energy-dataset.mjs) written through a build into a fresh database, then the queries of
// bench/telemetry/vs-influx.mjs — the last 1,000 points of 3 fields and a 1-day mean of one series — timed one after
// another (medians), with the node's CPU per query (user + system of every thread, from /proc), and the last 1,000
// from CLIENTS clients at once (queries/s: where the node's CPU is the limit; measured first, while the query bucket
// is full). A 429 is waited out (Retry-After) and not timed. Builds listed in GK (comma-separated .cjs files, default dist/gridkeeper.cjs) run in turn, ROUNDS times,
// so that a before and an after share the machine's moods.
// Run: node bench/telemetry/pg-reads.mjs   (env GK, ROUNDS (2), N (300), CLIENTS (4), PER_CLIENT (60),
//      GRIDKEEPER_TEST_DATABASE_URL for another server)
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../lib/spawn.mjs';
import { energyDataset } from '../lib/energy-dataset.mjs';
import { benchDatabase } from '../lib/postgres.mjs';
import { timedRequest } from '../lib/http.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const BUILDS = (process.env.GK ?? join(root, 'dist', 'gridkeeper.cjs')).split(',');
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const N = Number(process.env.N ?? 300);
const CLIENTS = Number(process.env.CLIENTS ?? 4);
const PER_CLIENT = Number(process.env.PER_CLIENT ?? 60);
const POINTS = 1_000_000;
const SERIES = 100;
const PASSWORD = 'bench-password-1';
const { nodeId, endMs, batchBody } = energyDataset({ points: POINTS, series: SERIES, batch: 5000, stepMs: 10_000 });
const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS + 1 });
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];

const request = (url, options) => timedRequest(agent, url, options);

/** The answer of `status`; a 429 waited out (its Retry-After) and asked again, its time not counted. */
async function expect(url, options, status, what) {
  for (;;) {
    const r = await request(url, options);
    if (r.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(r.headers['retry-after'] ?? 1)));
      continue;
    }
    if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    return r;
  }
}

/** CPU milliseconds (user + system, every thread) a process has used so far. */
function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function measure(build) {
  const db = await benchDatabase('gk_bench_pg_reads');
  const dir = mkdtempSync(join(tmpdir(), 'gk-pg-reads-'));
  const server = await startServer(process.execPath, [build, '--data-dir', dir], { env: { GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_DATABASE_URL: db.url } });
  try {
    const json = { 'content-type': 'application/json' };
    const refresh = (await expect(`${server.url}/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ username: 'admin@localhost', password: PASSWORD }) }, 200, 'login')).text;
    const token = (await expect(`${server.url}/auth/accesstoken`, { headers: { authorization: `Bearer ${refresh}` } }, 200, 'token')).text;
    const auth = { authorization: `Bearer ${token}` };
    await expect(`${server.url}/v1/user/admin@localhost/tier`, { method: 'PUT', headers: { ...auth, ...json }, body: JSON.stringify({ tier: 'premium' }) }, 204, 'tier');
    for (let s = 0; s < SERIES; s++) {
      await expect(`${server.url}/v1/device?roleId=1`, { method: 'POST', headers: { ...auth, ...json },
        body: JSON.stringify({ properties: { nodeId: nodeId(s), nodeType: 'smartgridController' } }) }, 200, 'device');
    }
    for (let b = 0; b < POINTS / 5000; b++) {
      await expect(`${server.url}/v1/telemetry?db=energy`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: batchBody(b) }, 204, 'write');
    }
    const from = { namespace: { version: '1', database: 'energy', retentionPolicy: 'autogen' }, measurement: 'energy' };
    const one = nodeId(42);
    const queries = {
      last1000: { select: ['power', 'voltage', 'current'], from, where: { tags: { nodeId: one } }, orderBy: 'DESC', limit: 1000 },
      mean1day: { select: [{ field: 'power', function: 'mean' }], from, where: { time: [{ operator: '>=', value: endMs - 86_400_000 }, { operator: '<', value: endMs }], tags: { nodeId: one } } },
    };
    const query = (body) => expect(`${server.url}/v1/telemetry/query`, { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify(body) }, 200, 'query');
    const out = {};
    // clients at once first, while the query bucket is full (a wait for Retry-After would count in queries/s)
    for (let i = 0; i < 20; i++) await query(queries.last1000);
    const t0 = performance.now();
    const cpu0 = cpuMs(server.child.pid);
    await Promise.all(Array.from({ length: CLIENTS }, async () => { for (let i = 0; i < PER_CLIENT; i++) await query(queries.last1000); }));
    out.parallel = { perSecond: (CLIENTS * PER_CLIENT) / ((performance.now() - t0) / 1000), cpuMs: (cpuMs(server.child.pid) - cpu0) / (CLIENTS * PER_CLIENT) };
    for (const [name, body] of Object.entries(queries)) {
      for (let i = 0; i < 50; i++) await query(body); // warm-up
      const times = [];
      const cpu0 = cpuMs(server.child.pid);
      for (let i = 0; i < N; i++) times.push((await query(body)).ms);
      out[name] = { ms: median(times), cpuMs: (cpuMs(server.child.pid) - cpu0) / N };
    }
    return out;
  } finally {
    await server.stop();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`telemetry reads on PostgreSQL: ${POINTS} points, medians of ${N}; ${CLIENTS} clients x ${PER_CLIENT} for queries/s`);
for (let r = 1; r <= ROUNDS; r++) {
  for (const build of BUILDS) {
    const m = await measure(build);
    console.log(`round ${r}  ${build}`);
    console.log(`  last 1000 x 3 fields  ${m.last1000.ms.toFixed(2)} ms  node CPU ${m.last1000.cpuMs.toFixed(2)} ms/query`);
    console.log(`  1-day mean            ${m.mean1day.ms.toFixed(2)} ms  node CPU ${m.mean1day.cpuMs.toFixed(2)} ms/query`);
    console.log(`  last 1000, ${CLIENTS} clients   ${m.parallel.perSecond.toFixed(1)} queries/s  node CPU ${m.parallel.cpuMs.toFixed(2)} ms/query`);
  }
}
