// Response headers of the rate-limited telemetry query endpoint.
//
// X-RateLimit-Cost / -Remaining / -Used: the Eniris names (docs/api.md#rate-limit), integer cost units.
// RateLimit-Policy / RateLimit: the IETF fields as in draft-ietf-httpapi-ratelimit-headers-11 (May 2026), §3 and §4:
// Structured Field lists whose items are the policy name (a String) with parameters —
//   RateLimit-Policy: "basic";q=6000;w=60      q = quota (the bucket's capacity), w = window in seconds
//   RateLimit: "basic";r=5950;t=1              r = quota available now, t = seconds until the bucket has leaked empty
// A leaky bucket has no fixed window: w is the time in which the whole capacity leaks, and t is when `r` is back at `q`
// (never sooner than the draft's "within t seconds no more than r" promise needs). `qu` is omitted: the draft's unit
// registry has no entry for a computed query cost; docs/api.md#cost documents the unit.
import type { Context } from 'hono';
import type { BucketReading } from './leaky-bucket.ts';
import { TIERS, type Tier, type TierPolicy } from './tiers.ts';

export function costHeaders(cost: number, reading: BucketReading): Record<string, string> {
  return {
    'X-RateLimit-Cost': String(cost),
    'X-RateLimit-Remaining': String(reading.remaining),
    'X-RateLimit-Used': String(reading.used),
  };
}

/** The headers of an admitted request (and of a dry run): the X-RateLimit figures and both IETF fields. */
export function setQuotaHeaders(c: Context, cost: number, policy: TierPolicy, reading: BucketReading): void {
  // Set one by one: this runs on every admitted query, where intermediate header objects cost more than the headers.
  c.header('X-RateLimit-Cost', String(cost));
  c.header('X-RateLimit-Remaining', String(reading.remaining));
  c.header('X-RateLimit-Used', String(reading.used));
  c.header('RateLimit-Policy', POLICY_FIELD[policy.name]);
  c.header('RateLimit', `"${policy.name}";r=${reading.remaining};t=${reading.secondsUntilEmpty}`);
}

const POLICY_FIELD = Object.fromEntries(Object.values(TIERS)
  .map((p) => [p.name, `"${p.name}";q=${p.capacity};w=${p.windowMs / 1000}`])) as Record<Tier, string>;
