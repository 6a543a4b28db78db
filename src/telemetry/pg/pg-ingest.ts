// POST /v1/telemetry on PostgreSQL: the same rules as on SQLite (ingest.ts) — one body into one namespace,
// all-or-nothing, a malformed line (400) before an unauthorized nodeId (403), a field keeps its first type, re-writing
// a (series, time) overwrites the fields given — in one READ COMMITTED transaction.
//
// The body is scanned synchronously against what this process knows of the namespace (a mirror of committed
// catalogue rows: series, fields and shards, which are never changed once written — only whole shards are dropped by
// retention). When every line's series and fields are known and its shard exists wide enough, the rows are buffered
// during that one scan. Otherwise the request takes the namespace's transaction-level advisory lock (so two processes
// never add the same field number or shard table twice), reloads the catalogue under it, adds what is new, and scans
// the body again. The mirror learns only after COMMIT, so a rolled-back request leaves nothing in it; a shard dropped
// behind its back (prune, another node) shows as a missing table or column, or as a staged row whose shard is gone
// (the reference in telemetry_staged), and the request runs again with a fresh mirror.
//
// Rows are staged per (shard, measurement), sorted by key with duplicates merged (the last line's value wins per
// field), 5,000 rows per staged row of arrays (telemetry_staged; pg-staging.ts folds them into the shard tables after
// the commit, in the background): inserting into the shard tables' B-trees is the larger part of a write, and the
// request writes a few rows of arrays instead, which the server folds from the arrays it holds while the next request
// is scanned.
// Numbers go in PostgreSQL's binary array format (pg-shards.ts arrayParam: no decimal text written here and parsed
// there).
import { sql } from 'kysely';
import type { Db } from '../../db/open.ts';
import { requireTelemetryWrite } from '../authorize.ts';
import { measurementOf, shardTableName } from '../sqlite/catalogue.ts';
import type { MeasurementInfo, NamespaceInfo, ShardInfo } from '../catalogue-types.ts';
import { FIELD_TYPES, LineProtocolError, LineScanner, STRING, UNSIGNED, type FieldKind } from '../line-protocol/line-scanner.ts';
import { floorDiv, namespaceKey, namespaceProfile } from '../namespaces.ts';
import { checkNewField, MAX_FIELDS_PER_MEASUREMENT, nulLine, NUL_REASON, storedUnsigned, typeConflict, type WriteRequest } from '../line-protocol/write-request.ts';
import { LruCache } from '../../lib/lru-cache.ts';
import { addField, catalogueChanging, loadNamespaces } from './pg-catalogue.ts';
import { keepStaged } from './pg-seal-staged.ts';
import { createShardTable, matrixParam, rowsParam, PG_TYPES, pgColumn, storageOf, widenShardTable } from './pg-shards.ts';
import { folderOf } from './pg-staging.ts';

const ROWS_PER_STATEMENT = 5_000;
const MAX_CACHED_SERIES_TEXTS = 200_000;
/** pg_advisory_xact_lock(TELEMETRY_LOCK, namespace id): adding to a namespace's catalogue */
const TELEMETRY_LOCK = 0x6774_6c6d;
/**
 * missing table or column, or a staged row's shard gone (a shard dropped behind the mirror), a unique key taken
 * meanwhile, deadlock, serialization
 */
const RETRYABLE = new Set(['42P01', '42703', '23503', '23505', '40P01', '40001']);
const ATTEMPTS = 4;

interface SeriesEntry {
  /** -1 until the series is stored */
  id: number;
  nodeId: string;
  measurement: string;
  tags: string;
}

interface NamespaceMirror {
  info: NamespaceInfo;
  /** series by the series section text of a line (several texts may name one series: tag order) */
  series: LruCache<string, SeriesEntry>;
}

/** One process's knowledge of committed catalogue rows, per database. */
class Mirror {
  readonly namespaces = new Map<string, NamespaceMirror>();
  /** per shard table: rows this process wrote to it, and the count at which it next has it analyzed */
  readonly growth = new LruCache<string, { written: number; next: number }>(1_000);
}

