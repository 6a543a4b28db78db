// Builds the dependencies of a running service: database (migrated), first-start bootstrap, keys, metrics.
import { dirname } from 'node:path';
import { mkdirSync } from 'node:fs';
import { ConfigError, publicUrlOf, type Config } from '../lib/config.ts';
import { createSecretBox, keySourceOf, newSecretKey, SealError, type KeySource, type SecretBox } from '../lib/secret-box.ts';
import { resealTotpSecrets } from '../auth/two-factor.store.ts';
import type { Deps } from '../context/deps.ts';
import type { Db } from '../db/open.ts';
import { checkDatabase } from '../db/configured.ts';
import { migrate } from '../db/migrate.ts';
import { fileBytesReader } from '../db/operations.ts';
import { bootstrap, type BootstrapResult } from './bootstrap.ts';
import { KeyRing } from '../auth/keys.ts';
import { checkSealingKey } from '../auth/sealing-check.ts';
import { createSessionGuard } from '../auth/sessions.ts';
import { createMetrics } from '../http/metrics.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { stagedEntries, startStaging } from '../telemetry/sqlite/staging.ts';
import { setFoldLog, stagedBatches } from '../telemetry/pg/pg-staging.ts';
import { registerSealingMetrics } from '../telemetry/seal.ts';
import { createRateLimiter } from '../rate-limit/rate-limiter.ts';
import { createMailer } from '../lib/mailer.ts';
import { createAuditLog } from '../audit/record.ts';
import { withEvents } from '../events/outbox.ts';
import { createEvents } from '../events/service.ts';
import { createAlarms } from '../alarms/engine.ts';

export const VERSION = '0.1.0';

/**
 * The secret box of a configuration: GRIDKEEPER_SECRET_KEY, or the key file beside the database file in the data dir
 * (created on first start). An in-memory database (tests, scripts) without a configured key gets a key of its own:
 * nothing it seals outlives it.
 */
export function openSecretBox(config: Config, db: Db): SecretBox {
  try {
    // PostgreSQL: the key file lives in the data dir (never in the database it protects)
    if (db.backend === 'postgres' && config.secretKey === undefined) mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    const memory = db.backend === 'sqlite' && db.sqlite.memory;
    const source: KeySource = memory && config.secretKey === undefined
      ? { kind: 'memory', keys: [newSecretKey()] }
      : keySourceOf({ secretKey: config.secretKey, dataDir: db.backend === 'sqlite' && !memory ? dirname(db.sqlite.name) : config.dataDir }, { create: true });
    return createSecretBox(source);
  } catch (err) {
    if (err instanceof SealError) throw new ConfigError(err.message);
    throw err;
  }
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
  await checkDatabase(db);
  const migrated = await migrate(db, now());
  const bootstrapped = await bootstrap(db, {
    adminEmail: config.adminEmail, adminPassword: config.adminPassword, now: now(), announcePassword: opts.announcePassword,
  });
  const keys = await KeyRing.load(db, now());
  const log = opts.log ?? createLogger(config.log);
  await startStaging(db, log);
  setFoldLog(log);
  const secrets = openSecretBox(config, db);
  await checkSealingKey(db, secrets);
  // Secrets stored before sealing existed, or under a key rotated away from, are sealed under the current key.
  const sealed = await resealTotpSecrets(db, secrets);
  if (sealed.resealed > 0) log.info('sealed TOTP secrets under the current key', { count: sealed.resealed, keyId: secrets.currentKeyId });
  if (sealed.unreadable.length > 0) {
    log.error('TOTP secrets that no configured key opens: these users cannot pass 2FA until it is reset', { userIds: sealed.unreadable });
  }
  // The database size for /metrics, read synchronously between requests' transactions (a gauge may be a moment old).
  const fileBytes = fileBytesReader(db);
  const metrics = createMetrics(() => (fileBytes ? fileBytes() : 0), db.poolStats,
    db.backend === 'sqlite' ? () => stagedEntries(db.sqlite) : () => stagedBatches(db));
  const events = await createEvents({ db, config, now, log, secrets, registry: metrics.registry, version: VERSION });
  const mailer = createMailer(config);
  const deps: Deps = {
    db,
    config,
    now,
    log,
    keys,
    secrets,
    sessions: createSessionGuard(db),
    metrics,
    rateLimiter: createRateLimiter(db),
    mailer,
    audit: withEvents(createAuditLog({ retentionMs: config.auditRetention, now }), events.wake),
    events,
    alarms: createAlarms({ db, now, log, mailer, consoleUrl: publicUrlOf(config), wake: events.wake }),
    version: VERSION,
  };
  registerSealingMetrics(deps.metrics.registry, db, now);
  return { deps, bootstrapped, migrated };
}
