// Response headers of the rate-limited telemetry query endpoint.
//
// X-RateLimit-Cost / -Remaining / -Used: the Eniris names (contract §7.4), integer cost units.
// RateLimit-Policy / RateLimit: the IETF fields as in draft-ietf-httpapi-ratelimit-headers-11 (May 2026), §3 and §4:
// Structured Field lists whose items are the policy name (a String) with parameters —
//   RateLimit-Policy: "basic";q=6000;w=60      q = quota (the bucket's capacity), w = window in seconds
//   RateLimit: "basic";r=5950;t=1              r = quota available now, t = seconds until the bucket has leaked empty
// A leaky bucket has no fixed window: w is the time in which the whole capacity leaks, and t is when `r` is back at `q`
// (never sooner than the draft's "within t seconds no more than r" promise needs). `qu` is omitted: the draft's unit
// registry has no entry for a computed query cost; the contract documents the unit.
import type { BucketReading } from './leaky-bucket.ts';
import type { TierPolicy } from './tiers.ts';

export function costHeaders(cost: number, reading: BucketReading): Record<string, string> {
  return {
    'X-RateLimit-Cost': String(cost),
    'X-RateLimit-Remaining': String(reading.remaining),
    'X-RateLimit-Used': String(reading.used),
  };
}

export function policyHeaders(policy: TierPolicy, reading: BucketReading): Record<string, string> {
  return {
    'RateLimit-Policy': `"${policy.name}";q=${policy.capacity};w=${policy.windowMs / 1000}`,
    'RateLimit': `"${policy.name}";r=${reading.remaining};t=${reading.secondsUntilEmpty}`,
  };
}