// The planner's statistics of a shard table. A table never analyzed is planned for a handful of rows: a series' last
// points are then read by a bitmap scan of every point the series has in the shard and a sort, instead of a backward
// index scan that stops at the limit, and aggregates sort what they read.
// Autovacuum analyzes a table once enough rows changed, but only on its own schedule (a minute apart by default: the
// newest shard, the one dashboards read, is new every shard duration) and not at all where it is turned off. So the
// process that writes a shard has it analyzed when it has written FIRST_ANALYZE rows to it, and again whenever it has
// written ten times as many: a handful of times in a shard's life. In the background, after the commit, on a
// connection of the pool; a failure (the table dropped by retention meanwhile, the server gone) only skips it.
const FIRST_ANALYZE = 10_000;
const ANALYZE_GROWTH = 10;

function noteGrowth(db: Db, mirror: Mirror, written: ReadonlyMap<string, number>): void {
  for (const [table, rows] of written) {
    let g = mirror.growth.get(table);
    if (g === undefined) mirror.growth.set(table, g = { written: 0, next: FIRST_ANALYZE });
    g.written += rows;
    if (g.written < g.next) continue;
    g.next = g.written * ANALYZE_GROWTH;
    void db.script(`ANALYZE "${table}"`).catch(() => {});
  }
}
const mirrors = new WeakMap<Db, Mirror>();

interface Group {
  window: number;
  measurement: MeasurementInfo;
  /** field numbers per row: the measurement's field count when the group began */
  width: number;
  rows: number;
  seriesIds: number[];
  tMs: number[];
  tNs: number[];
  /** values by field number, then row (null: not given) */
  values: Array<Array<number | bigint | string | null>>;
}

interface NewField {
  kind: FieldKind;
  /** the first line that has it */
  line: number;
}

interface Scan {
  lines: number;
  stored: number;
  nodeIds: Set<string>;
  /** every series and field known: `groups` holds every row */
  complete: boolean;
  groups: Map<string, Group>;
  newSeries: Map<string, SeriesEntry>;
  newFields: Map<string, Map<string, NewField>>;
}

export async function writeLineProtocolPg(db: Db, req: WriteRequest): Promise<number> {
  let mirror = mirrors.get(db);
  if (mirror === undefined) mirrors.set(db, mirror = new Mirror());
  // the folder of the root handle (a write inside a caller's transaction leaves its batch to the next read)
  const folder = db.inTransaction ? undefined : folderOf(db);
  if (folder !== undefined) {
    folder.listener ??= (points) => noteGrowth(db, mirror!, points);
    await folder.room();
  }
  for (let attempt = 1; ; attempt++) {
    try {
      const { stored, learned, staged } = await db.tx((tx) => ingest(tx, mirror!, req));
      learned();
      if (staged !== undefined) folder?.staged(staged);
      return stored;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt < ATTEMPTS && typeof code === 'string' && RETRYABLE.has(code)) {
        mirror.namespaces.clear();
        continue;
      }
      throw err;
    }
  }
}

