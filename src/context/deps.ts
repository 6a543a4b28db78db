// What every route and service receives: the parts of one running service. Time is injected (tests use a fake clock);
// nothing reads Date.now() directly. Parts built higher up (auth/, audit/) are named here by the small interface their
// users need, so that this file, and every route that receives it, imports nothing above it.
import type { CryptoKey } from 'jose';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import type { Mailer } from '../lib/mailer.ts';
import type { SecretBox } from '../lib/secret-box.ts';
import type { Db } from '../db/open.ts';
import type { AuditInsert, Tier } from '../db/schema.ts';
import type { TokenClaims } from '../http/env.ts';
import type { Metrics } from '../http/metrics.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.ts';

/** The token signing keys (src/auth/keys.ts KeyRing): the key to sign with now, and any key's public half. */
export interface SigningKeys {
  signer(now: number): Promise<{ kid: string; privateKey: CryptoKey }>;
  publicKey(kid: string): Promise<CryptoKey | undefined>;
}

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

/** Events out (src/events/dispatcher.ts): the installation's name and this node's delivery worker. */
export interface EventService {
  /** the installation's name in payloads and MQTT topics */
  readonly installation: string;
  /** a unit of work wrote events: look for them once it has committed */
  wake(): void;
  /** delivers everything due now, to the end (tests and benchmarks; the running service uses start) */
  drain(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/** A committed telemetry write, as the alarms see it (the telemetry engine's WriteRequest fits it). */
export interface WrittenPoints {
  namespace: { version: '1'; database: string; retentionPolicy: string } | { version: '2'; organization: string; bucket: string } | { version: 'IOx'; value: string };
  /** line-protocol text in pieces that each end at a line break */
  body: readonly string[];
  precision: 'ns' | 'us' | 'ms' | 's' | 'm' | 'h';
  now: number;
  retainFromMs?: number;
  /** the observer the write's scan told of its stored lines (AlarmService.observe), if any */
  observe?: PointObserver;
}

/** A stored line as the telemetry writer's scanner holds it (src/telemetry/line-protocol/line-scanner.ts). */
export interface ScannedLine {
  readonly timeMs: number;
  readonly fieldCount: number;
  readonly fieldKeys: readonly string[];
  readonly fieldKinds: readonly number[];
  readonly fieldNumbers: readonly number[];
  readonly fieldValues: readonly (string | bigint | undefined)[];
}

/** Told of the lines a write stores as it scans them (src/telemetry/line-protocol/write-request.ts LineObserver). */
export interface PointObserver {
  begin(): void;
  line(measurement: string, nodeId: string, sc: ScannedLine): void;
}

/** Alarm evaluation on this node (src/alarms/engine.ts). */
export interface AlarmService {
  /** a write was committed: its points are evaluated soon, off the request path */
  written(points: WrittenPoints): void;
  /** an observer for a write into `namespace` whose points rules watch (undefined: none needed), passed to the writer */
  observe(namespace: WrittenPoints['namespace']): PointObserver | undefined;
  /** rules or alarm states changed by hand on this node: the evaluator reads them afresh before the next evaluation */
  rulesChanged(): void;
  /** evaluates every write told so far, to the end (tests and benchmarks); the number of transitions */
  drain(): Promise<number>;
  /** the check the timer runs (no-data rules, holds that are over); the number of transitions */
  checkNoData(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

export interface Deps {
  db: Db;
  config: Config;
  /** current time, Unix milliseconds */
  now: () => number;
  log: Logger;
  keys: SigningKeys;
  /** seals secrets the server reads back (TOTP) under a key kept outside the database */
  secrets: SecretBox;
  sessions: SessionGuard;
  metrics: Metrics;
  /** telemetry query buckets and IP bans: in process memory on SQLite, in the database on PostgreSQL */
  rateLimiter: RateLimiter;
  /** outgoing mail (password reset); `configured` is false without GRIDKEEPER_SMTP_URL */
  mailer: Mailer;
  /** the audit log (recordAudit in src/audit/record.ts writes through it) */
  audit: AuditLog;
  /** events out: the installation's name and this node's delivery worker */
  events: EventService;
  /** alarm evaluation: told of committed writes, runs no-data checks on a timer */
  alarms: AlarmService;
  version: string;
}
