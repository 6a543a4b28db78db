// The process-wide limiter state of telemetry queries: cost buckets per (user, tier) and bans per client address.
// One instance lives in Deps for the life of the process; nothing is persisted, so a restart starts empty.
import { IpBans, type IpBanOptions } from './ip-bans.ts';
import { LeakyBuckets, type LeakyBucketOptions } from './leaky-bucket.ts';
import type { Tier } from './tiers.ts';

export interface RateLimiter {
  buckets: LeakyBuckets;
  bans: IpBans;
}

export function createRateLimiter(options: { buckets?: LeakyBucketOptions; bans?: IpBanOptions } = {}): RateLimiter {
  return { buckets: new LeakyBuckets(options.buckets), bans: new IpBans(options.bans) };
}

const TIER_INDEX: Record<Tier, number> = { free: 0, basic: 1, premium: 2 };

/**
 * The key of a user's bucket for one tier: a number, not a string — building and hashing a fresh string key per
 * request was most of the cost of a charge (measured in bench/rate-limit.mjs). User ids are SQLite rowids < 2^50.
 */
export function bucketKey(userId: number, tier: Tier): number {
  return userId * 3 + TIER_INDEX[tier];
}