async function ingest(tx: Db, mirror: Mirror, req: WriteRequest): Promise<{ stored: number; learned: () => void; staged?: number }> {
  const key = namespaceKey(req.namespace);
  const known = mirror.namespaces.get(key);
  let info = known?.info;
  const local = new Map<string, SeriesEntry>();
  // a series text met again in this request is found in `local` (a plain map): the shared LRU is asked (and its order
  // refreshed) once per text and request, not once per line (1M lookups were ~5 % of the node's time)
  const lookup = (text: string) => {
    let s = local.get(text);
    if (s === undefined && known !== undefined) {
      s = known.series.get(text);
      if (s !== undefined) local.set(text, s);
    }
    return s;
  };
  let scan = scanBody(req, info, lookup, local);
  if (scan.lines === 0) return { stored: 0, learned: () => {} };

  await requireTelemetryWrite(tx, req.userId, scan.nodeIds);

  let fresh = false;
  if (!scan.complete || info === undefined || needsShards(info, scan.groups)) {
    info = await lockAndLoad(tx, req, key, info === undefined);
    fresh = true;
    await addFields(tx, info, scan.newFields);
    await addSeries(tx, info, scan.newSeries, req.now);
    if (!scan.complete) {
      scan = scanBody(req, info, lookup, local);
      if (!scan.complete) throw new Error('telemetry ingest: a series or field is still unknown after adding it');
    }
    await ensureShards(tx, info, scan.groups, req.now);
  }
  let part = 0;
  for (const group of [...scan.groups.values()].sort(byTableAndMeasurement)) part = await stageGroup(tx, info.id, info.shards.get(group.window)!, group, part);
  const loaded = info;
  return {
    staged: part > 0 ? info.id : undefined,
    stored: scan.stored,
    learned: () => {
      let entry = mirror.namespaces.get(key);
      if (entry === undefined || fresh) {
        entry = { info: loaded, series: entry?.series ?? known?.series ?? new LruCache(MAX_CACHED_SERIES_TEXTS) };
        mirror.namespaces.set(key, entry);
      }
      for (const [text, s] of local) if (s.id >= 0) entry.series.set(text, s);
    },
  };
}

/** Scans every line: nodeIds, new series and fields, and (while everything is known) the rows. Throws LineProtocolError. */
function scanBody(req: WriteRequest, info: NamespaceInfo | undefined, lookup: (text: string) => SeriesEntry | undefined,
  local: Map<string, SeriesEntry>): Scan {
  const out: Scan = { lines: 0, stored: 0, nodeIds: new Set(), complete: true, groups: new Map(), newSeries: new Map(), newFields: new Map() };
  const retainFrom = req.retainFromMs ?? -Infinity;
  const badLine = nulLine(req.body);
  const sc = new LineScanner(req.body, { precision: req.precision, nowMs: req.now });
  const shardMs = namespaceProfile(req.namespace).shardDurationMs;
  let last: SeriesEntry | undefined;
  let lastGroup: Group | undefined;
  while (sc.nextLine()) {
    if (sc.line === badLine) throw new LineProtocolError(sc.line, NUL_REASON);
    out.lines++;
    const text = sc.seriesText();
    let s = lookup(text);
    if (s === undefined) {
      sc.parseSeries();
      const tags: Array<[string, string]> = [];
      for (let k = 0; k < sc.tagCount; k++) tags.push([sc.tagKeys[k], sc.tagValues[k]]);
      tags.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      const tagsJson = JSON.stringify(Object.fromEntries(tags));
      const canon = `${sc.measurement}\u0000${tagsJson}`;
      s = out.newSeries.get(canon);
      if (s === undefined) {
        s = { id: -1, nodeId: sc.tag('nodeId')!, measurement: sc.measurement, tags: tagsJson };
        out.newSeries.set(canon, s);
      }
      local.set(text, s);
    }
    if (s !== last) {
      out.nodeIds.add(s.nodeId);
      last = s;
    }
    sc.parseFields();
    const m = info?.measurements.get(s.measurement);
    let lineKnown = true;
    for (let k = 0; k < sc.fieldCount; k++) {
      const name = sc.fieldKeys[k];
      const kind = sc.fieldKinds[k];
      const field = m?.fields.get(name);
      if (field !== undefined) {
        if (field.kind !== kind) throw typeConflict(sc.line, name, s.measurement, field.kind, kind);
        continue;
      }
      lineKnown = false;
      let fresh = out.newFields.get(s.measurement);
      if (fresh === undefined) out.newFields.set(s.measurement, fresh = new Map());
      const seen = fresh.get(name);
      if (seen !== undefined) {
        if (seen.kind !== kind) throw typeConflict(sc.line, name, s.measurement, seen.kind, kind);
        continue;
      }
      checkNewField(sc.line, name, s.measurement, (m?.list.length ?? 0) + fresh.size, MAX_FIELDS_PER_MEASUREMENT);
      fresh.set(name, { kind, line: sc.line });
    }
    // a new series or field is added even when the point itself is beyond retention (as on SQLite)
    if (!lineKnown || s.id < 0) out.complete = false;
    if (sc.timeMs < retainFrom) continue;
    out.stored++;
    if (!out.complete) continue;
    // the row, buffered in its (shard window, measurement) group
    const window = floorDiv(sc.timeMs, shardMs);
    let group = lastGroup;
    if (group === undefined || group.window !== window || group.measurement !== m) {
      const gk = `${window}\u0000${s.measurement}`;
      group = out.groups.get(gk);
      if (group === undefined) {
        const width = m!.list.length;
        group = { window, measurement: m!, width, rows: 0, seriesIds: [], tMs: [], tNs: [], values: Array.from({ length: width }, () => []) };
        out.groups.set(gk, group);
      }
      lastGroup = group;
    }
    const row = group.rows++;
    group.seriesIds.push(s.id);
    group.tMs.push(sc.timeMs);
    group.tNs.push(sc.subMsNs);
    for (let o = 0; o < group.width; o++) group.values[o].push(null);
    for (let k = 0; k < sc.fieldCount; k++) {
      const field = m!.fields.get(sc.fieldKeys[k])!;
      group.values[field.ordinal][row] = fieldValue(sc, k);
    }
  }
  return out;
}

