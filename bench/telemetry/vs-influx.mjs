// Telemetry benchmark (issues 7, 12): gridkeeper on each storage backend side by side with InfluxDB 1.x on the same
// machine, in the same run, on loopback, fed the same bytes.
//   ingest: 1,000,000 points (100 series x 10,000 timestamps 10 s apart, 5 fields: 3 floats and 2 integers) over
//           HTTP in 200 batches of 5,000 lines (ns timestamps, one client, batch i to each gridkeeper then to
//           InfluxDB, so background load hits all alike); points/s = points / sum of request times. The points are
//           folded into their shard tables after the answer (SQLite: by a worker thread; PostgreSQL: by the node, in the
//           background): that is waited for (untimed, /metrics) before the next store's request, and its time printed;
//           the sustained ingest below counts it. Then a sustained ingest: each store alone,
//           CLIENTS (2) clients sending the same batches into a new database, timed until a query returns the newest
//           point. Peak RSS of gridkeeper (VmHWM) after both.
//   query:  last 1,000 points of 3 fields of one series; a 1-day mean of one field; a batch of 1,000 queries (latest
//           point of one field within the last hour, 10 per series) in one request — medians of interleaved runs, first
//           after 3 warm-ups, then again after WARMUP more (steady state).
// Every store fsyncs every write (gridkeeper on SQLite synchronous=FULL or its WAL fdatasync, PostgreSQL's commit,
// InfluxDB wal-fsync-delay 0s). A 429 (the cost bucket) is waited out as its Retry-After says, outside the timed
// request, so the script runs on any machine.
// Run: node bench/telemetry/vs-influx.mjs     (env POINTS, RUNS, WARMUP, CLIENTS, INFLUXD, NO_BUILD=1, BACKENDS=sqlite,postgres,
//      SERVER_ENV='NAME=value …' for the servers)
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rssOf } from '../lib/load.mjs';
import { buildBundle, serverEnv, startServer } from '../lib/spawn.mjs';
import { ensureInfluxd, startInflux } from './influx.mjs';
import { energyDataset } from '../lib/energy-dataset.mjs';
import { benchDatabase } from '../lib/postgres.mjs';
import { timedRequest } from '../lib/http.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const POINTS = Number(process.env.POINTS ?? 1_000_000);
const SERIES = 100;
const BATCH = 5000;
const STEP_MS = 10_000;
const RUNS = Number(process.env.RUNS ?? 15);
/** clients of the sustained ingest */
const CLIENTS = Number(process.env.CLIENTS ?? 2);
/** requests of each query to each store before the steady-state round (the batch: at most 10, its cost is 2,511) */
const WARMUP = Number(process.env.WARMUP ?? 200);
const BACKENDS = (process.env.BACKENDS ?? 'sqlite,postgres').split(',');
const PASSWORD = 'bench-password-1';
const log = (msg) => console.error(`[bench] ${msg}`);
const fmt = (n, d = 1) => Number(n).toFixed(d);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/**
 * One HTTP request; retried once when a kept-alive socket was closed under it (the stores' writes are idempotent), and
 * after waiting out a 429's Retry-After (the wait is not part of the time returned).
 */
async function request(url, options = {}) {
  for (;;) {
    let r;
    try {
      r = await requestOnce(url, options);
    } catch (err) {
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') throw err;
      r = await requestOnce(url, options);
    }
    if (r.status !== 429) return r;
    const wait = Number(r.headers['retry-after'] ?? 1);
    log(`429 from ${new URL(url).pathname}: waiting ${wait} s (Retry-After)`);
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
  }
}

const requestOnce = (url, options) => timedRequest(agent, url, options);
async function expect(res, status, what) {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 Hz)
  } catch {
    return NaN;
  }
}

/** Until the server's fold worker has nothing left to fold (/metrics; 0 at once without one): the time it took. */
async function foldWait(g) {
  const t0 = performance.now();
  for (;;) {
    const m = /^gridkeeper_telemetry_staged_entries (\d+)/m.exec((await request(`${g.server.url}/metrics`)).text);
    if (m === null) return 0; // nothing folds after the answer (a build before staged writes)
    if (m[1] === '0') return performance.now() - t0;
    await new Promise((resolve) => setTimeout(resolve, 0.5));
  }
}

/**
 * Every batch sent by CLIENTS clients at once (each sends its next batch when answered); then `newest()` is asked
 * until it returns the newest point's time. Returns the wall-clock milliseconds of it all.
 */
