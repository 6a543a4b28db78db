// Row-layout benchmark for the telemetry shard tables: the decision record for src/telemetry/shard-store.ts.
// Raw better-sqlite3 (no HTTP, no parsing) on a temp file with the service's pragmas (WAL, synchronous=FULL), one
// transaction per 5,000 points as a write request would. 1M points = 100 series x 10,000 points at 10 s, 5 fields
// (3 floats, 2 integers), two 1-day shard tables, written time-major (each timestamp for every series, like devices).
// Layouts:
//   columns   one row per point, one column per field: (series_id, t_ms, t_ns, c0..c4) WITHOUT ROWID
//   rowid     the same columns in a rowid table plus a UNIQUE index on (series_id, t_ms, t_ns)
//   eav       one row per field value: (series_id, field, t_ms, t_ns, value) WITHOUT ROWID
//   json      one row per point, fields as a JSON object: (series_id, t_ms, t_ns, v) WITHOUT ROWID, merged with json_patch
//   blocks    one row per series per transaction: the request's points of that series packed in a blob (times, then each
//             field, as float64 arrays) in a rowid table indexed by (series_id, t_last); reads decode the blobs. A
//             prototype of a storage format, measured for what it would give: no re-write merging, no per-field NULLs,
//             no exact 64-bit integers (what the service's format needs besides)
// Rows are written with single-row statements or 64-row multi-VALUES statements, in the time-major order they
// arrive in or sorted by key within each transaction (what shard-writer.ts does).
// Queries (median of repeated runs): last 1,000 points of 3 fields of one series; a 1-day mean of one field of one
// series; 1,000 single-series queries of the last point (the batch shape).
// Run: node bench/telemetry/layout.mjs [points]   (a multiple of 5,000, default 1M; env ROUNDS, default 3; about 3 minutes)
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const POINTS = Number(process.argv[2] ?? 1_000_000);
const SERIES = 100;
const BATCH = 5000;
const STEP = 10_000;
const START = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const PER_SERIES = POINTS / SERIES;
// Below the full size (POINTS < 864,000) a series spans less than a day and holds fewer than 1,000 points: the "last"
// and "mean" queries then cover what there is (the mean window is the whole span).
const LAST = Math.min(1000, PER_SERIES);
const MEAN_MS = Math.min(DAY, PER_SERIES * STEP);

function value(idx, s, f) {
  const x = (idx * 31 + s * 17) % 1000;
  switch (f) {
    case 0: return x * 1.25;
    case 1: return 230 + x / 1000;
    case 2: return x / 97;
    case 3: return idx * 10 + s;
    default: return x % 4;
  }
}

