// `gridkeeper copy --from <source> --to <target>`: moves a whole installation between the embedded SQLite database and
// PostgreSQL (either way, or SQLite -> SQLite, PostgreSQL -> PostgreSQL). A source or target is a PostgreSQL URL
// (postgres://, postgresql://) or an SQLite file path.
//
// - The source is read in one snapshot (Db.read), so a service writing to it meanwhile does not tear the copy.
// - The target is migrated, then must be empty (no user, role, device or telemetry namespace): copy never merges two
//   installations.
// - Everything is copied in ONE transaction on the target, table by table in foreign-key order, rows in batches, ids
//   kept; identity sequences (PostgreSQL) are moved past the largest id. An interrupted copy leaves the target empty, so
//   running it again is safe.
// - Row counts are verified per table (and per shard table) before the commit; a difference aborts the copy (the target
//   stays empty).
// - Telemetry (unless --skip-telemetry): the catalogue tables as any other table, then every shard table listed in
//   telemetry_shards, created on the target in the target's layout and filled with the points converted exactly (see
//   copyShards below). --skip-telemetry leaves all of it behind, said out loud in the report.
import { sql } from 'kysely';
import type { Statement } from 'better-sqlite3';
import type { Db } from './open.ts';
import { createShardTableSql } from '../telemetry/sqlite/catalogue.ts';
import { FIELD_TYPES, FLOAT, STRING, type FieldKind } from '../telemetry/line-protocol/line-scanner.ts';
import { settleReads } from '../telemetry/reads.ts';
import { arrayParam, createShardTable, PG_MAX_FIELDS_PER_MEASUREMENT, PG_TYPES } from '../telemetry/pg/pg-shards.ts';

/** Tables in an order where every foreign key points to a table copied before it. */
export const COPY_ORDER = [
  'settings', 'signing_keys', 'users', 'roles', 'manages', 'members', 'sessions', 'two_factor', 'recovery_codes',
  'auth_failures', 'devices', 'monitors', 'licenses', 'license_datalink', 'customers', 'orders', 'order_licenses',
  'password_reset_tokens', 'password_reset_requests', 'api_tokens', 'join_failures', 'audit_log',
  'events', 'event_subscriptions', 'event_subscription_types', 'event_deliveries', 'event_attempts',
  'alarm_rules', 'alarm_states', 'alarms',
] as const;
const TELEMETRY_CATALOGUE = ['telemetry_namespaces', 'telemetry_shards', 'telemetry_series', 'telemetry_fields', 'telemetry_sealed', 'telemetry_blocks'] as const;

const BATCH = 500;

export class CopyError extends Error {}

export interface CopyOptions {
  skipTelemetry?: boolean;
  /** one line per table as it goes */
  progress?: (line: string) => void;
}

export interface CopyReport {
  /** the tables of COPY_ORDER and (with telemetry) the telemetry catalogue */
  tables: { table: string; rows: number }[];
  /** the shard tables, with their points */
  shards: { table: string; points: number }[];
  telemetrySkipped: boolean;
}

/** The writable (not generated) columns of a table on the target. */
async function columnsOf(db: Db, table: string): Promise<string[]> {
  if (db.backend === 'postgres') {
    const rows = await db.all(sql<{ column_name: string }>`
      SELECT column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ${table} AND is_generated = 'NEVER'
      ORDER BY ordinal_position`);
    return rows.map((r) => r.column_name);
  }
  // table_xinfo: hidden 2 and 3 are generated columns
  const rows = await db.all(sql<{ name: string; hidden: number }>`SELECT name, hidden FROM pragma_table_xinfo(${table})`);
  return rows.filter((r) => r.hidden === 0).map((r) => r.name);
}