async function sustainedIngest(write, newest) {
  const t0 = performance.now();
  let next = 0;
  const batches = POINTS / BATCH;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    for (let b = next++; b < batches; b = next++) await write(Buffer.from(batchBody(b)));
  }));
  const want = endMs - STEP_MS;
  for (let tries = 0; ; tries++) {
    const got = await newest();
    if (Date.parse(got) === want) break;
    if (tries > 1000) throw new Error(`the newest point is ${got}, not ${new Date(want).toISOString()}`);
  }
  return performance.now() - t0;
}

const { nodeId, endMs, batchBody } = energyDataset({ points: POINTS, series: SERIES, batch: BATCH, stepMs: STEP_MS });

/** A gridkeeper on one backend: started, its admin's token, premium tier, one device per nodeId in the root role. */
async function startGridkeeper(backend, dir) {
  const db = backend === 'postgres' ? await benchDatabase('gk_bench_telemetry') : undefined;
  const env = { ...serverEnv(), GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, ...(db ? { GRIDKEEPER_DATABASE_URL: db.url } : {}) };
  const server = await startServer(process.execPath, [join(root, 'dist', 'gridkeeper.cjs'), '--data-dir', dir], { env });
  const refresh = (await expect(request(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin@localhost', password: PASSWORD }) }), 200, 'login')).text;
  const token = (await expect(request(`${server.url}/auth/accesstoken`, { headers: { authorization: `Bearer ${refresh}` } }), 200, 'access token')).text;
  const auth = { authorization: `Bearer ${token}` };
  // The premium cost bucket (docs/api.md#rate-limit): the query rounds below spend about 40,000 of its 60,000 per minute.
  await expect(request(`${server.url}/v1/user/admin@localhost/tier`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'premium' }) }), 204, 'set tier');
  for (let s = 0; s < SERIES; s++) {
    await expect(request(`${server.url}/v1/device?roleId=1`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ properties: { nodeId: nodeId(s), nodeType: 'smartgridController' } }) }), 200, 'create device');
  }
  return {
    backend, label: `gridkeeper (${backend === 'postgres' ? 'PostgreSQL' : 'SQLite'})`, server, auth, db, ms: 0, cpu: 0, rss: undefined, foldMs: [],
    async stop() {
      await server.stop();
      await db?.drop();
    },
  };
}

