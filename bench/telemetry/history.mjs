// History benchmark (issue 38): a month of a fleet's telemetry as installers keep it, in gridkeeper on each backend
// beside InfluxDB 1.x, in one run, on loopback, fed the same bytes (lib/history-dataset.mjs: DEVICES home energy
// systems, one point every 10 s, three powers, a state of charge, an energy counter and an inverter state).
//   ingest:  each store alone, CLIENTS clients sending batches of BATCH lines as fast as they are answered; gridkeeper
//            is timed until every window is sealed into blocks (/metrics), InfluxDB until the last write is answered;
//            gridkeeper's ingests begin once InfluxDB's compactions are over (its files still for 10 s). The CPU that
//            each ingest took (the store's process, PostgreSQL's processes, this client) over the machine's cores is
//            the least time that work could take however it were split between threads.
//   disk:    bytes per value once sealed (gridkeeper: the SQLite file and its WAL after a checkpoint; PostgreSQL: the
//            telemetry tables with their indexes and TOAST) and once compacted (InfluxDB: data and wal directories;
//            cold shards are compacted after a few seconds here), each waited for until it stops changing for 10 s.
//   queries: InfluxQL through each store's /query for one device, medians of RUNS after WARMUP: a day of 1-minute means
//            of 3 fields, a week of 10-minute means, a month of daily spread of the counter, a month of hourly maxima,
//            the fleet's hourly means per device over a day, and last() with no time range. Answers are compared first.
//            Before each run the bench waits until every gridkeeper's bucket holds the query (a query with no time range
//            is charged a worst-case range), then times InfluxDB and each gridkeeper back to back, after the same pause,
//            and then a bare node:http server answering InfluxDB's bytes at once (the floor of any request here).
//   beside:  a light query (the last state of charge of the data's last hour) p50/p99 alone, then while 2 clients read
//            a raw week of one device (60,480 points, every field) in a loop.
//   memory:  peak RSS of each server.
// Run: node bench/telemetry/history.mjs   (env DAYS, DEVICES, CLIENTS, RUNS, WARMUP, LIGHT, INFLUXD, NO_BUILD=1,
//      BACKENDS=sqlite,postgres, SERVER_FLAGS, SERVER_ENV, SERVER_LOG=<file>, QUERIES, PACE_IDLE=1,
//      GRIDKEEPER_BUNDLE, KEEP=1)
import http from 'node:http';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { cpuMs, percentile, postgresCpu, postgresDelta, rssOf } from '../lib/load.mjs';
import { buildBundle, serverEnv, startServer } from '../lib/spawn.mjs';
import { benchDatabase } from '../lib/postgres.mjs';
import { timedRequest } from '../lib/http.mjs';
import { historyDataset } from '../lib/history-dataset.mjs';
import { startFloorServer } from '../lib/floor-server.mjs';
import { ensureInfluxd, startInflux } from './influx.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const DAY = 86_400_000;
const DAYS = Number(process.env.DAYS ?? 30);
const DEVICES = Number(process.env.DEVICES ?? 20);
const BATCH = 5000;
const CLIENTS = Number(process.env.CLIENTS ?? 2);
const RUNS = Number(process.env.RUNS ?? 15);
const WARMUP = Number(process.env.WARMUP ?? 20);
const LIGHT = Number(process.env.LIGHT ?? 300);
const BACKENDS = (process.env.BACKENDS ?? 'sqlite,postgres').split(',').filter(Boolean);
const PASSWORD = 'bench-password-1';
/** node flags for the gridkeeper servers, e.g. SERVER_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile them */
const SERVER_FLAGS = (process.env.SERVER_FLAGS ?? '').split(' ').filter(Boolean);
const SERVER_ENV = serverEnv();
/** the bundle the servers run (GRIDKEEPER_BUNDLE: another build's, to compare two builds on the same data) */
const EXECUTABLE = process.env.GRIDKEEPER_BUNDLE ?? join(root, 'dist', 'gridkeeper.cjs');
/** KEEP=1: leave the data directories (their paths are logged), e.g. to start a server on a sealed month again */
const KEEP = process.env.KEEP === '1';
/** PACE_IDLE=1: the servers stay idle while a query waits for gridkeeper's bucket (see paced) */
const PACE_IDLE = process.env.PACE_IDLE === '1';
/** QUERIES=last,monthMax: time only these of the queries */
const QUERIES = process.env.QUERIES?.split(',');
const log = (msg) => console.error(`[history] ${msg}`);
const fmt = (n, d = 1) => Number(n).toFixed(d);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// the month ends at the start of yesterday (UTC): every window of it is closed, and sealed by gridkeeper at once
const endOfData = Math.floor(Date.now() / DAY) * DAY - DAY;
const data = historyDataset({ devices: DEVICES, days: DAYS, startMs: endOfData - DAYS * DAY });
const VALUES = data.points * data.fields.length;

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
async function request(url, options = {}) {
  for (;;) {
    let r;
    try {
      r = await timedRequest(agent, url, options);
    } catch (err) {
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') throw err;
      r = await timedRequest(agent, url, options);
    }
    if (r.status !== 429) return r;
    await new Promise((resolve) => setTimeout(resolve, Number(r.headers['retry-after'] ?? 1) * 1000));
  }
}
async function expect(res, status, what) {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}
/**
 * Waits until every gridkeeper's bucket holds its next query (a query with no time range is charged a worst-case
 * range, so a loop of them runs into 429). Both servers are then timed back to back, InfluxDB's query first. While
 * the bench waits, every server answers a trivial request (InfluxDB's /ping, gridkeeper's /healthz) every 20 ms, as
 * an appliance with other clients would: a request after seconds of idleness is slower on any server (the machine
 * wakes), and the wait is the bucket's, not the query's. PACE_IDLE=1 leaves them idle instead.
 */
