// The floor under PostgreSQL's ingest (issue 38): the history data set (lib/history-dataset.mjs) written by InfluxDB
// 1.x, and the same points stored by PostgreSQL alone as gridkeeper's writes stage them, in one run:
//   influx:  CLIENTS clients posting batches of BATCH lines to InfluxDB's /write, each its next when answered;
//   floor:   CLIENTS pg clients, each batch one INSERT of a row of arrays into a table shaped like telemetry_staged
//            (sql/pg/0013_telemetry_staged.sql: series ids, times, a float and an integer matrix, lz4) in its own
//            transaction, committed as an acknowledged write is. The arrays are made before the clock starts, in
//            PostgreSQL's binary format as gridkeeper sends them: no parsing, no rights, no HTTP, no fold, no sealing.
// What gridkeeper adds to the floor is its own work; what the floor takes is what any design that stores each write
// in PostgreSQL before answering pays.
// Run: node bench/telemetry/pg-floor.mjs   (env DAYS (10), DEVICES, CLIENTS, INFLUXD)
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { benchDatabase } from '../lib/postgres.mjs';
import { timedRequest } from '../lib/http.mjs';
import { historyDataset } from '../lib/history-dataset.mjs';
import { ensureInfluxd, startInflux } from './influx.mjs';

const DAY = 86_400_000;
const DAYS = Number(process.env.DAYS ?? 10);
const DEVICES = Number(process.env.DEVICES ?? 20);
const CLIENTS = Number(process.env.CLIENTS ?? 2);
const BATCH = 5000;
const log = (msg) => console.error(`[pg-floor] ${msg}`);
const fmt = (n, d = 2) => Number(n).toFixed(d);

const endOfData = Math.floor(Date.now() / DAY) * DAY - DAY;
const data = historyDataset({ devices: DEVICES, days: DAYS, startMs: endOfData - DAYS * DAY });

/** A binary array (array_send's format) of `dims` dimensions of element `oid`, each element written by `put`. */
function binaryArray(dims, oid, width, put) {
  const n = dims.reduce((a, b) => a * b, 1);
  const head = 12 + dims.length * 8;
  const out = Buffer.allocUnsafe(head + n * (4 + width));
  out.writeInt32BE(dims.length, 0);
  out.writeInt32BE(0, 4);
  out.writeUInt32BE(oid, 8);
  dims.forEach((d, k) => { out.writeInt32BE(d, 12 + k * 8); out.writeInt32BE(1, 16 + k * 8); });
  for (let k = 0, at = head; k < n; k++, at += 4 + width) {
    out.writeInt32BE(width, at);
    put(out, at + 4, k);
  }
  return out;
}
const int8 = (out, at, v) => { const high = Math.floor(v / 4294967296); out.writeInt32BE(high, at); out.writeUInt32BE(v - high * 4294967296, at + 4); };

/** A batch's lines as the row gridkeeper stages for them: in key order (series, then time), values by column. */
function stagedRow(text, seriesOf) {
  const rows = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [key, fields, time] = line.split(' ');
    const values = Object.fromEntries(fields.split(',').map((kv) => kv.split('=')));
    const ns = BigInt(time);
    rows.push({ series: seriesOf(key), ms: Number(ns / 1_000_000n), sub: Number(ns % 1_000_000n), values });
  }
  rows.sort((a, b) => a.series - b.series || a.ms - b.ms || a.sub - b.sub);
  const floats = ['grid', 'solar', 'battery', 'soc'];
  const ints = ['energy', 'state'];
  const n = rows.length;
  return [
    binaryArray([n], 20, 8, (o, at, k) => int8(o, at, rows[k].series)),
    binaryArray([n], 20, 8, (o, at, k) => int8(o, at, rows[k].ms)),
    binaryArray([n], 23, 4, (o, at, k) => o.writeInt32BE(rows[k].sub, at)),
    binaryArray([floats.length, n], 701, 8, (o, at, k) => o.writeDoubleBE(Number(rows[k % n].values[floats[Math.floor(k / n)]]), at)),
    binaryArray([ints.length, n], 20, 8, (o, at, k) => int8(o, at, Number.parseInt(rows[k % n].values[ints[Math.floor(k / n)]], 10))),
    n,
  ];
}