/** Field k of the scanner's line as bound: floats and small integers as numbers, booleans 0/1, big integers as bigint. */
function fieldValue(sc: LineScanner, k: number): number | bigint | string {
  const kind = sc.fieldKinds[k];
  if (kind === STRING) return sc.fieldValues[k] as string;
  const big = sc.fieldValues[k];
  if (big === undefined) return sc.fieldNumbers[k];
  return kind === UNSIGNED ? storedUnsigned(sc, k, big as bigint) : big as bigint;
}

function needsShards(info: NamespaceInfo, groups: Map<string, Group>): boolean {
  for (const g of groups.values()) {
    const shard = info.shards.get(g.window);
    if (shard === undefined || shard.columns < g.width) return true;
  }
  return false;
}

/**
 * Creates the namespace when new, takes its lock and reads its catalogue as committed now. The request is about to add
 * to the catalogue: the catalogue's version row is taken first.
 */
async function lockAndLoad(tx: Db, req: WriteRequest, key: string, create: boolean): Promise<NamespaceInfo> {
  await catalogueChanging(tx);
  if (create) {
    const profile = namespaceProfile(req.namespace);
    await tx.run(sql`INSERT INTO telemetry_namespaces (key, namespace, interval_ms, shard_duration_ms, worst_case_range_ms, created_at)
      VALUES (${key}, ${JSON.stringify(req.namespace)}, ${profile.intervalMs}, ${profile.shardDurationMs}, ${profile.worstCaseRangeMs}, ${req.now})
      ON CONFLICT (key) DO NOTHING`);
  }
  const row = await tx.get(sql<{ id: number }>`SELECT id FROM telemetry_namespaces WHERE key = ${key}`);
  await tx.get(sql`SELECT pg_advisory_xact_lock(${TELEMETRY_LOCK}::integer, ${row!.id}::integer)`);
  return (await loadNamespaces(tx, [key])).get(key)!;
}