async function count(db: Db, table: string): Promise<number> {
  return (await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n;
}

async function copyTable(source: Db, target: Db, table: string, keyColumns: string[]): Promise<number> {
  const columns = await columnsOf(target, table);
  const list = sql.join(columns.map((c) => sql.ref(c)));
  const order = sql.join(keyColumns.map((c) => sql.ref(c)));
  let copied = 0;
  // Paged in key order; OFFSET is fine here: one pass at copy time, and the tables that grow large (audit, telemetry)
  // are read in key order from their primary key.
  for (;;) {
    const rows = await source.all(sql<Record<string, unknown>>`SELECT ${list} FROM ${sql.table(table)} ORDER BY ${order} LIMIT ${BATCH} OFFSET ${copied}`);
    if (rows.length === 0) break;
    await target.run(sql`INSERT INTO ${sql.table(table)} (${list}) VALUES ${sql.join(rows.map((r) => sql`(${sql.join(columns.map((c) => r[c]))})`))}`);
    copied += rows.length;
    if (rows.length < BATCH) break;
  }
  return copied;
}

async function primaryKey(db: Db, table: string): Promise<string[]> {
  if (db.backend === 'postgres') {
    const rows = await db.all(sql<{ column_name: string }>`
      SELECT a.attname AS column_name FROM pg_index i
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
      WHERE i.indrelid = ${table}::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`);
    return rows.map((r) => r.column_name);
  }
  const rows = await db.all(sql<{ name: string; pk: number }>`SELECT name, pk FROM pragma_table_info(${table}) WHERE pk > 0 ORDER BY pk`);
  return rows.map((r) => r.name);
}

export async function copyInstallation(source: Db, target: Db, options: CopyOptions = {}): Promise<CopyReport> {
  // points a SQLite source still holds staged go to their shard tables first (src/telemetry/staging.ts)
  if (options.skipTelemetry !== true) await settleReads(source);
  // one snapshot of the source, whatever writes it while we read
  return source.read((snapshot) => copyFrom(snapshot, target, options));
}

async function copyFrom(source: Db, target: Db, options: CopyOptions): Promise<CopyReport> {
  const say = options.progress ?? (() => {});
  for (const table of ['users', 'roles', 'devices', 'telemetry_namespaces']) {
    const n = await count(target, table);
    if (n > 0) throw new CopyError(`the target already holds data (${n} rows in ${table}): copy only fills an empty, migrated database`);
  }
  const withTelemetry = options.skipTelemetry !== true;
  const shards = withTelemetry ? await sourceShards(source, target) : [];
  const copyOrder = [...COPY_ORDER, ...(withTelemetry ? TELEMETRY_CATALOGUE : [])];
  const tables: CopyReport['tables'] = [];
  const copiedShards: CopyReport['shards'] = [];
  await target.tx(async (tx) => {
    for (const table of copyOrder) {
      // paged in the source's key order (the target's key may be a column the source lacks, such as a digest)
      const key = await primaryKey(source, table);
      const rows = await copyTable(source, tx, table, key.length > 0 ? key : await columnsOf(tx, table));
      const expected = await count(source, table);
      const stored = await count(tx, table);
      if (rows !== expected || stored !== expected) {
        throw new CopyError(`${table}: ${expected} rows in the source, ${stored} copied; nothing was kept`);
      }
      tables.push({ table, rows });
      say(`copy: ${table} ${rows} rows`);
    }
    if (withTelemetry) await copyShards(source, tx, shards, (table, points) => {
      copiedShards.push({ table, points });
      say(`copy: ${table} ${points} points`);
    });
    if (tx.backend === 'postgres') {
      // explicit ids were inserted: identity columns continue after the largest one
      for (const table of copyOrder) {
        if (!(await columnsOf(tx, table)).includes('id')) continue;
        const seq = await tx.get(sql<{ seq: string | null }>`SELECT pg_get_serial_sequence(${table}, 'id') AS seq`);
        if (seq?.seq) {
          await tx.get(sql`SELECT setval(${seq.seq}, GREATEST((SELECT coalesce(max(id), 0) FROM ${sql.table(table)}), 1), (SELECT count(*) > 0 FROM ${sql.table(table)}))`);
        }
      }
    }
  });
  return { tables, shards: copiedShards, telemetrySkipped: !withTelemetry };
}

// ---- telemetry shard tables ----
//
// Both backends keep one row per point keyed (series_id, t_ms, t_ns), field number n of the series' measurement in
// "column n"; they differ in what column n is (src/telemetry/catalogue.ts, src/telemetry/pg/pg-shards.ts):
// - SQLite: one untyped column c<n>; floats are REAL, integers, unsigned integers and booleans (0/1) INTEGER, strings
//   TEXT (the storage classes the SQLite writer, shard-writer.ts, gives them).
// - PostgreSQL: three typed columns c<n>f (double precision), c<n>i (bigint), c<n>s (text); a value sits in the one of
//   its field's type (telemetry_fields: measurement of the series, ordinal n).
// A shard table is read in keyset pages of PAGE points in key order (memory stays bounded however big it is), each
// value converted to its field's type — floats as JavaScript numbers (bit-exact: SQLite REAL and PostgreSQL's float8
// text both round-trip a double), integers as bigint (SQLite read with safeIntegers, PostgreSQL's bigint as text),
// strings as strings — and written with multi-row inserts (PostgreSQL: one INSERT ... SELECT FROM unnest(arrays) per
// page). A value that does not fit its field's type, or a point of a series the catalogue does not know, aborts the copy:
// nothing is converted by guessing.

/** Points per page read from a shard table. */
const PAGE = 10_000;
/** Most rows per INSERT on an SQLite target (also bounded by SQLite's 32766 parameters). */
const SQLITE_ROWS_PER_INSERT = 256;
const SQLITE_MAX_PARAMS = 32766;
const SHARD_NAME = /^telemetry_shard_\d+_m?\d+$/;

interface ShardToCopy { namespaceId: number; table: string; columns: number }

/** A field value as copied: float -> number, integer, unsigned and boolean -> bigint, string -> string; null: not set. */
type Cell = number | bigint | string | null;

/** A page of points: keys, and per field number (column n) the value of each point. */
interface Page {
  rows: number;
  series: number[];
  ms: number[];
  ns: number[];
  values: Cell[][];
}

/** The field types of a measurement by field number (undefined: no field n). */
type Kinds = ReadonlyArray<FieldKind | undefined>;

/** The shard tables to copy (those telemetry_shards lists), checked to fit the target. */
async function sourceShards(source: Db, target: Db): Promise<ShardToCopy[]> {
  const rows = await source.all(sql<{ namespace_id: number; table_name: string; columns: number }>`SELECT namespace_id, table_name, columns
    FROM telemetry_shards ORDER BY namespace_id, shard_window`);
  for (const r of rows) {
    if (!SHARD_NAME.test(r.table_name)) throw new CopyError(`telemetry_shards names a table ${JSON.stringify(r.table_name)}, which is not a shard table`);
    if (target.backend === 'postgres' && r.columns > PG_MAX_FIELDS_PER_MEASUREMENT) {
      throw new CopyError(`${r.table_name} has ${r.columns} field numbers; a PostgreSQL shard table holds at most ${PG_MAX_FIELDS_PER_MEASUREMENT} `
        + '(give --skip-telemetry to copy everything else)');
    }
  }
  return rows.map((r) => ({ namespaceId: r.namespace_id, table: r.table_name, columns: r.columns }));
}

/** Copies every shard table, namespace by namespace (the series of one namespace are in memory at a time). */
async function copyShards(source: Db, tx: Db, shards: readonly ShardToCopy[], done: (table: string, points: number) => void): Promise<void> {
  if (source.backend === 'postgres') {
    // floats as text with every digit needed to read them back exactly (PostgreSQL 12+: the shortest exact form)
    await source.run(sql`SET LOCAL extra_float_digits = 3`);
  }
  let namespaceId: number | undefined;
  let kinds = new Map<number, Kinds>();
  for (const shard of shards) {
    if (shard.namespaceId !== namespaceId) {
      namespaceId = shard.namespaceId;
      kinds = await seriesKinds(source, namespaceId);
    }
    const points = await copyShard(source, tx, shard, kinds);
    done(shard.table, points);
  }
}

/** The field types of every series of a namespace, by series id. */
async function seriesKinds(db: Db, namespaceId: number): Promise<Map<number, Kinds>> {
  const fields = await db.all(sql<{ measurement: string; field: string; ordinal: number; type: string }>`SELECT measurement, field, ordinal, type
    FROM telemetry_fields WHERE namespace_id = ${namespaceId}`);
  const byMeasurement = new Map<string, Array<FieldKind | undefined>>();
  for (const f of fields) {
    const kind = FIELD_TYPES.indexOf(f.type as never);
    if (kind < 0) throw new CopyError(`telemetry_fields: field ${JSON.stringify(f.field)} of ${JSON.stringify(f.measurement)} has an unknown type ${JSON.stringify(f.type)}`);
    let list = byMeasurement.get(f.measurement);
    if (list === undefined) byMeasurement.set(f.measurement, list = []);
    list[f.ordinal] = kind as FieldKind;
  }
  const series = await db.all(sql<{ id: number; measurement: string }>`SELECT id, measurement FROM telemetry_series WHERE namespace_id = ${namespaceId}`);
  const out = new Map<number, Kinds>();
  for (const s of series) out.set(s.id, byMeasurement.get(s.measurement) ?? []);
  return out;
}

async function copyShard(source: Db, tx: Db, shard: ShardToCopy, kinds: Map<number, Kinds>): Promise<number> {
  const read = source.backend === 'postgres' ? pgReader(source, shard, kinds) : sqliteReader(source, shard, kinds);
  const write = tx.backend === 'postgres' ? await pgWriter(tx, shard) : await sqliteWriter(tx, shard);
  let copied = 0;
  // The next page is read while this one is written (two pages in memory at most). SQLite works synchronously when
  // called, PostgreSQL in the background once the statement is sent: the PostgreSQL side is started first.
  let page = await read();
  while (page.rows > 0) {
    let writing: Promise<number>;
    let next: Promise<Page> | undefined;
    const last = page.rows < PAGE;
    if (tx.backend === 'postgres') {
      writing = write(page);
      next = last ? undefined : read();
    } else {
      next = last ? undefined : read();
      writing = write(page);
    }
    // both are awaited below; whichever fails first must not leave the other's failure unhandled
    void writing.catch(() => {});
    if (next !== undefined) void next.catch(() => {});
    copied += await writing;
    if (next === undefined) break;
    page = await next;
  }
  const expected = await count(source, shard.table);
  const stored = await count(tx, shard.table);
  if (copied !== expected || stored !== expected) {
    throw new CopyError(`${shard.table}: ${expected} points in the source, ${stored} copied; nothing was kept`);
  }
  return copied;
}

/** What a value breaks, for a CopyError. */
function where(shard: ShardToCopy, series: number, ms: number, ns: number, n: number): string {
  return `${shard.table}: series ${series} at ${ms} ms + ${ns} ns, field number ${n}`;
}

function unknownSeries(shard: ShardToCopy, series: number): CopyError {
  return new CopyError(`${shard.table}: points of series ${series}, which telemetry_series does not hold for namespace ${shard.namespaceId}; nothing was kept`);
}

/** An SQLite cell (read with safeIntegers: INTEGER as bigint) as a value of its field's type; undefined: it is not one. */
function fromSqlite(v: unknown, kind: FieldKind | undefined): Cell | undefined {
  if (v === null) return null;
  if (kind === FLOAT) {
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint' && BigInt(Number(v)) === v) return Number(v);
  } else if (kind === STRING) {
    if (typeof v === 'string') return v;
  } else if (kind !== undefined) {
    if (typeof v === 'bigint') return v;
    if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  }
  return undefined;
}

function notOfItsType(at: string, v: unknown, kind: FieldKind | undefined): CopyError {
  const held = typeof v === 'string' ? 'text' : typeof v === 'number' || typeof v === 'bigint' ? String(v) : 'a blob';
  return new CopyError(kind === undefined ? `${at}: a value where the measurement has no field; nothing was kept`
    : `${at}: the ${FIELD_TYPES[kind]} field holds ${held}; nothing was kept`);
}

/** Reads an SQLite shard table page by page (each call: the next page; empty at the end). */
function sqliteReader(source: Db, shard: ShardToCopy, kinds: Map<number, Kinds>): () => Promise<Page> {
  const select = `SELECT series_id, t_ms, t_ns${Array.from({ length: shard.columns }, (_, n) => `, c${n}`).join('')} FROM "${shard.table}"`;
  const order = ` ORDER BY series_id, t_ms, t_ns LIMIT ${PAGE}`;
  let first: Statement | undefined;
  let next: Statement | undefined;
  let after: unknown[] | undefined;
  return () => source.exclusive((conn) => {
    if (first === undefined) {
      first = conn.sqlite.prepare(select + order).raw(true).safeIntegers(true);
      next = conn.sqlite.prepare(`${select} WHERE (series_id, t_ms, t_ns) > (?, ?, ?)${order}`).raw(true).safeIntegers(true);
    }
    const rows = (after === undefined ? first.all() : next!.all(...after)) as unknown[][];
    const page: Page = { rows: rows.length, series: [], ms: [], ns: [], values: Array.from({ length: shard.columns }, () => []) };
    for (const row of rows) {
      const series = Number(row[0]);
      const ms = Number(row[1]);
      const ns = Number(row[2]);
      const types = kinds.get(series);
      if (types === undefined) throw unknownSeries(shard, series);
      page.series.push(series);
      page.ms.push(ms);
      page.ns.push(ns);
      for (let n = 0; n < shard.columns; n++) {
        const value = fromSqlite(row[3 + n], types[n]);
        if (value === undefined) throw notOfItsType(where(shard, series, ms, ns, n), row[3 + n], types[n]);
        page.values[n].push(value);
      }
    }
    if (rows.length > 0) after = rows[rows.length - 1].slice(0, 3);
    return page;
  });
}

/** Reads a PostgreSQL shard table page by page (each call: the next page; empty at the end). */
function pgReader(source: Db, shard: ShardToCopy, kinds: Map<number, Kinds>): () => Promise<Page> {
  const names: [string, string, string][] = Array.from({ length: shard.columns }, (_, n) => [`c${n}f`, `c${n}i`, `c${n}s`]);
  // bigints as text: the driver reads bigint as a JavaScript number, exact only up to 2^53
  const list = sql.raw(['series_id', 't_ms', 't_ns', ...names.map(([f, i, s]) => `${f}, ${i}::text AS ${i}, ${s}`)].join(', '));
  let after: [number, number, number] | undefined;
  return async () => {
    const rows = await source.all(sql<Record<string, unknown>>`SELECT ${list} FROM ${sql.id(shard.table)}
      ${after === undefined ? sql`` : sql`WHERE (series_id, t_ms, t_ns) > (${after[0]}::bigint, ${after[1]}::bigint, ${after[2]}::integer)`}
      ORDER BY series_id, t_ms, t_ns LIMIT ${PAGE}`);
    const page: Page = { rows: rows.length, series: [], ms: [], ns: [], values: names.map(() => []) };
    for (const row of rows) {
      const series = row.series_id as number;
      const ms = row.t_ms as number;
      const ns = row.t_ns as number;
      const types = kinds.get(series);
      if (types === undefined) throw unknownSeries(shard, series);
      page.series.push(series);
      page.ms.push(ms);
      page.ns.push(ns);
      for (let n = 0; n < names.length; n++) {
        const [f, i, s] = names[n];
        const vf = row[f];
        const vi = row[i];
        const vs = row[s];
        if (vf === null && vi === null && vs === null) {
          page.values[n].push(null);
          continue;
        }
        const kind = types[n];
        let value: Cell = null;
        if (kind === FLOAT) {
          if (vi === null && vs === null) value = vf as number;
        } else if (kind === STRING) {
          if (vf === null && vi === null) value = vs as string;
        } else if (kind !== undefined && vf === null && vs === null) {
          value = BigInt(vi as string);
        }
        if (value === null) {
          throw new CopyError(`${where(shard, series, ms, ns, n)}: a value outside the column of its field's type `
            + `(${kind === undefined ? 'no such field' : FIELD_TYPES[kind]}); nothing was kept`);
        }
        page.values[n].push(value);
      }
    }
    if (rows.length > 0) after = [page.series[rows.length - 1], page.ms[rows.length - 1], page.ns[rows.length - 1]];
    return page;
  };
}

/** Creates the shard table on an SQLite target (as the SQLite writer does) and returns its page writer. */
async function sqliteWriter(tx: Db, shard: ShardToCopy): Promise<(page: Page) => Promise<number>> {
  const valueColumns = Array.from({ length: shard.columns }, (_, i) => `, c${i}`).join('');
  await tx.script(createShardTableSql(shard.table, shard.columns));
  const perRow = 3 + shard.columns;
  const chunk = Math.max(1, Math.min(SQLITE_ROWS_PER_INSERT, Math.floor(SQLITE_MAX_PARAMS / perRow)));
  const insert = `INSERT INTO "${shard.table}" (series_id, t_ms, t_ns${valueColumns}) VALUES `;
  const row = `(${Array(perRow).fill('?').join(', ')})`;
  const statements = new Map<number, Statement>();
  return (page) => tx.exclusive((conn) => {
    let changes = 0;
    for (let from = 0; from < page.rows; from += chunk) {
      const size = Math.min(chunk, page.rows - from);
      let stmt = statements.get(size);
      if (stmt === undefined) statements.set(size, stmt = conn.sqlite.prepare(insert + Array(size).fill(row).join(', ')));
      // numbers bind as REAL (floats), bigints as INTEGER, strings as TEXT: the storage classes of the SQLite writer
      const args: unknown[] = new Array(size * perRow);
      for (let r = 0, a = 0; r < size; r++) {
        const at = from + r;
        args[a++] = page.series[at];
        args[a++] = page.ms[at];
        args[a++] = page.ns[at];
        for (let n = 0; n < shard.columns; n++) args[a++] = page.values[n][at];
      }
      changes += stmt.run(args).changes;
    }
    return changes;
  });
}

/** The PostgreSQL column (c<n>f, c<n>i, c<n>s) of a value: its field's type made it a number, a bigint or a string. */
function storageClass(v: number | bigint | string): 'f' | 'i' | 's' {
  return typeof v === 'number' ? 'f' : typeof v === 'bigint' ? 'i' : 's';
}

/** Creates the shard table on a PostgreSQL target and returns its page writer. */
async function pgWriter(tx: Db, shard: ShardToCopy): Promise<(page: Page) => Promise<number>> {
  await tx.run(createShardTable(shard.table, shard.columns));
  return async (page) => {
    const names = ['series_id', 't_ms', 't_ns'];
    const args = [sql`${arrayParam(page.series, 'bigint')}::bigint[]`, sql`${arrayParam(page.ms, 'bigint')}::bigint[]`, sql`${arrayParam(page.ns, 'integer')}::integer[]`];
    for (let n = 0; n < shard.columns; n++) {
      const values = page.values[n];
      // only the columns this page has values in (the others stay NULL)
      const used = new Set<'f' | 'i' | 's'>();
      for (const v of values) if (v !== null) used.add(storageClass(v));
      for (const s of ['f', 'i', 's'] as const) {
        if (!used.has(s)) continue;
        const column = values.map((v, r) => {
          if (v === null || storageClass(v) !== s) return null;
          if (typeof v === 'string' && v.includes('\u0000')) {
            throw new CopyError(`${where(shard, page.series[r], page.ms[r], page.ns[r], n)}: a string holding U+0000, which PostgreSQL text cannot store; nothing was kept`);
          }
          return v;
        });
        names.push(`c${n}${s}`);
        args.push(sql`${arrayParam(column, PG_TYPES[s])}::${sql.raw(PG_TYPES[s])}[]`);
      }
    }
    // sent before the first await: the next page is read while PostgreSQL inserts this one
    const { changes } = await tx.run(sql`INSERT INTO ${sql.id(shard.table)} (${sql.raw(names.join(', '))}) SELECT * FROM unnest(${sql.join(args)})`);
    return changes;
  };
}