async function eachBatch(items, send) {
  let next = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    while (next < items.length) await send(items[next++], c);
  }));
}

async function main() {
  const bodies = Array.from(data.batches(BATCH), (text) => Buffer.from(text));
  const ids = new Map();
  const staged = bodies.map((b) => stagedRow(b.toString(), (key) => {
    let id = ids.get(key);
    if (id === undefined) ids.set(key, id = ids.size + 1);
    return id;
  }));
  log(`${DAYS} days x ${DEVICES} devices = ${data.points} points in ${bodies.length} batches of ${BATCH} lines, made before the clock starts`);

  const influxDir = mkdtempSync(join(tmpdir(), 'influx-floor-'));
  const influx = await startInflux(ensureInfluxd(log), influxDir, { cacheSnapshotCold: '2s', compactFullCold: '5s' });
  const db = await benchDatabase('gk_bench_pg_floor');
  const clients = [];
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    await timedRequest(agent, `${influx.url}/query?q=${encodeURIComponent('CREATE DATABASE floor')}`, { method: 'POST' });
    let t = performance.now();
    await eachBatch(bodies, async (body) => {
      const r = await timedRequest(agent, `${influx.url}/write?db=floor`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
      if (r.status !== 204) throw new Error(`influx write: HTTP ${r.status} ${r.text}`);
    });
    const influxMs = performance.now() - t;
    log(`InfluxDB ingested in ${fmt(influxMs / 1000)} s`);

    for (let c = 0; c < CLIENTS; c++) {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      clients.push(client);
    }
    await clients[0].query(`CREATE TABLE staged (batch BIGINT NOT NULL, part INTEGER NOT NULL, columns TEXT[] NOT NULL, series_ids BIGINT[] NOT NULL,
      t_ms BIGINT[] NOT NULL, t_ns INTEGER[] NOT NULL, f DOUBLE PRECISION[], i BIGINT[], s TEXT[], points INTEGER NOT NULL, PRIMARY KEY (batch, part))`);
    await clients[0].query(`ALTER TABLE staged ALTER COLUMN series_ids SET COMPRESSION lz4, ALTER COLUMN t_ms SET COMPRESSION lz4,
      ALTER COLUMN t_ns SET COMPRESSION lz4, ALTER COLUMN f SET COMPRESSION lz4, ALTER COLUMN i SET COMPRESSION lz4`);
    const columns = ['c0f', 'c1f', 'c2f', 'c3f', 'c4i', 'c5i'];
    t = performance.now();
    await eachBatch(staged, async ([series, ms, sub, f, i, n], c) => {
      await clients[c].query({
        text: `INSERT INTO staged (batch, part, columns, series_ids, t_ms, t_ns, f, i, points)
          VALUES (pg_current_xact_id()::text::bigint, 0, $1, $2::bigint[], $3::bigint[], $4::integer[], $5::double precision[], $6::bigint[], $7)`,
        values: [columns, series, ms, sub, f, i, n],
      });
    });
    const floorMs = performance.now() - t;
    log(`PostgreSQL stored the staged rows in ${fmt(floorMs / 1000)} s`);
    const pps = (ms) => data.points / (ms / 1000);
    console.log(`\n  ${DAYS} days x ${DEVICES} devices, ${data.points} points, ${CLIENTS} clients, batches of ${BATCH} lines`);
    console.log(`  InfluxDB                                   ${fmt(pps(influxMs), 0).padStart(8)} points/s (${fmt(influxMs / 1000)} s)`);
    console.log(`  PostgreSQL storing the staged rows alone   ${fmt(pps(floorMs), 0).padStart(8)} points/s (${fmt(floorMs / 1000)} s)   ratio ${fmt(influxMs / floorMs)}`);
    console.log('  (the ratio is the most a write path that stores each request in PostgreSQL before answering can reach here)');
  } finally {
    for (const c of clients) await c.end();
    await db.drop();
    await influx.stop();
    rmSync(influxDir, { recursive: true, force: true });
  }
}

await main();
