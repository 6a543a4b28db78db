// Forward-only migrations: plain .sql files in sql/, applied in name order, each in its own transaction and recorded in
// schema_migrations. They are imported as text so the bundle (and the single executable) carries them.
import type { Db } from './open.ts';
import m0001 from '../../sql/0001_core.sql';
import m0002 from '../../sql/0002_auth.sql';
import m0003 from '../../sql/0003_devices.sql';
import m0004 from '../../sql/0004_licenses.sql';
import m0005 from '../../sql/0005_telemetry.sql';
import m0006 from '../../sql/0006_eniris.sql';
import m0007 from '../../sql/0007_api_tokens.sql';
import m0008 from '../../sql/0008_security.sql';
import m0009 from '../../sql/0009_audit.sql';

export interface Migration { name: string; sql: string }

export const migrations: readonly Migration[] = [
  { name: '0001_core', sql: m0001 },
  { name: '0002_auth', sql: m0002 },
  { name: '0003_devices', sql: m0003 },
  { name: '0004_licenses', sql: m0004 },
  { name: '0005_telemetry', sql: m0005 },
  { name: '0006_eniris', sql: m0006 },
  { name: '0007_api_tokens', sql: m0007 },
  { name: '0008_security', sql: m0008 },
  { name: '0009_audit', sql: m0009 },
];

/** Applies pending migrations; returns the names applied. Refuses a database written by a newer gridkeeper. */
export function migrate(db: Db, now: number, list: readonly Migration[] = migrations): string[] {
  const { sqlite } = db;
  sqlite.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT');
  const done = new Set(sqlite.prepare('SELECT name FROM schema_migrations').pluck().all() as string[]);
  const known = new Set(list.map((m) => m.name));
  const unknown = [...done].filter((n) => !known.has(n));
  if (unknown.length > 0) {
    throw new Error(`database was migrated by a newer gridkeeper (unknown migrations: ${unknown.join(', ')})`);
  }
  const applied: string[] = [];
  for (const m of list) {
    if (done.has(m.name)) continue;
    sqlite.transaction(() => {
      sqlite.exec(m.sql);
      sqlite.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)').run(m.name, now);
    }).immediate();
    applied.push(m.name);
  }
  return applied;
}
