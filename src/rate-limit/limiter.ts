// What the telemetry query limiter offers, whichever store holds its state (rate-limiter.ts: process memory on SQLite,
// shared-limits.ts: the database on PostgreSQL).
import type { Ban } from './ip-bans.ts';
import type { BucketKey, BucketReading, ChargeOutcome } from './leaky-bucket.ts';
import type { TierPolicy } from './tiers.ts';

export interface RateLimiter {
  /** the bucket as it is now, without charging */
  peek(key: BucketKey, policy: TierPolicy, now: number): Promise<BucketReading>;
  /** admits and charges `cost` when it fits (see LeakyBuckets.charge) */
  charge(key: BucketKey, policy: TierPolicy, cost: number, now: number): Promise<ChargeOutcome>;
  /** counts one request from `ip`: undefined when it may go on, else the ban in force (see IpBans.admit) */
  admit(ip: string, now: number): Promise<Ban | undefined>;
  /**
   * admit, then — when the address may go on — charge: one call, so that a store can do both in one step. The ban in
   * force (nothing charged), or the charge's outcome.
   */
  admitAndCharge(ip: string, key: BucketKey, policy: TierPolicy, cost: number, now: number): Promise<Admission>;
  /** `ip` was told to retry after `retryAfterSeconds` */
  noteRetryAfter(ip: string, retryAfterSeconds: number, now: number): Promise<void>;
  /** how many buckets and addresses are held (idle ones are dropped as time passes) */
  size(): Promise<{ buckets: number; addresses: number }>;
}

/** What admitAndCharge answers: the address's ban, or the charge's outcome. */
export type Admission = { ban: Ban; outcome?: undefined } | { ban?: undefined; outcome: ChargeOutcome };
