// The limiter state of telemetry queries: cost buckets per (user, tier) and bans per client address, behind one
// asynchronous interface with two stores. The embedded SQLite backend is one process: its state lives in that process's
// memory (nothing persisted, a restart starts empty). On PostgreSQL several nodes may serve one installation, so the
// state lives in the database (shared-limits.ts) and a limit holds whatever node takes the requests. Both apply the
// same rules (leaky-bucket.ts chargeBucket, ip-bans.ts admitEntry).
import type { Db } from '../db/open.ts';
import { IpBans, type IpBanOptions } from './ip-bans.ts';
import { LeakyBuckets, type LeakyBucketOptions } from './leaky-bucket.ts';
import type { RateLimiter } from './limiter.ts';
import { sharedRateLimiter } from './shared-limits.ts';
import type { Tier } from './tiers.ts';

export type { RateLimiter } from './limiter.ts';

export function createRateLimiter(db: Db, options: { buckets?: LeakyBucketOptions; bans?: IpBanOptions } = {}): RateLimiter {
  if (db.backend === 'postgres') return sharedRateLimiter(db);
  const buckets = new LeakyBuckets(options.buckets);
  const bans = new IpBans(options.bans);
  return {
    peek: async (key, policy, now) => buckets.peek(key, policy, now),
    charge: async (key, policy, cost, now) => buckets.charge(key, policy, cost, now),
    admit: async (ip, now) => bans.admit(ip, now),
    async admitAndCharge(ip, key, policy, cost, now) {
      const ban = bans.admit(ip, now);
      return ban === undefined ? { outcome: buckets.charge(key, policy, cost, now) } : { ban };
    },
    noteRetryAfter: async (ip, seconds, now) => bans.noteRetryAfter(ip, seconds, now),
    size: async () => ({ buckets: buckets.size, addresses: bans.size }),
  };
}

const TIER_INDEX: Record<Tier, number> = { free: 0, basic: 1, premium: 2 };

/**
 * The key of a user's bucket for one tier: a number, not a string — building and hashing a fresh string key per
 * request would be most of the cost of a charge. User ids are below 2^50.
 */
export function bucketKey(userId: number, tier: Tier): number {
  return userId * 3 + TIER_INDEX[tier];
}
