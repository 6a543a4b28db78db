// The database a configuration names: PostgreSQL when GRIDKEEPER_DATABASE_URL is set, else the embedded SQLite file in
// the data dir. The service (boot/runtime.ts) and every command open it here.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { sql } from 'kysely';
import { ConfigError, type Config } from '../lib/config.ts';
import { openDatabase, type Db } from './open.ts';
import { DatabaseUnavailable, openPostgres } from './postgres.ts';
import { migrate } from './migrate.ts';
import { addonFile, loadNativeBinding, nativeDir } from './native.ts';

export function databaseFile(config: Config): string {
  return join(config.dataDir, 'gridkeeper.db');
}

/**
 * Opens the configured database (creating the data dir), loading the embedded addon when bundled. PostgreSQL connects
 * on first use; see checkDatabase for the start-up check.
 */
export function openConfiguredDatabase(config: Config): Db {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  if (config.databaseUrl !== undefined) return openPostgres({ url: config.databaseUrl, poolSize: config.databasePool });
  const dir = nativeDir(config);
  return openDatabase({ file: databaseFile(config), nativeBinding: loadNativeBinding(dir), addonFile: addonFile(dir) });
}

/** Fails with a ConfigError naming the setting when the configured database cannot be used (checked at start). */
export async function checkDatabase(db: Db, setting = 'GRIDKEEPER_DATABASE_URL / --database-url'): Promise<void> {
  if (db.backend !== 'postgres') return;
  try {
    await db.get(sql`SELECT 1 AS ok`);
  } catch (err) {
    if (err instanceof DatabaseUnavailable) {
      throw new ConfigError(`${setting}: ${err.message}`);
    }
    throw err;
  }
}

/** A command's database: opened, migrated (forward-only, as a start of the service would), handed to `use`, closed. */
export async function withMigratedDatabase<T>(config: Config, use: (db: Db) => Promise<T>): Promise<T> {
  const db = openConfiguredDatabase(config);
  try {
    await migrate(db, Date.now());
    return await use(db);
  } finally {
    await db.close();
  }
}
