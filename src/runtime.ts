// Builds the dependencies of a running service: database (migrated), first-start bootstrap, keys, metrics.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Config } from './config.ts';
import type { Deps } from './deps.ts';
import { openDatabase, type Db } from './db/open.ts';
import { migrate } from './db/migrate.ts';
import { bootstrap, type BootstrapResult } from './bootstrap.ts';
import { loadKeyRing } from './auth/keys.ts';
import { createSessionGuard } from './auth/sessions.ts';
import { createMetrics } from './http/metrics.ts';
import { createLogger, type Logger } from './logger.ts';
import { loadNativeBinding } from './native.ts';
import { createRateLimiter } from './telemetry/rate-limit/rate-limiter.ts';
import { createAuditLog } from './audit/record.ts';

export const VERSION = '0.1.0';

export function databaseFile(config: Config): string {
  return join(config.dataDir, 'gridkeeper.db');
}

/** Opens the database of the configured data dir (creating the dir), loading the embedded addon when bundled. */
export function openConfiguredDatabase(config: Config): Db {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const nativeBinding = loadNativeBinding(config.nativeDir ?? join(config.dataDir, '.native'));
  return openDatabase({ file: databaseFile(config), nativeBinding });
}

export interface RuntimeOptions {
  config: Config;
  db: Db;
  now?: () => number;
  log?: Logger;
  /** shows a generated admin password on first start (see bootstrap) */
  announcePassword?: (email: string, password: string) => void;
}

export async function createDeps(opts: RuntimeOptions): Promise<{ deps: Deps; bootstrapped: BootstrapResult; migrated: string[] }> {
  const now = opts.now ?? Date.now;
  const { db, config } = opts;
  const migrated = migrate(db, now());
  const bootstrapped = await bootstrap(db, {
    adminEmail: config.adminEmail, adminPassword: config.adminPassword, now: now(), announcePassword: opts.announcePassword,
  });
  const keys = await loadKeyRing(db);
  const pageBytes = db.sqlite.prepare('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()').pluck();
  const log = opts.log ?? createLogger(config.log);
  const deps: Deps = {
    db,
    config,
    now,
    log,
    keys,
    sessions: createSessionGuard(db),
    metrics: createMetrics(() => Number(pageBytes.get())),
    rateLimiter: createRateLimiter(),
    audit: createAuditLog({ retentionMs: config.auditRetention, now }),
    version: VERSION,
  };
  return { deps, bootstrapped, migrated };
}
