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
// - Telemetry (unless --skip-telemetry): its catalogue tables as any other table, then the shard tables, by the
//   telemetry layer's part of the copy (TelemetryCopy, src/telemetry/telemetry-copy.store.ts). --skip-telemetry leaves all of it
//   behind, said out loud in the report.
import { sql } from 'kysely';
import type { Statement } from 'better-sqlite3';
import type { Db } from './open.ts';

/** Tables in an order where every foreign key points to a table copied before it. */
export const COPY_ORDER = [
  'settings', 'signing_keys', 'users', 'roles', 'manages', 'members', 'sessions', 'two_factor', 'recovery_codes',
  'auth_failures', 'devices', 'monitors', 'licenses', 'license_datalink', 'customers', 'orders', 'order_licenses',
  'password_reset_tokens', 'password_reset_requests', 'api_tokens', 'join_failures', 'audit_log',
  'events', 'event_subscriptions', 'event_subscription_types', 'event_deliveries', 'event_attempts',
  'alarm_rules', 'alarm_states', 'alarms',
] as const;

const BATCH = 500;

export class CopyError extends Error {}

/** The telemetry layer's part of a copy: its tables hold points in each backend's own layout. */
export interface TelemetryCopy {
  /** before the source's snapshot: points still staged go to their tables */
  settle(source: Db): Promise<void>;
  /** tables copied as any other, after COPY_ORDER */
  catalogue: readonly string[];
  /** in the source's snapshot: what to copy, checked to fit the target (a CopyError when it does not) */
  plan(source: Db, target: Db): Promise<TelemetryCopyPlan>;
}

export interface TelemetryCopyPlan {
  /** copies the planned tables into the target's transaction, calling `done` after each */
  copy(tx: Db, done: (table: string, points: number) => void): Promise<void>;
}

export interface CopyOptions {
  skipTelemetry?: boolean;
  /** required unless skipTelemetry */
  telemetry?: TelemetryCopy;
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

export async function rowCount(db: Db, table: string): Promise<number> {
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

export async function copyInstallation(source: Db, target: Db, options: CopyOptions): Promise<CopyReport> {
  if (options.skipTelemetry !== true) {
    if (options.telemetry === undefined) throw new TypeError('copyInstallation: give the telemetry part, or skipTelemetry');
    await options.telemetry.settle(source);
  }
  // one snapshot of the source, whatever writes it while we read
  return source.read((snapshot) => copyFrom(snapshot, target, options));
}

async function copyFrom(source: Db, target: Db, options: CopyOptions): Promise<CopyReport> {
  const say = options.progress ?? (() => {});
  for (const table of ['users', 'roles', 'devices', 'telemetry_namespaces']) {
    const n = await rowCount(target, table);
    if (n > 0) throw new CopyError(`the target already holds data (${n} rows in ${table}): copy only fills an empty, migrated database`);
  }
  const telemetry = options.skipTelemetry === true ? undefined : options.telemetry;
  const shards = telemetry === undefined ? undefined : await telemetry.plan(source, target);
  const copyOrder = [...COPY_ORDER, ...(telemetry?.catalogue ?? [])];
  const tables: CopyReport['tables'] = [];
  const copiedShards: CopyReport['shards'] = [];
  await target.tx(async (tx) => {
    for (const table of copyOrder) {
      // paged in the source's key order (the target's key may be a column the source lacks, such as a digest)
      const key = await primaryKey(source, table);
      const rows = await copyTable(source, tx, table, key.length > 0 ? key : await columnsOf(tx, table));
      const expected = await rowCount(source, table);
      const stored = await rowCount(tx, table);
      if (rows !== expected || stored !== expected) {
        throw new CopyError(`${table}: ${expected} rows in the source, ${stored} copied; nothing was kept`);
      }
      tables.push({ table, rows });
      say(`copy: ${table} ${rows} rows`);
    }
    if (shards !== undefined) await shards.copy(tx, (table, points) => {
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
  return { tables, shards: copiedShards, telemetrySkipped: telemetry === undefined };
}