async function main() {
  const influxd = ensureInfluxd(log);
  buildBundle(log);
  const dirs = [];
  const tempDir = (prefix) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
  const gks = [];
  let influx;
  try {
    for (const backend of BACKENDS) gks.push(await startGridkeeper(backend, tempDir('gk-tbench-')));
    influx = await startInflux(influxd, tempDir('influx-tbench-'));
    log(`${gks.map((g) => `${g.label} ${g.server.url}`).join(', ')}, InfluxDB ${influx.version} ${influx.url}`);
    await expect(request(`${influx.url}/query?q=${encodeURIComponent('CREATE DATABASE energy')}`, { method: 'POST' }), 200, 'create database');

    // ---- ingest
    log(`ingesting ${POINTS} points in ${POINTS / BATCH} batches into each store`);
    let inMs = 0;
    for (const g of gks) g.cpu = cpuSeconds(g.server.child.pid);
    let inCpu = cpuSeconds(influx.child.pid);
    for (let b = 0; b < POINTS / BATCH; b++) {
      const body = Buffer.from(batchBody(b));
      for (const g of gks) {
        g.ms += (await expect(request(`${g.server.url}/v1/telemetry?db=energy&rp=autogen`, { method: 'POST', headers: { ...g.auth, 'content-type': 'text/plain' }, body }), 204, `${g.label} write`)).ms;
        // The points acknowledged are folded into their shard tables after the answer (a worker thread on SQLite, the
        // node's folder on PostgreSQL):
        // waited for here, untimed, so that work does not run during the next store's timed request.
        g.foldMs.push(await foldWait(g));
      }
      inMs += (await expect(request(`${influx.url}/write?db=energy`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body }), 204, 'influx write')).ms;
    }
    for (const g of gks) g.cpu = cpuSeconds(g.server.child.pid) - g.cpu;
    inCpu = cpuSeconds(influx.child.pid) - inCpu;

    // ---- sustained ingest: each store on its own, CLIENTS clients sending the batches as fast as they are answered,
    // timed until the last point is acknowledged and a query returns it (into a database of its own).
    const sustained = { in: 0, gk: gks.map(() => 0) };
    for (const [k, g] of gks.entries()) {
      sustained.gk[k] = await sustainedIngest(async (body) => {
        await expect(request(`${g.server.url}/v1/telemetry?db=energy2&rp=autogen`, { method: 'POST', headers: { ...g.auth, 'content-type': 'text/plain' }, body }), 204, `${g.label} write`);
      }, async () => {
        const last = { select: ['power'], from: { measurement: 'energy', namespace: { version: '1', database: 'energy2', retentionPolicy: 'autogen' } },
          where: { tags: { nodeId: nodeId(SERIES - 1) } }, orderBy: 'DESC', limit: 1 };
        const r = await expect(request(`${g.server.url}/v1/telemetry/query`, { method: 'POST', headers: { ...g.auth, 'content-type': 'application/json' }, body: JSON.stringify(last) }), 200, `${g.label} query`);
        return JSON.parse(r.text).series[0].values[0][0];
      });
    }
    await expect(request(`${influx.url}/query?q=${encodeURIComponent('CREATE DATABASE energy2')}`, { method: 'POST' }), 200, 'create database');
    sustained.in = await sustainedIngest(async (body) => {
      await expect(request(`${influx.url}/write?db=energy2`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body }), 204, 'influx write');
    }, async () => {
      const r = await expect(request(`${influx.url}/query?db=energy2`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `q=${encodeURIComponent(`SELECT power FROM energy WHERE nodeId = '${nodeId(SERIES - 1)}' ORDER BY time DESC LIMIT 1`)}` }), 200, 'influx query');
      return JSON.parse(r.text).results[0].series[0].values[0][0];
    });
    for (const g of gks) g.rss = rssOf(g.server.child.pid);
    const inRss = rssOf(influx.child.pid);

    // ---- queries
    const ns = { version: '1', database: 'energy', retentionPolicy: 'autogen' };
    const from = { measurement: 'energy', namespace: ns };
    const one = nodeId(42);
    const dayFrom = endMs - 86_400_000;
    const hourFrom = endMs - 3_600_000;
    const gkQueries = {
      last1000: { select: ['power', 'voltage', 'current'], from, where: { tags: { nodeId: one } }, orderBy: 'DESC', limit: 1000 },
      mean1day: { select: [{ field: 'power', function: 'mean' }], from,
        where: { time: [{ operator: '>=', value: dayFrom }, { operator: '<', value: endMs }], tags: { nodeId: one } } },
      batch1000: Array.from({ length: 1000 }, (_, i) => ({ select: ['power'], from,
        where: { time: [{ operator: '>=', value: hourFrom }], tags: { nodeId: nodeId(i % SERIES) } }, orderBy: 'DESC', limit: 1 })),
    };
    const inQueries = {
      last1000: `SELECT power, voltage, current FROM energy WHERE nodeId = '${one}' ORDER BY time DESC LIMIT 1000`,
      mean1day: `SELECT mean(power) FROM energy WHERE nodeId = '${one}' AND time >= ${dayFrom}ms AND time < ${endMs}ms`,
      batch1000: Array.from({ length: 1000 }, (_, i) => `SELECT power FROM energy WHERE nodeId = '${nodeId(i % SERIES)}' AND time >= ${hourFrom}ms ORDER BY time DESC LIMIT 1`).join('; '),
    };
    const gkQuery = (g, body) => expect(request(`${g.server.url}/v1/telemetry/query`, { method: 'POST', headers: { ...g.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) }), 200, `${g.label} query`);
    const inQuery = (q) => expect(request(`${influx.url}/query?db=energy`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `q=${encodeURIComponent(q)}` }), 200, 'influx query');

    // The stores must agree before their speed is compared.
    const checkIn = JSON.parse((await inQuery(inQueries.last1000)).text);
    const inRows = checkIn.results[0].series[0].values;
    const inMean = JSON.parse((await inQuery(inQueries.mean1day)).text).results[0].series[0].values[0][1];
    for (const g of gks) {
      const gkRows = JSON.parse((await gkQuery(g, gkQueries.last1000)).text).series[0].values;
      if (gkRows.length !== 1000 || inRows.length !== 1000 || gkRows[0][1] !== inRows[0][1] || gkRows[999][3] !== inRows[999][3]) {
        throw new Error(`${g.label}: results differ: ${JSON.stringify(gkRows[0])} vs ${JSON.stringify(inRows[0])}`);
      }
      const gkMean = JSON.parse((await gkQuery(g, gkQueries.mean1day)).text).series[0].values[0][1];
      if (Math.abs(gkMean - inMean) > 1e-9 * Math.abs(inMean)) throw new Error(`${g.label}: means differ: ${gkMean} vs ${inMean}`);
    }

    // Two rounds per query: the first requests (after 3 warm-ups: what a dashboard's first load meets) and the steady
    // state (after WARMUP more of the same request to each store: what a dashboard refreshing all day meets, once
    // JavaScript's compiler has optimized the code path).
    const times = { first: {}, steady: {} };
    for (const name of Object.keys(gkQueries)) {
      for (const [round, warmups] of [['first', 3], ['steady', name === 'batch1000' ? Math.min(WARMUP, 10) : WARMUP]]) {
        const t = times[round][name] = { gk: gks.map(() => []), in: [] };
        for (let r = 0; r < warmups; r++) { for (const g of gks) await gkQuery(g, gkQueries[name]); await inQuery(inQueries[name]); }
        for (let r = 0; r < RUNS; r++) {
          for (const [k, g] of gks.entries()) t.gk[k].push((await gkQuery(g, gkQueries[name])).ms);
          t.in.push((await inQuery(inQueries[name])).ms);
        }
      }
    }

    // The HTTP floor of each server, for reading the query figures: an empty round trip from the same client.
    const floor = { gk: gks.map(() => []), in: [] };
    for (let r = 0; r < 200; r++) {
      for (const [k, g] of gks.entries()) floor.gk[k].push((await request(`${g.server.url}/healthz`)).ms);
      floor.in.push((await request(`${influx.url}/ping`)).ms);
    }

    const inPps = POINTS / (inMs / 1000);
    const sustainedIn = POINTS / (sustained.in / 1000);
    console.log(`telemetry benchmark: gridkeeper vs InfluxDB ${influx.version} (${POINTS} points, ${SERIES} series, 5 fields, batches of ${BATCH} lines)`);
    console.log(`  ingest                InfluxDB ${fmt(inPps, 0).padStart(8)} points/s, CPU ${fmt(inCpu, 2)} s (user + system, whole ingest)`);
    // aims: issue 7 (and 12 for PostgreSQL), then issue 18's for the embedded backend
    for (const g of gks) {
      const pps = POINTS / (g.ms / 1000);
      const aim = g.backend === 'postgres' ? '>= 0.5' : '>= 1.0; issue 18: >= 1.5';
      console.log(`  ingest                ${g.label.padEnd(24)} ${fmt(pps, 0).padStart(8)} points/s, CPU ${fmt(g.cpu, 2)} s   ratio ${fmt(pps / inPps, 2)}   (aim ${aim})`);
      if (g.foldMs.some((ms) => ms > 0)) {
        const sorted = g.foldMs.slice().sort((a, b) => a - b);
        console.log(`                        ${''.padEnd(24)} points folded ${fmt(median(sorted), 1)} ms after the answer (median; p90 ${fmt(sorted[Math.floor(sorted.length * 0.9)], 1)} ms, waited for before the next store's turn)`);
      }
    }
    console.log(`  sustained ingest, ${CLIENTS} clients, each store alone, until the last point is queryable:`);
    console.log(`                        InfluxDB ${fmt(sustainedIn, 0).padStart(8)} points/s (${fmt(sustained.in / 1000, 2)} s)`);
    for (const [k, g] of gks.entries()) {
      const pps = POINTS / (sustained.gk[k] / 1000);
      console.log(`                        ${g.label.padEnd(24)} ${fmt(pps, 0).padStart(8)} points/s (${fmt(sustained.gk[k] / 1000, 2)} s)   ratio ${fmt(pps / sustainedIn, 2)}`);
    }
    const labels = { last1000: 'last 1000 x 3 fields', mean1day: '1-day mean', batch1000: '1000-query batch' };
    for (const [round, byName] of Object.entries(times)) {
      console.log(`  queries, ${round === 'first' ? 'first requests (after 3 warm-ups)' : `steady state (after ${WARMUP} more of each, the batch ${Math.min(WARMUP, 10)})`}:`);
      for (const [name, t] of Object.entries(byName)) {
        const i = median(t.in);
        console.log(`  ${labels[name].padEnd(21)} InfluxDB ${fmt(i, 2).padStart(8)} ms (median of ${RUNS})`);
        for (const [k, g] of gks.entries()) {
          const m = median(t.gk[k]);
          console.log(`  ${labels[name].padEnd(21)} ${g.label.padEnd(24)} ${fmt(m, 2).padStart(8)} ms   ratio ${fmt(m / i, 2)}   (aim <= 1.0; issue 18: <= ${name === 'batch1000' ? '0.2' : '0.5'})`);
        }
      }
    }
    console.log(`  HTTP floor            InfluxDB GET /ping ${fmt(median(floor.in), 2)} ms; ${gks.map((g, k) => `${g.label} GET /healthz ${fmt(median(floor.gk[k]), 2)} ms`).join('; ')} (median of 200)`);
    console.log(`  peak RSS              ${gks.map((g) => `${g.label} ${fmt(g.rss.peak)} MB`).join('; ')} (InfluxDB ${fmt(inRss.peak)} MB)`);
  } finally {
    agent.destroy();
    for (const g of gks) await g.stop();
    await influx?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();
