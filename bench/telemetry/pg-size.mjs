// Bytes per telemetry point on PostgreSQL (docs/scale-out.md, capacity plan): POINTS (default 500,000) points of the
// benchmark data set (100 series, 5 fields; bench/lib/energy-dataset.mjs) written through dist/gridkeeper in 5,000-line
// batches into a fresh database on GRIDKEEPER_TEST_DATABASE_URL; prints the line protocol's bytes per point, the shard
// tables' size (heap + primary key, pg_total_relation_size) and the WAL written (pg_wal_lsn_diff) per point. The WAL
// figure counts the whole server's WAL: run it on a quiet server.
import pg from 'pg';
import { startServer } from '../lib/spawn.mjs';
import { benchDatabase } from '../lib/postgres.mjs';
import { accessToken } from '../lib/http.mjs';
import { energyDataset } from '../lib/energy-dataset.mjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const POINTS = Number(process.env.POINTS ?? 500_000);
const SERIES = 100;
const BATCH = 5000;
const db = await benchDatabase('gk_size_probe');
const dir = mkdtempSync(join(tmpdir(), 'gk-size-'));
const srv = await startServer(process.env.GK_EXE ?? 'dist/gridkeeper', [], { env: { GRIDKEEPER_DATABASE_URL: db.url, GRIDKEEPER_DATA_DIR: dir, GRIDKEEPER_ADMIN_PASSWORD: 'size-probe-password' } });
const c = new pg.Client({ connectionString: db.url }); await c.connect();
try {
  const token = await accessToken(srv.url, 'admin@localhost', 'size-probe-password');
  const ds = energyDataset({ points: POINTS, series: SERIES, batch: BATCH, stepMs: 1000 });
  // devices for the nodeIds
  for (let s = 0; s < SERIES; s++) {
    const r = await fetch(`${srv.url}/v1/device?roleId=1`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ properties: { nodeId: ds.nodeId(s) } }) });
    if (r.status !== 200) throw new Error(await r.text());
  }
  const lsn0 = (await c.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l;
  let bodyBytes = 0;
  for (let b = 0; b < POINTS / BATCH; b++) {
    const body = ds.batchBody(b); bodyBytes += Buffer.byteLength(body);
    const r = await fetch(`${srv.url}/v1/telemetry?db=size&rp=autogen&precision=ns`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }, body });
    if (r.status !== 204) throw new Error(await r.text());
  }
  const wal = (await c.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d`, [lsn0])).rows[0].d;
  const size = (await c.query(`SELECT sum(pg_total_relation_size(table_name::regclass)) AS s, count(*) AS n FROM telemetry_shards`)).rows[0];
  console.log(JSON.stringify({ points: POINTS, lineProtocolBytesPerPoint: bodyBytes / POINTS, shardTables: Number(size.n), tableBytesPerPoint: Number(size.s) / POINTS, walBytesPerPoint: Number(wal) / POINTS }));
} finally { await c.end(); await srv.stop(); await db.drop(); rmSync(dir, { recursive: true, force: true }); }
