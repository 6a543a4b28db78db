// Enforces docs/api.md#rate-limit and #ip-bans on one telemetry query request, before anything executes: the IP ban, the tier, the cost
// against the (user, tier) bucket. The query route calls it with the request's estimate:
//
//   const dryRun = await enforceQueryCost(c, deps, estimateRequest(body, now), query);
//   if (dryRun) return c.json(dryRun);
//
// (`query` is the route's parsed ?apiTier=&dryRun=, declared in telemetry.schemas.ts QueryParamsSchema.)
//
// It rejects with the 403/422/429 ApiErrors, or charges the bucket and sets the X-RateLimit-* and RateLimit headers on `c`
// (a dry run charges nothing and gets the body to answer with).
import type { Context } from 'hono';
import type { AppEnv } from '../http/env.ts';
import { ApiError } from '../http/errors.ts';
import { clientIp, ipThrottleKey } from '../http/client-ip.ts';
import type { Db } from '../db/open.ts';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../http/metrics.ts';
import type { RateLimiter } from './limiter.ts';
import { costHeaders, setQuotaHeaders } from './headers.ts';
import { bucketKey } from './rate-limiter.ts';
import { findUserTier } from './tier.store.ts';
import { allowed, effectiveTier, type Tier, type TierPolicy } from './tiers.ts';
import type { Ban } from './ip-bans.ts';
import type { ChargeOutcome } from './leaky-bucket.ts';

export interface RateLimitOptions {
  apiTier?: Tier;
  dryRun?: boolean;
}

/** The parts of a running service the limiter uses (the route's Deps). */
export interface LimiterDeps {
  db: Db;
  config: Pick<Config, 'trustProxy'>;
  now: () => number;
  log: Logger;
  metrics: Metrics;
  rateLimiter: RateLimiter;
}

/** What a request will cost, estimated before it runs (src/telemetry/cost.ts estimateRequest). */
export interface CostEstimate {
  cost: number;
  estimatedDatapoints: number;
  scannedShards: number;
}

export interface DryRunAnswer {
  cost: number;
  estimatedDatapoints: number;
  scannedShards: number;
  remainingCapacity: number;
}

export async function enforceQueryCost(c: Context<AppEnv>, deps: LimiterDeps, estimate: CostEstimate, options: RateLimitOptions): Promise<DryRunAnswer | undefined> {
  const limiter = deps.rateLimiter;
  const now = deps.now();
  const ip = ipThrottleKey(clientIp(c, deps));

  const userId = c.var.actor.userId;
  const { cost } = estimate;
  // The ban comes first: a banned address gets nothing else — not a 403 for its apiTier, not a dry run — and no
  // X-RateLimit headers (they describe a bucket). Every query counts toward a ban, dry runs included: sent before the
  // Retry-After elapsed, they ignore it all the same. A charge whose tier is known and allowed goes with the ban's
  // check (admitAndCharge: one round trip on PostgreSQL); anything else is checked for a ban first.
  const known = options.dryRun ? undefined : c.var.actor.tier;
  const direct = known !== undefined && allowed(known, options.apiTier) ? effectiveTier(known, options.apiTier) : undefined;
  let outcome: ChargeOutcome | undefined;
  let policy: TierPolicy;
  if (direct !== undefined) {
    policy = direct;
    const admission = await limiter.admitAndCharge(ip, bucketKey(userId, policy.name), policy, cost, now);
    if (admission.ban !== undefined) banned(c, deps, ip, admission.ban);
    outcome = admission.outcome;
  } else {
    const ban = await limiter.admit(ip, now);
    if (ban !== undefined) banned(c, deps, ip, ban);
    const userTier = c.var.actor.tier ?? await findUserTier(deps.db, userId);
    if (userTier === undefined) throw new ApiError('UNAUTHENTICATED', 'the user of this token no longer exists');
    policy = effectiveTier(userTier, options.apiTier);
    const key = bucketKey(userId, policy.name);
    if (options.dryRun) {
      const reading = await limiter.peek(key, policy, now);
      setQuotaHeaders(c, cost, policy, reading);
      const { estimatedDatapoints, scannedShards } = estimate;
      return { cost, estimatedDatapoints, scannedShards, remainingCapacity: reading.remaining };
    }
    outcome = await limiter.charge(key, policy, cost, now);
  }

  if (outcome.ok) {
    setQuotaHeaders(c, cost, policy, outcome.reading);
    return undefined;
  }
  deps.metrics.bucketRejections.inc({ reason: outcome.reason });
  const { remaining, used } = outcome.reading;
  if (outcome.reason === 'cost_exceeds_capacity') {
    throw new ApiError('COST_EXCEEDS_CAPACITY', `this request costs ${cost}, more than the ${policy.capacity} the ${policy.name} tier's bucket holds`, {
      extra: { cost, maximumCapacity: policy.capacity }, headers: costHeaders(cost, outcome.reading),
    });
  }
  const { retryAfter } = outcome;
  await limiter.noteRetryAfter(ip, retryAfter, now);
  throw new ApiError('RATE_LIMITED', `this request costs ${cost} and only ${remaining} of the ${policy.name} tier's ${policy.capacity} are available; retry after ${retryAfter} s`, {
    extra: { cost, remainingCapacity: remaining, usedCapacity: used, retryAfter },
    headers: { 'Retry-After': String(retryAfter), ...costHeaders(cost, outcome.reading) },
  });
}

/** Answers 429 IP_BANNED for the ban in force. */
function banned(c: Context<AppEnv>, deps: LimiterDeps, ip: string, ban: Ban): never {
  if (ban.started) deps.log.warn('address banned for ignoring Retry-After', { requestId: c.get('requestId'), ip });
  deps.metrics.bucketRejections.inc({ reason: 'ip_banned' });
  const retryAfter = Math.ceil(ban.msLeft / 1000);
  throw new ApiError('IP_BANNED', `this address kept sending queries before its Retry-After elapsed and is banned; retry after ${retryAfter} s`, {
    extra: { retryAfter }, headers: { 'Retry-After': String(retryAfter) },
  });
}