function open(dir, name) {
  const db = new Database(join(dir, `${name}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -32000');
  db.pragma('temp_store = MEMORY');
  return db;
}

const shardOf = (ms) => Math.floor(ms / DAY);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** What the two layouts of a column per field share, a table with its key as primary key or beside it: all but CREATE. */
function columnsShared() {
  return {
    cols: 8,
    rowSql: '(?, ?, ?, ?, ?, ?, CAST(? AS INTEGER), CAST(? AS INTEGER))',
    insert: (t, rows) => `INSERT INTO ${t} (series_id, t_ms, t_ns, c0, c1, c2, c3, c4) VALUES ${rows}
      ON CONFLICT (series_id, t_ms, t_ns) DO UPDATE SET c0 = excluded.c0, c1 = excluded.c1, c2 = excluded.c2, c3 = excluded.c3, c4 = excluded.c4`,
    bind: (out, s, ms, idx) => { out.push(s, ms, 0, value(idx, s, 0), value(idx, s, 1), value(idx, s, 2), value(idx, s, 3), value(idx, s, 4)); },
    last: (t) => `SELECT t_ms, t_ns, c0, c1, c2 FROM ${t} WHERE series_id = ? AND (c0 IS NOT NULL OR c1 IS NOT NULL OR c2 IS NOT NULL) ORDER BY t_ms DESC, t_ns DESC LIMIT ?`,
    mean: (t) => `SELECT sum(c0) AS s, count(c0) AS n FROM ${t} WHERE series_id = ? AND t_ms >= ? AND t_ms < ?`,
  };
}

const layouts = {
  columns: {
    ...columnsShared(),
    create: (t) => `CREATE TABLE ${t} (series_id INTEGER NOT NULL, t_ms INTEGER NOT NULL, t_ns INTEGER NOT NULL, c0, c1, c2, c3, c4, PRIMARY KEY (series_id, t_ms, t_ns)) WITHOUT ROWID`,
  },
  rowid: {
    ...columnsShared(),
    create: (t) => `CREATE TABLE ${t} (series_id INTEGER NOT NULL, t_ms INTEGER NOT NULL, t_ns INTEGER NOT NULL, c0, c1, c2, c3, c4);
      CREATE UNIQUE INDEX ${t}_k ON ${t} (series_id, t_ms, t_ns)`,
  },
  eav: {
    create: (t) => `CREATE TABLE ${t} (series_id INTEGER NOT NULL, field INTEGER NOT NULL, t_ms INTEGER NOT NULL, t_ns INTEGER NOT NULL, v, PRIMARY KEY (series_id, field, t_ms, t_ns)) WITHOUT ROWID`,
    cols: 25,
    rowSql: '(?, 0, ?, ?, ?), (?, 1, ?, ?, ?), (?, 2, ?, ?, ?), (?, 3, ?, ?, CAST(? AS INTEGER)), (?, 4, ?, ?, CAST(? AS INTEGER))',
    insert: (t, rows) => `INSERT INTO ${t} (series_id, field, t_ms, t_ns, v) VALUES ${rows} ON CONFLICT (series_id, field, t_ms, t_ns) DO UPDATE SET v = excluded.v`,
    bind: (out, s, ms, idx) => { for (let f = 0; f < 5; f++) out.push(s, ms, 0, value(idx, s, f)); },
    // three fields = a three-way merge on time
    last: (t) => `SELECT t_ms, t_ns, max(CASE field WHEN 0 THEN v END) AS c0, max(CASE field WHEN 1 THEN v END) AS c1, max(CASE field WHEN 2 THEN v END) AS c2
      FROM ${t} WHERE series_id = ? AND field IN (0, 1, 2) GROUP BY t_ms, t_ns ORDER BY t_ms DESC, t_ns DESC LIMIT ?`,
    mean: (t) => `SELECT sum(v) AS s, count(v) AS n FROM ${t} WHERE series_id = ? AND field = 0 AND t_ms >= ? AND t_ms < ?`,
  },
  json: {
    create: (t) => `CREATE TABLE ${t} (series_id INTEGER NOT NULL, t_ms INTEGER NOT NULL, t_ns INTEGER NOT NULL, v TEXT NOT NULL, PRIMARY KEY (series_id, t_ms, t_ns)) WITHOUT ROWID`,
    cols: 4,
    rowSql: '(?, ?, ?, ?)',
    insert: (t, rows) => `INSERT INTO ${t} (series_id, t_ms, t_ns, v) VALUES ${rows} ON CONFLICT (series_id, t_ms, t_ns) DO UPDATE SET v = json_patch(v, excluded.v)`,
    bind: (out, s, ms, idx) => {
      out.push(s, ms, 0, `{"0":${value(idx, s, 0)},"1":${value(idx, s, 1)},"2":${value(idx, s, 2)},"3":${value(idx, s, 3)},"4":${value(idx, s, 4)}}`);
    },
    last: (t) => `SELECT t_ms, t_ns, v ->> '$.0' AS c0, v ->> '$.1' AS c1, v ->> '$.2' AS c2 FROM ${t} WHERE series_id = ? ORDER BY t_ms DESC, t_ns DESC LIMIT ?`,
    mean: (t) => `SELECT sum(v ->> '$.0') AS s, count(v ->> '$.0') AS n FROM ${t} WHERE series_id = ? AND t_ms >= ? AND t_ms < ?`,
  },
};

// The blocks prototype: a series' points of one transaction as [t_ms x n, c0 x n, ..., c4 x n] float64s.
const blocks = {
  create: (t) => `CREATE TABLE ${t} (id INTEGER PRIMARY KEY, series_id INTEGER NOT NULL, t_first INTEGER NOT NULL, t_last INTEGER NOT NULL,
    n INTEGER NOT NULL, data BLOB NOT NULL); CREATE INDEX ${t}_k ON ${t} (series_id, t_last)`,
  insert: (t) => `INSERT INTO ${t} (series_id, t_first, t_last, n, data) VALUES (?, ?, ?, ?, ?)`,
  /** rows: [table, series, ms, idx] of one transaction, sorted by (table, series, ms) */
  write(rows, stmt) {
    for (let i = 0; i < rows.length;) {
      let j = i;
      while (j < rows.length && rows[j][0] === rows[i][0] && rows[j][1] === rows[i][1]) j++;
      const n = j - i;
      const f = new Float64Array(n * 6);
      for (let k = 0; k < n; k++) {
        const [, s, ms, idx] = rows[i + k];
        f[k] = ms;
        for (let c = 0; c < 5; c++) f[n * (c + 1) + k] = value(idx, s, c);
      }
      stmt(rows[i][0], 1).run(rows[i][1], f[0], f[n - 1], n, Buffer.from(f.buffer));
      i = j;
    }
  },
  last: (t) => `SELECT n, data FROM ${t} WHERE series_id = ? ORDER BY t_last DESC`,
  mean: (t) => `SELECT n, data FROM ${t} WHERE series_id = ? AND t_last >= ? AND t_first < ?`,
};

/** A blob's float64s (copied when SQLite's buffer is not 8-byte aligned). */
function floats(buf) {
  return buf.byteOffset % 8 === 0 ? new Float64Array(buf.buffer, buf.byteOffset, buf.length / 8) : new Float64Array(new Uint8Array(buf).buffer);
}

function run(name, rowsPerStmt, sorted) {
  const L = name === 'blocks' ? blocks : layouts[name];
  const dir = mkdtempSync(join(tmpdir(), 'gk-layout-'));
  const db = open(dir, name);
  const tables = new Map();
  const table = (ms) => {
    const k = shardOf(ms);
    let t = tables.get(k);
    if (!t) {
      t = `s_${k}`;
      db.exec(L.create(t));
      tables.set(k, t);
    }
    return t;
  };
  const stmts = new Map();
  const stmt = (t, n) => {
    const key = `${t}/${n}`;
    let s = stmts.get(key);
    if (!s) stmts.set(key, s = db.prepare(L === blocks ? L.insert(t) : L.insert(t, Array(n).fill(L.rowSql).join(', '))));
    return s;
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let idx = 0;
  const timestamps = POINTS / SERIES;
  const perBatch = BATCH / SERIES;
  for (let b = 0; b * perBatch < timestamps; b++) {
    db.transaction(() => {
      // one request's points, time-major as devices send them; optionally sorted by (series, time) first
      const rows = [];
      for (let k = 0; k < perBatch; k++, idx++) {
        const ms = START + idx * STEP;
        for (let s = 0; s < SERIES; s++) rows.push([table(ms), s + 1, ms, idx]);
      }
      if (sorted) rows.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] - y[1] || x[2] - y[2]));
      if (L === blocks) return L.write(rows, stmt);
      let pending = [];
      let pendingRows = 0;
      let pendingTable;
      const flush = () => {
        if (pendingRows === 0) return;
        if (pendingRows === rowsPerStmt) stmt(pendingTable, pendingRows).run(pending);
        else { const one = stmt(pendingTable, 1); const w = pending.length / pendingRows; for (let i = 0; i < pending.length; i += w) one.run(pending.slice(i, i + w)); }
        pending = [];
        pendingRows = 0;
      };
      for (const [t, s, ms, i] of rows) {
        if (t !== pendingTable) { flush(); pendingTable = t; }
        L.bind(pending, s, ms, i);
        if (++pendingRows === rowsPerStmt) flush();
      }
      flush();
    }).immediate();
  }
  const ingestS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuUsPerPoint = (cpu.user + cpu.system) / POINTS;
  db.pragma('wal_checkpoint(TRUNCATE)');
  const size = statSync(join(dir, `${name}.db`)).size;

  // queries: newest shard first for "last N", every overlapped shard for the mean
  const ordered = [...tables.entries()].sort((a, b) => b[0] - a[0]).map(([, t]) => t);
  const lastQ = ordered.map((t) => db.prepare(L.last(t)));
  const meanQ = ordered.map((t) => db.prepare(L.mean(t)));
  const endMs = START + PER_SERIES * STEP;
  const lastN = L === blocks ? (series, n) => {
    // newest block first, each decoded into rows newest first, until n
    const out = [];
    for (const q of lastQ) {
      for (const [count, data] of q.raw().iterate(series)) {
        const f = floats(data);
        for (let k = count - 1; k >= 0 && out.length < n; k--) out.push([f[k], 0, f[count + k], f[2 * count + k], f[3 * count + k]]);
        if (out.length >= n) break;
      }
      if (out.length >= n) break;
    }
    return out;
  } : (series, n) => {
    const out = [];
    for (const q of lastQ) {
      if (out.length >= n) break;
      for (const r of q.raw().all(series, n - out.length)) out.push(r);
    }
    return out;
  };
  const meanOf = L === blocks ? (q, series, from, to) => {
    let s = 0, n = 0;
    for (const [count, data] of q.raw().iterate(series, from, to)) {
      const f = floats(data);
      for (let k = 0; k < count; k++) if (f[k] >= from && f[k] < to) { s += f[count + k]; n++; }
    }
    return { s, n };
  } : (q, series, from, to) => q.get(series, from, to);
  const times = { last: [], mean: [], batch: [] };
  for (let r = 0; r < 15; r++) {
    let t = performance.now();
    const rows = lastN(1 + (r % SERIES), LAST);
    times.last.push(performance.now() - t);
    if (rows.length !== LAST) throw new Error(`${name}: got ${rows.length} rows`);
    t = performance.now();
    let s = 0, n = 0;
    for (const q of meanQ) { const x = meanOf(q, 1 + (r % SERIES), endMs - MEAN_MS, endMs); s += x.s ?? 0; n += x.n; }
    times.mean.push(performance.now() - t);
    if (n !== MEAN_MS / STEP) throw new Error(`${name}: mean over ${n} points`);
    t = performance.now();
    for (let q = 0; q < 1000; q++) lastN(1 + (q % SERIES), 1);
    times.batch.push(performance.now() - t);
  }
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return { name: name === 'blocks' ? 'blocks (prototype)' : `${name} x${rowsPerStmt}${sorted ? ' sorted' : ''}`, pps: POINTS / ingestS, cpu: cpuUsPerPoint, mb: size / 1048576, last: median(times.last), mean: median(times.mean), batch: median(times.batch) };
}

const cases = [['columns', 1, false], ['columns', 64, false], ['columns', 64, true], ['rowid', 64, true], ['eav', 16, true], ['json', 64, true], ['blocks', 1, true]];
console.log(`layout benchmark: ${POINTS} points, ${SERIES} series, 5 fields, ${BATCH} points per transaction`);
// Rounds: every case once per round, so background load spreads over all of them; medians are printed.
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const results = cases.map(() => []);
for (let round = 0; round < ROUNDS; round++) cases.forEach(([name, n, sorted], i) => results[i].push(run(name, n, sorted)));
console.log(`(median of ${ROUNDS} rounds; CPU = user + system time of this process per point, including the fsyncs' system time)`);
console.log(`layout               points/s   CPU us/point   file MB   ${`last-${LAST} ms`.padStart(12)}   ${(MEAN_MS === DAY ? '1-day mean ms' : `${(MEAN_MS / 3_600_000).toFixed(1)}-h mean ms`).padStart(13)}   1000 x last-1 ms`);
for (const rs of results) {
  const m = (k) => median(rs.map((r) => r[k]));
  console.log(`${rs[0].name.padEnd(19)} ${m('pps').toFixed(0).padStart(9)}  ${m('cpu').toFixed(2).padStart(13)}  ${m('mb').toFixed(1).padStart(8)}  ${m('last').toFixed(2).padStart(13)}  ${m('mean').toFixed(2).padStart(14)}  ${m('batch').toFixed(1).padStart(17)}`);
}
