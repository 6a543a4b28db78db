// `gridkeeper copy --from <source> --to <target>`: moves a whole installation between the embedded SQLite database and
// PostgreSQL (either way). A source or target is a PostgreSQL URL (postgres://, postgresql://) or an SQLite file path.
//
// - The source is read in one snapshot (Db.read), so a service writing to it meanwhile does not tear the copy.
// - The target is migrated, then must be empty (no user, role or device): copy never merges two installations.
// - Everything is copied in ONE transaction on the target, table by table in foreign-key order, rows in batches, ids
//   kept; identity sequences (PostgreSQL) are moved past the largest id. An interrupted copy leaves the target empty, so
//   running it again is safe.
// - Row counts are verified per table before the commit; a difference aborts the copy (the target stays empty).
// - Telemetry: the PostgreSQL backend does not store telemetry yet. Copying a source that holds telemetry to
//   PostgreSQL needs --skip-telemetry (said out loud, not silently dropped); SQLite -> SQLite copies it.
import { sql } from 'kysely';
import type { Db } from './open.ts';

/** Tables in an order where every foreign key points to a table copied before it. */
export const COPY_ORDER = [
  'settings', 'signing_keys', 'users', 'roles', 'manages', 'members', 'sessions', 'two_factor', 'recovery_codes',
  'auth_failures', 'devices', 'monitors', 'licenses', 'license_datalink', 'customers', 'orders', 'order_licenses',
  'password_reset_tokens', 'password_reset_requests', 'api_tokens', 'join_failures', 'audit_log',
] as const;
const TELEMETRY_CATALOGUE = ['telemetry_namespaces', 'telemetry_shards', 'telemetry_series', 'telemetry_fields'] as const;

const BATCH = 500;

export class CopyError extends Error {}

export interface CopyOptions {
  skipTelemetry?: boolean;
  /** one line per table as it goes */
  progress?: (line: string) => void;
}

export interface CopyReport {
  tables: { table: string; rows: number }[];
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

/** The shard tables of the telemetry engine (SQLite only). */
async function shardTables(db: Db): Promise<string[]> {
  if (db.backend !== 'sqlite') return [];
  const rows = await db.all(sql<{ table_name: string }>`SELECT table_name FROM telemetry_shards ORDER BY table_name`);
  return rows.map((r) => r.table_name);
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
  // one snapshot of the source, whatever writes it while we read
  return source.read((snapshot) => copyFrom(snapshot, target, options));
}

async function copyFrom(source: Db, target: Db, options: CopyOptions): Promise<CopyReport> {
  const say = options.progress ?? (() => {});
  for (const table of ['users', 'roles', 'devices']) {
    const n = await count(target, table);
    if (n > 0) throw new CopyError(`the target already holds data (${n} rows in ${table}): copy only fills an empty, migrated database`);
  }
  const sourceShards = await shardTables(source);
  const sourcePoints = (await count(source, 'telemetry_series')) + sourceShards.length;
  const telemetryToPostgres = target.backend === 'postgres' && sourcePoints > 0;
  if (telemetryToPostgres && !options.skipTelemetry) {
    throw new CopyError(`the source holds telemetry (${sourceShards.length} shard tables) and the PostgreSQL backend does not store telemetry yet: `
      + 'give --skip-telemetry to copy everything else (the telemetry stays in the source file)');
  }
  const withTelemetry = !telemetryToPostgres && (source.backend === 'sqlite' && target.backend === 'sqlite');
  const tables: { table: string; rows: number }[] = [];
  await target.tx(async (tx) => {
    for (const table of [...COPY_ORDER, ...(withTelemetry ? TELEMETRY_CATALOGUE : [])]) {
      const key = await primaryKey(tx, table);
      const rows = await copyTable(source, tx, table, key.length > 0 ? key : await columnsOf(tx, table));
      const expected = await count(source, table);
      const stored = await count(tx, table);
      if (rows !== expected || stored !== expected) {
        throw new CopyError(`${table}: ${expected} rows in the source, ${stored} copied; nothing was kept`);
      }
      tables.push({ table, rows });
      say(`copy: ${table} ${rows} rows`);
    }
    if (withTelemetry) {
      // SQLite -> SQLite: the shard tables are copied with the statement that created them
      for (const table of sourceShards) {
        const ddl = (await source.get(sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ${table}`))!.sql;
        await tx.script(ddl);
        const rows = await copyTable(source, tx, table, ['series_id', 't_ms', 't_ns']);
        tables.push({ table, rows });
        say(`copy: ${table} ${rows} points`);
      }
    }
    if (tx.backend === 'postgres') {
      // explicit ids were inserted: identity columns continue after the largest one
      for (const table of [...COPY_ORDER, ...(withTelemetry ? TELEMETRY_CATALOGUE : [])]) {
        if (!(await columnsOf(tx, table)).includes('id')) continue;
        const seq = await tx.get(sql<{ seq: string | null }>`SELECT pg_get_serial_sequence(${table}, 'id') AS seq`);
        if (seq?.seq) {
          await tx.get(sql`SELECT setval(${seq.seq}, GREATEST((SELECT coalesce(max(id), 0) FROM ${sql.table(table)}), 1), (SELECT count(*) > 0 FROM ${sql.table(table)}))`);
        }
      }
    }
  });
  return { tables, telemetrySkipped: telemetryToPostgres };
}
