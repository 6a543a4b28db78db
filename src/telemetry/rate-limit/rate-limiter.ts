// The process-wide limiter state of telemetry queries: cost buckets per (user, tier) and bans per client address.
// One instance lives in Deps for the life of the process; nothing is persisted, so a restart starts empty.
import { IpBans, type IpBanOptions } from './ip-bans.ts';
import { LeakyBuckets, type LeakyBucketOptions } from './leaky-bucket.ts';

export interface RateLimiter {
  buckets: LeakyBuckets;
  bans: IpBans;
}

export function createRateLimiter(options: { buckets?: LeakyBucketOptions; bans?: IpBanOptions } = {}): RateLimiter {
  return { buckets: new LeakyBuckets(options.buckets), bans: new IpBans(options.bans) };
}

/** The key of a user's bucket for one tier. */
export function bucketKey(userId: number, tier: string): string {
  return `${userId}:${tier}`;
}