/** Adds the request's new fields (under the lock): the next field number each, unless another writer added it meanwhile. */
async function addFields(tx: Db, info: NamespaceInfo, fresh: Map<string, Map<string, NewField>>): Promise<void> {
  for (const [measurement, fields] of fresh) {
    for (const [name, f] of fields) {
      const m = measurementOf(info, measurement);
      const stored = m.fields.get(name);
      if (stored !== undefined) {
        if (stored.kind !== f.kind) throw typeConflict(f.line, name, measurement, stored.kind, f.kind);
        continue;
      }
      checkNewField(f.line, name, measurement, m.list.length, MAX_FIELDS_PER_MEASUREMENT);
      const row = { measurement, field: name, ordinal: m.list.length, type: FIELD_TYPES[f.kind] };
      await tx.run(sql`INSERT INTO telemetry_fields (namespace_id, measurement, field, ordinal, type)
        VALUES (${info.id}, ${row.measurement}, ${row.field}, ${row.ordinal}, ${row.type})`);
      addField(info, row);
    }
  }
}

/** Stores the request's new series (in key order) and gives every entry its id. */
async function addSeries(tx: Db, info: NamespaceInfo, fresh: Map<string, SeriesEntry>, now: number): Promise<void> {
  if (fresh.size === 0) return;
  const list = [...fresh.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, s]) => s);
  const measurements = list.map((s) => s.measurement);
  const tags = list.map((s) => s.tags);
  await tx.run(sql`INSERT INTO telemetry_series (namespace_id, measurement, tags, node_id, created_at)
    SELECT ${info.id}, m, t, n, ${now} FROM unnest(${measurements}::text[], ${tags}::text[], ${list.map((s) => s.nodeId)}::text[]) AS u(m, t, n)
    ON CONFLICT (namespace_id, key_hash) DO NOTHING`);
  const rows = await tx.all(sql<{ id: number; measurement: string; tags: string }>`SELECT s.id, s.measurement, s.tags FROM telemetry_series s
    JOIN unnest(${measurements}::text[], ${tags}::text[]) AS u(m, t) ON s.key_hash = gk_sha256(u.m || E'\n' || u.t) AND s.measurement = u.m AND s.tags = u.t
    WHERE s.namespace_id = ${info.id}`);
  for (const r of rows) {
    const s = fresh.get(`${r.measurement}\u0000${r.tags}`);
    if (s !== undefined) s.id = r.id;
  }
}

/** Creates or widens the shard tables the groups need (under the lock, with the catalogue as committed). */
async function ensureShards(tx: Db, info: NamespaceInfo, groups: Map<string, Group>, now: number): Promise<void> {
  const need = new Map<number, number>();
  for (const g of groups.values()) need.set(g.window, Math.max(need.get(g.window) ?? 0, g.width));
  for (const [window, width] of [...need].sort((a, b) => a[0] - b[0])) {
    const shard = info.shards.get(window);
    if (shard?.head !== true) {
      // a new window, or a sealed one whose shard table is gone (a late point): its table is made (again)
      const columns = Math.max(width, info.maxFields);
      const table = shardTableName(info.id, window);
      const startMs = window * info.profile.shardDurationMs;
      const created: ShardInfo = { window, table, startMs, endMs: startMs + info.profile.shardDurationMs, columns, head: true, sealed: shard?.sealed === true };
      await tx.run(createShardTable(table, columns));
      await tx.run(sql`INSERT INTO telemetry_shards (namespace_id, shard_window, table_name, start_ms, end_ms, columns, created_at)
        VALUES (${info.id}, ${window}, ${table}, ${created.startMs}, ${created.endMs}, ${columns}, ${now})`);
      info.shards.set(window, created);
    } else if (shard.columns < width) {
      await tx.run(widenShardTable(shard.table, shard.columns, width));
      await tx.run(sql`UPDATE telemetry_shards SET columns = ${width} WHERE namespace_id = ${info.id} AND shard_window = ${window}`);
      shard.columns = width;
    }
  }
}

function byTableAndMeasurement(a: Group, b: Group): number {
  return a.window - b.window || (a.measurement.name < b.measurement.name ? -1 : a.measurement.name > b.measurement.name ? 1 : 0);
}