async function paced(gks, influxUrl, floorUrl) {
  const until = Math.max(0, ...gks.map((g) => g.readyAt));
  while (performance.now() < until) {
    if (!PACE_IDLE) {
      await request(`${influxUrl}/ping`);
      for (const g of gks) await request(`${g.server.url}/healthz`);
      await request(`${floorUrl}/healthz`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(20, until - performance.now()))));
  }
}
const json = (headers) => ({ ...headers, 'content-type': 'application/json' });

function bytesUnder(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(p) : statSync(p).size;
  }
  return total;
}

/** A gridkeeper on one backend with a device per nodeId, and tokens of READERS users for the readers (each its bucket). */
async function startGridkeeper(backend, dir) {
  const db = backend === 'postgres' ? await benchDatabase('gk_bench_history') : undefined;
  const env = { ...SERVER_ENV, GRIDKEEPER_ADMIN_PASSWORD: PASSWORD, GRIDKEEPER_TELEMETRY_SEAL_INTERVAL: '2s', ...(db ? { GRIDKEEPER_DATABASE_URL: db.url } : {}) };
  const server = await startServer(process.execPath, [...SERVER_FLAGS, EXECUTABLE, '--data-dir', dir], { env });
  // access tokens last 15 minutes and a run takes longer: each is renewed every 5 minutes
  const login = async (username, password) => {
    const refresh = (await expect(request(`${server.url}/auth/login`, { method: 'POST', headers: json({}), body: JSON.stringify({ username, password }) }), 200, 'login')).text;
    const fresh = async () => (await expect(request(`${server.url}/auth/accesstoken`, { headers: { authorization: `Bearer ${refresh}` } }), 200, 'token')).text;
    let access = await fresh();
    setInterval(() => { fresh().then((t) => { access = t; }, (err) => log(`token renewal failed: ${err.message}`)); }, 300_000).unref();
    return { get authorization() { return `Bearer ${access}`; } };
  };
  const auth = await login('admin@localhost', PASSWORD);
  await expect(request(`${server.url}/v1/user/admin@localhost/tier`, { method: 'PUT', headers: json(auth), body: JSON.stringify({ tier: 'premium' }) }), 204, 'tier');
  for (let d = 0; d < DEVICES; d++) {
    await expect(request(`${server.url}/v1/device?roleId=1`, { method: 'POST', headers: json(auth),
      body: JSON.stringify({ properties: { nodeId: data.nodeId(d), nodeType: 'smartgridController' } }) }), 200, 'device');
  }
  // readers of raw weeks are several users: one premium bucket allows ~100 raw weeks a minute, the readers ask more
  const readers = [];
  for (let r = 0; r < 8; r++) {
    const email = `reader${r}@bench`;
    await expect(request(`${server.url}/v1/role/1/member?userEmail=${email}&password=${PASSWORD}`, { method: 'PUT', headers: json(auth), body: '{}' }), 200, 'member');
    await expect(request(`${server.url}/v1/user/${email}/tier`, { method: 'PUT', headers: json(auth), body: JSON.stringify({ tier: 'premium' }) }), 204, 'tier');
    readers.push(await login(email, PASSWORD));
  }
  const label = `gridkeeper (${backend === 'postgres' ? 'PostgreSQL' : 'SQLite'})`;
  const metric = async (name, labels = '') => {
    const text = (await request(`${server.url}/metrics`)).text;
    const m = new RegExp(`^${name}${labels.replace(/[{}"]/g, '\\$&')} (\\S+)`, 'm').exec(text);
    return m === null ? 0 : Number(m[1]);
  };
  return {
    backend, label, server, auth, readers, db, dir,
    write: (body) => expect(request(`${server.url}/write?db=history`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body }), 204, `${label} write`),
    query: (q, headers = auth) => expect(request(`${server.url}/query?db=history&epoch=ms`, { method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: `q=${encodeURIComponent(q)}` }), 200, `${label} query`),
    /** a query whose charge is noted, so that paced() can wait until the bucket holds the next one */
    async charged(q) {
      const r = await this.query(q);
      const remaining = Number(r.headers['x-ratelimit-remaining']);
      const cost = Number(r.headers['x-ratelimit-cost']);
      const policy = /q=(\d+);w=(\d+)/.exec(String(r.headers['ratelimit-policy']));
      this.readyAt = remaining >= cost || policy === null ? 0 : performance.now() + 1000 * (cost - remaining) / (Number(policy[1]) / Number(policy[2])) + 50;
      return r;
    },
    readyAt: 0,
    /** until nothing is staged and no closed window waits to be sealed */
    async settled() {
      for (;;) {
        const staged = await metric('gridkeeper_telemetry_staged_entries');
        const due = await metric('gridkeeper_telemetry_windows_unsealed', '{due="true"}');
        if (staged === 0 && due === 0) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async diskBytes() {
      if (backend === 'sqlite') {
        const file = join(dir, 'gridkeeper.db');
        return ['', '-wal'].reduce((n, suffix) => { try { return n + statSync(file + suffix).size; } catch { return n; } }, 0);
      }
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS n FROM pg_class c
          JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = current_schema() AND c.relkind = 'r' AND c.relname LIKE 'telemetry\\_%'`);
        return Number(rows[0].n);
      } finally { await client.end(); }
    },
    async stop() { await server.stop(); await (KEEP ? db?.close() : db?.drop()); },
  };
}

/**
 * CPU seconds spent from now until the returned function is called: by the process `pid` (every thread), by
 * PostgreSQL's processes (every one, its background writers included; none without `database`) and by this client.
 */
function ingestCpuOf(pid, database) {
  const store = cpuMs(pid);
  const postgres = database === undefined ? undefined : postgresCpu(database);
  const client = process.cpuUsage();
  return () => {
    const c = process.cpuUsage(client);
    return {
      store: (cpuMs(pid) - store) / 1000,
      postgres: postgres === undefined ? 0 : postgresDelta(postgres, postgresCpu(database)).all,
      client: (c.user + c.system) / 1e6,
    };
  };
}

/** The server's peak RSS so far and its RSS now, noted after a phase (the peak is monotonic: the phase where it grows made it). */
function phasePeak(g, what) {
  const { rss, peak } = rssOf(g.server.child.pid);
  (g.peaks ??= []).push([what, peak, rss]);
}

/**
 * The data set's batches as the bytes sent, made once before any store is timed: made while sending, they took about
 * half of a core for as long as the fastest store ingested (4.7 s of 10 days), for every store alike.
 */
let bodies;
function batchBodies() {
  if (bodies === undefined) {
    const t0 = performance.now();
    bodies = Array.from(data.batches(BATCH), (text) => Buffer.from(text));
    log(`${bodies.length} batches (${fmt(bodies.reduce((n, b) => n + b.length, 0) / 1e6)} MB) made in ${fmt((performance.now() - t0) / 1000, 2)} s, before the timed ingests`);
  }
  return bodies;
}

/** Sends every batch of the data set with CLIENTS clients, each sending its next batch when answered. */
async function ingest(write) {
  const all = batchBodies();
  let next = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < all.length) await write(all[next++]);
  }));
}

/** The bytes `size()` gives once they stop changing for `quietMs`. */
async function untilStill(size, quietMs = 10_000) {
  let last = -1;
  let since = Date.now();
  for (;;) {
    const now = await size();
    if (now !== last) { last = now; since = Date.now(); }
    if (Date.now() - since >= quietMs) return now;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** p50 and p99 of `n` sequential calls of `fn` (ms each). */
async function latencies(fn, n) {
  const ms = [];
  for (let i = 0; i < n; i++) ms.push(await fn());
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

/** A parsed InfluxQL answer with floats rounded to 9 significant digits (sums over blocks add in another order). */
function comparable(text) {
  return JSON.stringify(JSON.parse(text), (_, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v));
}

async function main() {
  const influxd = ensureInfluxd(log);
  buildBundle(log);
  const dirs = [];
  const tempDir = (prefix) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
  const gks = [];
  let influx;
  let floor;
  try {
    for (const backend of BACKENDS) gks.push(await startGridkeeper(backend, tempDir('gk-history-')));
    const influxDir = tempDir('influx-history-');
    influx = await startInflux(influxd, influxDir, { cacheSnapshotCold: '2s', compactFullCold: '5s' });
    await expect(request(`${influx.url}/query?q=${encodeURIComponent('CREATE DATABASE history')}`, { method: 'POST' }), 200, 'create database');
    log(`${DAYS} days x ${DEVICES} devices = ${data.points} points, ${VALUES} values; ${gks.map((g) => g.label).join(', ')}, InfluxDB ${influx.version}`);

    // ---- ingest, each store alone
    const ingestMs = {};
    const ingestCpu = {};
    batchBodies();
    const t0 = performance.now();
    const influxCpu = ingestCpuOf(influx.child.pid, undefined);
    await ingest((body) => expect(request(`${influx.url}/write?db=history`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body }), 204, 'influx write'));
    ingestMs.influx = performance.now() - t0;
    ingestCpu.influx = influxCpu();
    log(`InfluxDB ingested in ${fmt(ingestMs.influx / 1000, 2)} s`);
    // InfluxDB compacts what it took after answering the last write: left to run beside gridkeeper's timed ingest, it
    // takes a share of the cores from it. Each store ingests alone: gridkeeper once InfluxDB's files are still.
    const influxDisk = await untilStill(() => bytesUnder(influxDir));
    for (const g of gks) {
      const t = performance.now();
      const cpu = ingestCpuOf(g.server.child.pid, g.db?.name);
      await ingest(g.write);
      const acknowledged = performance.now() - t;
      await g.settled();
      ingestMs[g.backend] = performance.now() - t;
      ingestCpu[g.backend] = cpu();
      log(`${g.label} acknowledged in ${fmt(acknowledged / 1000, 2)} s, sealed in ${fmt(ingestMs[g.backend] / 1000, 2)} s`);
      phasePeak(g, 'ingest');
    }

    // ---- disk
    const disk = { influx: influxDisk };
    // gridkeeper's own housekeeping done too (PostgreSQL vacuums the staged rows and the blocks' dead versions once idle)
    for (const g of gks) disk[g.backend] = await untilStill(() => g.diskBytes());

    // ---- queries (InfluxQL) for one device
    const one = data.nodeId(7);
    const end = data.endMs;
    const dayFrom = end - DAY;
    const weekFrom = end - 7 * DAY;
    const monthFrom = data.startMs;
    const queries = {
      day1m: `SELECT mean(grid), mean(solar), mean(battery) FROM power WHERE nodeId = '${one}' AND time >= ${dayFrom}ms AND time < ${end}ms GROUP BY time(1m)`,
      week10m: `SELECT mean(grid), mean(solar), mean(battery) FROM power WHERE nodeId = '${one}' AND time >= ${weekFrom}ms AND time < ${end}ms GROUP BY time(10m)`,
      monthSpread: `SELECT spread(energy) FROM power WHERE nodeId = '${one}' AND time >= ${monthFrom}ms AND time < ${end}ms GROUP BY time(1d)`,
      monthMax: `SELECT max(grid) FROM power WHERE nodeId = '${one}' AND time >= ${monthFrom}ms AND time < ${end}ms GROUP BY time(1h)`,
      fleet: `SELECT mean(grid) FROM power WHERE time >= ${dayFrom}ms AND time < ${end}ms GROUP BY time(1h), nodeId`,
      last: `SELECT last(soc) FROM power WHERE nodeId = '${one}'`,
    };
    for (const name of Object.keys(queries)) if (QUERIES !== undefined && !QUERIES.includes(name)) delete queries[name];
    const inQuery = (q) => expect(request(`${influx.url}/query?db=history&epoch=ms`, { method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `q=${encodeURIComponent(q)}` }), 200, 'influx query');
    for (const [name, q] of Object.entries(queries)) {
      const expected = comparable((await inQuery(q)).text);
      for (const g of gks) {
        const got = comparable((await g.query(q)).text);
        if (got !== expected) throw new Error(`${g.label} ${name}: answers differ\n  gridkeeper ${got.slice(0, 400)}\n  InfluxDB   ${expected.slice(0, 400)}`);
      }
    }
    for (const g of gks) phasePeak(g, 'answers compared');
    // the floor: a bare node:http server answering InfluxDB's bytes, timed right after the gridkeepers, paced alike
    floor = await startFloorServer();
    const floorQuery = () => request(`${floor.url}/query?db=history&epoch=ms`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'q=' });
    const times = {};
    for (const [name, q] of Object.entries(queries)) {
      const t = times[name] = { influx: [], floor: [], ...Object.fromEntries(gks.map((g) => [g.backend, []])) };
      await expect(request(`${floor.url}/answer`, { method: 'PUT', body: (await inQuery(q)).text }), 200, 'floor answer');
      for (let r = 0; r < WARMUP; r++) { await paced(gks, influx.url, floor.url); await inQuery(q); for (const g of gks) await g.charged(q); await floorQuery(); }
      for (let r = 0; r < RUNS; r++) {
        await paced(gks, influx.url, floor.url);
        t.influx.push((await inQuery(q)).ms);
        for (const g of gks) t[g.backend].push((await g.charged(q)).ms);
        t.floor.push((await floorQuery()).ms);
      }
    }

    // ---- a light query beside two readers of raw weeks
    const light = `SELECT last(soc) FROM power WHERE nodeId = '${data.nodeId(3)}' AND time >= ${end - 3_600_000}ms AND time < ${end}ms`;
    const rawWeek = `SELECT * FROM power WHERE nodeId = '${data.nodeId(11)}' AND time >= ${weekFrom}ms AND time < ${end}ms`;
    const beside = {};
    const measure = async (key, lightCall, rawCall) => {
      const alone = await latencies(async () => (await lightCall()).ms, LIGHT);
      let stop = false;
      let reads = 0;
      const readers = Array.from({ length: 2 }, async (_, k) => { for (let i = k; !stop; i += 2) { await rawCall(i); reads++; } });
      await new Promise((r) => setTimeout(r, 500));
      const loaded = await latencies(async () => (await lightCall()).ms, LIGHT);
      stop = true;
      await Promise.all(readers);
      beside[key] = { alone, loaded, reads };
    };
    await measure('influx', () => inQuery(light), () => inQuery(rawWeek));
    for (const g of gks) phasePeak(g, 'timed queries');
    for (const g of gks) await measure(g.backend, () => g.query(light), (i) => g.query(rawWeek, g.readers[i % g.readers.length]));

    for (const g of gks) phasePeak(g, 'light query beside raw weeks');
    const rss = Object.fromEntries(gks.map((g) => [g.backend, rssOf(g.server.child.pid)]));
    const inRss = rssOf(influx.child.pid);

    // ---- report
    const store = (g) => g.backend;
    console.log(`history benchmark: ${DAYS} days x ${DEVICES} devices every 10 s = ${data.points} points, ${VALUES} values; InfluxDB ${influx.version}`);
    console.log(`  bytes per value       InfluxDB ${fmt(disk.influx / VALUES, 2)} (${fmt(disk.influx / 1e6)} MB, compacted)`);
    for (const g of gks) {
      const aim = g.backend === 'postgres' ? '<= 1.5' : '<= 1.0';
      console.log(`                        ${g.label.padEnd(24)} ${fmt(disk[store(g)] / VALUES, 2)} (${fmt(disk[store(g)] / 1e6)} MB)   ratio ${fmt(disk[store(g)] / disk.influx, 2)}   (aim ${aim})`);
    }
    const pps = (ms) => data.points / (ms / 1000);
    console.log(`  ingest, ${CLIENTS} clients   InfluxDB ${fmt(pps(ingestMs.influx), 0).padStart(8)} points/s (${fmt(ingestMs.influx / 1000, 2)} s)`);
    for (const g of gks) {
      console.log(`                        ${g.label.padEnd(24)} ${fmt(pps(ingestMs[store(g)]), 0).padStart(8)} points/s (${fmt(ingestMs[store(g)] / 1000, 2)} s, sealing included)   ratio ${fmt(pps(ingestMs[store(g)]) / pps(ingestMs.influx), 2)}   (aim >= 1.5)`);
    }
    // what the cores allow: the CPU every process spent on an ingest (the store's, PostgreSQL's, this client's), over
    // the machine's cores, is the least wall time any split of that work between threads could take
    const cores = availableParallelism();
    const cpuLine = (label, key) => {
      const c = ingestCpu[key];
      const total = c.store + c.postgres + c.client;
      return `                        ${label.padEnd(24)} ${fmt(c.store, 2)} s${key === 'postgres' ? ` + PostgreSQL ${fmt(c.postgres, 2)} s` : ''} + this client ${fmt(c.client, 2)} s`
        + ` = ${fmt(total, 2)} s of CPU; over ${cores} cores at least ${fmt(total / cores, 2)} s (${fmt(ingestMs[key] / 1000, 2)} s taken)`;
    };
    console.log(`  CPU during the ingest (the aim of 1.5 x asks for ${fmt(ingestMs.influx / 1500, 2)} s)`);
    console.log(cpuLine('InfluxDB', 'influx'));
    for (const g of gks) console.log(cpuLine(g.label, store(g)));
    const labels = {
      day1m: ['a day of 1-minute means, 3 fields', '0.5', '1.0'], week10m: ['a week of 10-minute means, 3 fields', '0.5', '1.0'],
      monthSpread: ['a month of daily spread', '0.3', '0.6'], monthMax: ['a month of hourly max', '0.3', '0.6'],
      fleet: ['the fleet\'s hourly means, a day', '0.5', '1.0'], last: ['last() with no time range', '2 ms', '4 ms'],
    };
    for (const [name, t] of Object.entries(times)) {
      const [what, aimSqlite, aimPg] = labels[name];
      const i = median(t.influx);
      console.log(`  ${what.padEnd(36)} InfluxDB ${fmt(i, 2).padStart(7)} ms`);
      for (const g of gks) {
        const m = median(t[store(g)]);
        const aim = g.backend === 'postgres' ? aimPg : aimSqlite;
        console.log(`  ${''.padEnd(36)} ${g.label.padEnd(24)} ${fmt(m, 2).padStart(7)} ms   ratio ${fmt(m / i, 2)}   (aim ${aim.endsWith('ms') ? `<= ${aim}` : `<= ${aim} x`})`);
      }
      console.log(`  ${''.padEnd(36)} ${'floor: bare node:http'.padEnd(24)} ${fmt(median(t.floor), 2).padStart(7)} ms   (the same bytes at once, timed alike)`);
    }
    console.log('  light query p50 / p99, alone and beside 2 readers of a raw week:');
    for (const key of ['influx', ...gks.map(store)]) {
      const b = beside[key];
      const label = key === 'influx' ? 'InfluxDB' : gks.find((g) => g.backend === key).label;
      const aim = key === 'sqlite' ? '(aim beside: p50 <= 3, p99 <= 30 ms)' : key === 'postgres' ? '(aim beside: p50 <= 3, p99 <= 60 ms)' : '';
      console.log(`                        ${label.padEnd(24)} alone ${fmt(b.alone.p50, 2)} / ${fmt(b.alone.p99, 2)} ms, beside ${fmt(b.loaded.p50, 2)} / ${fmt(b.loaded.p99, 2)} ms (${b.reads} raw weeks read meanwhile) ${aim}`);
    }
    console.log(`  peak RSS              ${gks.map((g) => `${g.label} ${fmt(rss[store(g)].peak)} MB`).join('; ')} (InfluxDB ${fmt(inRss.peak)} MB; aim < 200 MB)`);
    for (const g of gks) console.log(`                        ${g.label}: peak (RSS then) after ${g.peaks.map(([what, mb, now]) => `${what} ${fmt(mb)} (${fmt(now)}) MB`).join(', ')}`);
  } finally {
    agent.destroy();
    for (const g of gks) await g.stop();
    await influx?.stop();
    await floor?.stop();
    if (KEEP) log(`kept ${dirs.join(', ')}`);
    else for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();
