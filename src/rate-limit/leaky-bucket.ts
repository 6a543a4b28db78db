// Leaky buckets per (user, tier), in process memory (a restart starts with empty buckets, docs/api.md#rate-limit); the
// rule itself (chargeBucket) also serves the store shared by several nodes on PostgreSQL (shared-limits.ts).
//
// Exact arithmetic, no drift: a bucket's level is kept in integer "unit·ms" — the level in cost units times the tier's
// window (60 000 ms) — so leaking `capacity` units per window is leaking exactly `capacity` of these per millisecond,
// and every figure below is an integer division of exact integers. The largest value is capacity · window
// (premium: 3.6e9) plus cost · window for an admissible cost (≤ capacity): far below 2^53.
import { IdleEntries } from './idle-entries.ts';
import type { TierPolicy } from './tiers.ts';

/** Any value identifying one (user, tier) pair; see bucketKey() — a number, so lookups need no string hashing. */
export type BucketKey = number | string;

export interface Bucket {
  /** level at `at`, in unit·ms (cost units × windowMs) */
  level: number;
  /** ms; the level leaks from here on */
  at: number;
  /** ms at which the level reaches 0: from then on the bucket is idle and may be dropped */
  drainedAt: number;
}

/** What a client may know about its bucket: integer cost units and whole seconds. */
export interface BucketReading {
  /** largest cost admitted now: capacity − used */
  remaining: number;
  /** the level rounded up to whole units */
  used: number;
  /** seconds until the bucket has leaked empty (remaining = capacity), rounded up */
  secondsUntilEmpty: number;
}

export type ChargeOutcome =
  | { ok: true; reading: BucketReading }
  | { ok: false; reason: 'cost_exceeds_capacity'; reading: BucketReading }
  | { ok: false; reason: 'rate_limited'; reading: BucketReading; /** whole seconds until the cost fits, rounded up */ retryAfter: number };

export interface LeakyBucketOptions {
  maxEntries?: number;
  sweepIntervalMs?: number;
}

export class LeakyBuckets {
  private readonly buckets: IdleEntries<BucketKey, Bucket>;

  constructor(options: LeakyBucketOptions = {}) {
    this.buckets = new IdleEntries<BucketKey, Bucket>({
      maxEntries: options.maxEntries ?? 100_000,
      sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
      isIdle: (b, now) => b.drainedAt <= now,
    });
  }

  get size(): number {
    return this.buckets.size;
  }

  /** The bucket as it is now, without charging. */
  peek(key: BucketKey, policy: TierPolicy, now: number): BucketReading {
    this.buckets.maybeSweep(now);
    return readingAt(this.buckets.get(key), policy, now);
  }

  /**
   * Admits and charges `cost` when it fits: level + cost ≤ capacity, i.e. cost ≤ remaining. A refused request charges
   * nothing. A cost above the capacity can never fit and is refused as such (the caller answers 422, not 429).
   */
  charge(key: BucketKey, policy: TierPolicy, cost: number, now: number): ChargeOutcome {
    this.buckets.maybeSweep(now);
    const bucket = this.buckets.get(key);
    const { outcome, after } = chargeBucket(bucket, policy, cost, now);
    if (after === undefined) return outcome;
    if (bucket === undefined) this.buckets.add(key, after, now);
    else { bucket.level = after.level; bucket.at = after.at; bucket.drainedAt = after.drainedAt; }
    return outcome;
  }

  /** Drops every idle bucket now (the periodic sweep does this lazily). */
  sweep(now: number): void {
    this.buckets.sweep(now);
  }
}

/** What a bucket (undefined: empty) reads at `now`, without charging. */
export function readingAt(bucket: Bucket | undefined, policy: TierPolicy, now: number): BucketReading {
  return readingOf(levelAt(bucket, policy, now), policy);
}

/**
 * The rule of charge() on a bucket's state (undefined: empty): the outcome, and when admitted the state after. Pure,
 * so the store shared by several nodes (shared-limits.ts) applies exactly the same arithmetic.
 */
export function chargeBucket(bucket: Bucket | undefined, policy: TierPolicy, cost: number, now: number): { outcome: ChargeOutcome; after?: Bucket } {
  const { capacity, windowMs } = policy;
  const level = levelAt(bucket, policy, now);
  if (cost > capacity) return { outcome: { ok: false, reason: 'cost_exceeds_capacity', reading: readingOf(level, policy) } };
  const after = level + cost * windowMs;
  const excess = after - capacity * windowMs;
  if (excess > 0) {
    // The level leaks `capacity` unit·ms per ms: the cost fits after excess / capacity ms.
    return { outcome: { ok: false, reason: 'rate_limited', reading: readingOf(level, policy), retryAfter: ceilDiv(excess, capacity * 1000) } };
  }
  // A clock that stepped back leaks nothing until it passes the last charge again (never a negative leak).
  const at = bucket === undefined ? now : Math.max(bucket.at, now);
  return { outcome: { ok: true, reading: readingOf(after, policy) }, after: { level: after, at, drainedAt: at + ceilDiv(after, capacity) } };
}

/** The level at `now`: what was charged minus `capacity` unit·ms per ms since (a clock that stepped back leaks nothing). */
function levelAt(bucket: Bucket | undefined, policy: TierPolicy, now: number): number {
  if (bucket === undefined) return 0;
  const leaked = policy.capacity * Math.max(0, now - bucket.at);
  return bucket.level > leaked ? bucket.level - leaked : 0;
}

function readingOf(level: number, policy: TierPolicy): BucketReading {
  const used = ceilDiv(level, policy.windowMs);
  return { remaining: policy.capacity - used, used, secondsUntilEmpty: ceilDiv(level, policy.capacity * 1000) };
}

/** ceil(a / b) for integers a ≥ 0, b > 0, without floating-point division. */
function ceilDiv(a: number, b: number): number {
  const r = a % b;
  return (a - r) / b + (r > 0 ? 1 : 0);
}
