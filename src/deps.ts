// What every route and service receives. Time is injected (tests use a fake clock); nothing reads Date.now() directly.
import type { Config } from './lib/config.ts';
import type { Db } from './db/open.ts';
import type { Logger } from './lib/logger.ts';
import type { KeyRing } from './auth/keys.ts';
import type { SecretBox } from './auth/secret-box.ts';
import type { TokenClaims } from './auth/tokens.ts';
import type { Metrics } from './http/metrics.ts';
import type { RateLimiter } from './telemetry/rate-limit/rate-limiter.ts';
import type { Mailer } from './auth/mailer.ts';
import type { AuditInsert } from './audit/audit.store.ts';
import type { Tier } from './auth/users.store.ts';

/**
 * Decides whether a verified token was revoked (logout, password change): undefined when it was; else what the
 * same read tells of its user (the rate-limit tier, which a telemetry query then needs no read of its own for).
 */
export interface SessionGuard {
  liveUser(claims: TokenClaims): Promise<{ tier: Tier } | undefined>;
}

/** Where audit entries go (src/audit/record.ts); write() runs inside the unit of work of the change it records. */
export interface AuditLog {
  write(tx: Db, rows: readonly AuditInsert[]): Promise<void>;
}

export interface Deps {
  db: Db;
  config: Config;
  /** current time, Unix milliseconds */
  now: () => number;
  log: Logger;
  keys: KeyRing;
  /** seals secrets the server reads back (TOTP) under a key kept outside the database */
  secrets: SecretBox;
  sessions: SessionGuard;
  metrics: Metrics;
  /** telemetry query buckets and IP bans: one per process, in memory (a restart starts empty) */
  rateLimiter: RateLimiter;
  /** outgoing mail (password reset); `configured` is false without GRIDKEEPER_SMTP_URL */
  mailer: Mailer;
  /** the audit log (recordAudit in src/audit/record.ts writes through it) */
  audit: AuditLog;
  version: string;
}
