// The tiers of docs/api.md#rate-limit: a bucket holds up to `capacity` cost units and leaks `capacity` units per `windowMs`,
// continuously. A request may name a lower tier than its user's (`?apiTier=`), never a higher one.
import type { Tier } from '../db/schema.ts';
import { ApiError } from '../http/errors.ts';

export type { Tier };

export interface TierPolicy {
  name: Tier;
  capacity: number;
  /** the bucket leaks `capacity` units per window */
  windowMs: number;
}

export const TIERS: Readonly<Record<Tier, TierPolicy>> = {
  free: { name: 'free', capacity: 100, windowMs: 60_000 },
  basic: { name: 'basic', capacity: 6000, windowMs: 60_000 },
  premium: { name: 'premium', capacity: 60_000, windowMs: 60_000 },
};

export const TIER_NAMES = ['free', 'basic', 'premium'] as const satisfies readonly Tier[];

const RANK: Record<Tier, number> = { free: 0, basic: 1, premium: 2 };

/** The tier a request is charged under: the user's, or the lower one it asks for; a higher one is 403. */
/** Whether a user of `userTier` may ask for `apiTier` (effectiveTier refuses what is above the user's own). */
export function allowed(userTier: Tier, apiTier: Tier | undefined): boolean {
  return apiTier === undefined || RANK[apiTier] <= RANK[userTier];
}

export function effectiveTier(userTier: Tier, apiTier: Tier | undefined): TierPolicy {
  if (apiTier === undefined) return TIERS[userTier];
  if (!allowed(userTier, apiTier)) {
    throw new ApiError('FORBIDDEN', `apiTier ${apiTier} is above your tier (${userTier})`);
  }
  return TIERS[apiTier];
}