/**
 * Stages a group's rows (pg-staging.ts folds them into the shard table): in key order, one row per key (later lines win
 * per field), 5,000 rows per staged row, parts numbered on from `part`; returns the next part number. The values go as
 * one two-dimensional array per storage class, row k the k-th column of that class in `columns`.
 */
async function stageGroup(tx: Db, namespaceId: number, shard: ShardInfo, g: Group, part: number): Promise<number> {
  const rows = keyOrder(g);
  const fields = g.measurement.list.slice(0, g.width);
  const columns = fields.map((f) => pgColumn(f.ordinal, f.kind));
  const byClass = { f: [] as number[], i: [] as number[], s: [] as number[] };
  fields.forEach((f, k) => byClass[storageOf(f.kind)].push(k));
  const ordered = [...byClass.f, ...byClass.i, ...byClass.s];
  for (let from = 0; from < rows.length; from += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(from, from + ROWS_PER_STATEMENT);
    const matrix = (cls: 'f' | 'i' | 's') => matrixParam(byClass[cls].map((k) => g.values[k]), chunk, PG_TYPES[cls]);
    let first = Infinity;
    let last = -Infinity;
    for (const r of chunk) {
      if (g.tMs[r] < first) first = g.tMs[r];
      if (g.tMs[r] > last) last = g.tMs[r];
    }
    const arrays = {
      ids: rowsParam(g.seriesIds, chunk, 'bigint'), ms: rowsParam(g.tMs, chunk, 'bigint'), ns: rowsParam(g.tNs, chunk, 'integer'),
      f: matrix('f'), i: matrix('i'), s: matrix('s'),
    };
    const staged = await tx.get(sql<{ batch: string }>`INSERT INTO telemetry_staged (batch, part, namespace_id, table_name, columns, series_ids, t_ms, t_ns, f, i, s, points, first_ms, last_ms)
      VALUES (pg_current_xact_id()::text::bigint, ${part}, ${namespaceId}, ${shard.table}, ${ordered.map((k) => columns[k])}::text[],
        ${arrays.ids}::bigint[], ${arrays.ms}::bigint[], ${arrays.ns}::integer[],
        ${arrays.f}::double precision[], ${arrays.i}::bigint[], ${arrays.s}::text[], ${chunk.length}, ${first}, ${last})
      RETURNING batch::text AS batch`);
    // for this node's fold, if it takes the row straight into blocks (pg-seal-staged.ts)
    keepStaged(tx, staged!.batch, part++, arrays);
  }
  return part;
}

/**
 * The group's row numbers in (series_id, t_ms, t_ns) order, rows of one key merged into the first of them (a later
 * line's value wins per field). Lines come time-major (every series at one time, then the next time): rows are
 * bucketed by series in line order, and a bucket is only sorted when its times go backwards.
 */
function keyOrder(g: Group): number[] {
  const { seriesIds, tMs, tNs } = g;
  const buckets = new Map<number, number[]>();
  for (let r = 0; r < g.rows; r++) {
    const list = buckets.get(seriesIds[r]);
    if (list === undefined) buckets.set(seriesIds[r], [r]);
    else list.push(r);
  }
  const rows: number[] = [];
  for (const id of [...buckets.keys()].sort((a, b) => a - b)) {
    const list = buckets.get(id)!;
    let sorted = true;
    for (let i = 1; sorted && i < list.length; i++) sorted = tMs[list[i - 1]] - tMs[list[i]] < 0 || (tMs[list[i - 1]] === tMs[list[i]] && tNs[list[i - 1]] < tNs[list[i]]);
    if (!sorted) list.sort((a, b) => tMs[a] - tMs[b] || tNs[a] - tNs[b] || a - b);
    let prev = -1;
    for (const r of list) {
      if (prev >= 0 && tMs[prev] === tMs[r] && tNs[prev] === tNs[r]) {
        for (const column of g.values) if (column[r] !== null) column[prev] = column[r];
      } else {
        rows.push(r);
        prev = r;
      }
    }
  }
  return rows;
}
