// Forward-only migrations: plain .sql files, applied in name order and recorded in schema_migrations. One ordered list;
// each step has a SQLite text (sql/) and a PostgreSQL text (sql/pg/) where the dialects differ (types, JSON checks,
// generated columns). They are imported as text so the bundle (and the single executable) carries them.
// - SQLite: each step in its own transaction (one process owns the file while it migrates).
// - PostgreSQL: all pending steps in ONE transaction (PostgreSQL's DDL is transactional) under a transaction-level
//   advisory lock, so several gridkeeper processes starting at the same moment never race: the second waits for the
//   first to commit, then finds nothing left to do.
import { sql } from 'kysely';
import type { Db } from './open.ts';
import { transactionLock } from './operations.ts';
import m0001 from '../../sql/0001_core.sql';
import p0001 from '../../sql/pg/0001_core.sql';
import m0002 from '../../sql/0002_auth.sql';
import p0002 from '../../sql/pg/0002_auth.sql';
import m0003 from '../../sql/0003_devices.sql';
import p0003 from '../../sql/pg/0003_devices.sql';
import m0004 from '../../sql/0004_licenses.sql';
import p0004 from '../../sql/pg/0004_licenses.sql';
import m0005 from '../../sql/0005_telemetry.sql';
import p0005 from '../../sql/pg/0005_telemetry.sql';
import m0006 from '../../sql/0006_eniris.sql';
import p0006 from '../../sql/pg/0006_eniris.sql';
import m0007 from '../../sql/0007_api_tokens.sql';
import p0007 from '../../sql/pg/0007_api_tokens.sql';
import m0008 from '../../sql/0008_security.sql';
import p0008 from '../../sql/pg/0008_security.sql';
import m0009 from '../../sql/0009_audit.sql';
import p0009 from '../../sql/pg/0009_audit.sql';
import m0010 from '../../sql/0010_shared_limits.sql';
import p0010 from '../../sql/pg/0010_shared_limits.sql';
import m0011 from '../../sql/0011_write_gate.sql';
import p0011 from '../../sql/pg/0011_write_gate.sql';
import m0012 from '../../sql/0012_rights_version.sql';
import p0012 from '../../sql/pg/0012_rights_version.sql';
import m0013 from '../../sql/0013_telemetry_staged.sql';
import p0013 from '../../sql/pg/0013_telemetry_staged.sql';
import m0014 from '../../sql/0014_telemetry_block_stats.sql';
import p0014 from '../../sql/pg/0014_telemetry_block_stats.sql';
import m0015 from '../../sql/0015_telemetry_piece_stats.sql';
import p0015 from '../../sql/pg/0015_telemetry_piece_stats.sql';
import m0016 from '../../sql/0016_telemetry_catalogue_version.sql';
import p0016 from '../../sql/pg/0016_telemetry_catalogue_version.sql';
import m0017 from '../../sql/0017_telemetry_key_hashes.sql';
import p0017 from '../../sql/pg/0017_telemetry_key_hashes.sql';
import m0018 from '../../sql/0018_users_email_ascii.sql';
import p0018 from '../../sql/pg/0018_users_email_ascii.sql';
import m0019 from '../../sql/0019_telemetry_blocks.sql';
import p0019 from '../../sql/pg/0019_telemetry_blocks.sql';
import m0020 from '../../sql/0020_events.sql';
import p0020 from '../../sql/pg/0020_events.sql';
import m0021 from '../../sql/0021_alarms.sql';
import p0021 from '../../sql/pg/0021_alarms.sql';

export interface Migration {
  name: string;
  /** SQLite text */
  sql: string;
  /** PostgreSQL text */
  pg?: string;
}

/** pg_advisory_xact_lock key of gridkeeper's migrations (any constant; 'gk' + 'mig' in ASCII) */
const MIGRATION_LOCK = 0x676b6d6967;

export const migrations: readonly Migration[] = [
  { name: '0001_core', sql: m0001, pg: p0001 },
  { name: '0002_auth', sql: m0002, pg: p0002 },
  { name: '0003_devices', sql: m0003, pg: p0003 },
  { name: '0004_licenses', sql: m0004, pg: p0004 },
  { name: '0005_telemetry', sql: m0005, pg: p0005 },
  { name: '0006_eniris', sql: m0006, pg: p0006 },
  { name: '0007_api_tokens', sql: m0007, pg: p0007 },
  { name: '0008_security', sql: m0008, pg: p0008 },
  { name: '0009_audit', sql: m0009, pg: p0009 },
  { name: '0010_shared_limits', sql: m0010, pg: p0010 },
  { name: '0011_write_gate', sql: m0011, pg: p0011 },
  { name: '0012_rights_version', sql: m0012, pg: p0012 },
  { name: '0013_telemetry_staged', sql: m0013, pg: p0013 },
  { name: '0014_telemetry_block_stats', sql: m0014, pg: p0014 },
  { name: '0015_telemetry_piece_stats', sql: m0015, pg: p0015 },
  { name: '0016_telemetry_catalogue_version', sql: m0016, pg: p0016 },
  { name: '0017_telemetry_key_hashes', sql: m0017, pg: p0017 },
  { name: '0018_users_email_ascii', sql: m0018, pg: p0018 },
  { name: '0019_telemetry_blocks', sql: m0019, pg: p0019 },
  { name: '0020_events', sql: m0020, pg: p0020 },
  { name: '0021_alarms', sql: m0021, pg: p0021 },
];

/** Applies pending migrations; returns the names applied. Refuses a database written by a newer gridkeeper. */
export async function migrate(db: Db, now: number, list: readonly Migration[] = migrations): Promise<string[]> {
  if (db.backend === 'postgres') return migratePostgres(db, now, list);
  return db.exclusive(({ sqlite, transaction }) => {
    sqlite.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT');
    const done = new Set(sqlite.prepare('SELECT name FROM schema_migrations').pluck().all() as string[]);
    refuseUnknown(done, list);
    const applied: string[] = [];
    for (const m of list) {
      if (done.has(m.name)) continue;
      transaction(() => {
        sqlite.exec(m.sql);
        sqlite.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(m.name, now);
      });
      applied.push(m.name);
    }
    return applied;
  });
}

function refuseUnknown(done: ReadonlySet<string>, list: readonly Migration[]): void {
  const known = new Set(list.map((m) => m.name));
  const unknown = [...done].filter((n) => !known.has(n));
  if (unknown.length > 0) {
    throw new Error(`database was migrated by a newer gridkeeper (unknown migrations: ${unknown.join(', ')})`);
  }
}

async function migratePostgres(db: Db, now: number, list: readonly Migration[]): Promise<string[]> {
  return db.tx(async (tx) => {
    await transactionLock(tx, MIGRATION_LOCK);
    await tx.script('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)');
    const done = new Set((await tx.all(sql<{ name: string }>`SELECT name FROM schema_migrations`)).map((r) => r.name));
    refuseUnknown(done, list);
    const applied: string[] = [];
    for (const m of list) {
      if (done.has(m.name)) continue;
      if (m.pg === undefined) throw new Error(`migration ${m.name} has no PostgreSQL text`);
      await tx.script(m.pg);
      await tx.run(sql`INSERT INTO schema_migrations (name, applied_at) VALUES (${m.name}, ${now})`);
      applied.push(m.name);
    }
    return applied;
  });
}
