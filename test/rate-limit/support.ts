// Helpers of the rate-limit HTTP tests: bodies of an exact cost, a user of a given tier, the query request.
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { sql } from 'kysely';
import type { TestApp, TestResponse } from '../support/app.ts';
import { estimateRequest } from '../../src/telemetry/cost.ts';
import { QueryBodySchema } from '../../src/telemetry/telemetry.schemas.ts';

const DAY = 86_400_000;
/** a day boundary, so a range of k whole days is k shards of a `_one_s` namespace */
const DAY0 = Date.UTC(2025, 11, 1);

const query = (extra: object = {}) => ({ select: ['power'], from: { measurement: 'm', database: 'db', retentionPolicy: 'rp_one_s' }, ...extra });
/** an empty range: 0 datapoints, 0 shards — 150 hundredths alone */
const emptyQuery = query({ where: { time: [{ operator: '>=', value: DAY0 }, { operator: '<', value: DAY0 }] } });

/**
 * A request body whose cost (docs/api.md#cost) is exactly `cost` at any clock: a single query over k whole days at 1 s
 * with a limit, so 100·cost = 150 + limit + 200·k; cost 2 and 3 are one and three empty queries.
 */
export function bodyCosting(cost: number): unknown {
  let body: unknown;
  if (cost === 2) body = emptyQuery;
  else if (cost === 3) body = [emptyQuery, emptyQuery, emptyQuery];
  else {
    assert.ok(Number.isInteger(cost) && cost >= 4, `no body costs ${cost}`);
    let k = 1;
    while (86_400 * k < 100 * cost - 150 - 200 * k) k++;
    body = query({ where: { time: [{ operator: '>=', value: DAY0 }, { operator: '<', value: DAY0 + k * DAY }] }, limit: 100 * cost - 150 - 200 * k });
  }
  assert.equal(estimateRequest(v.parse(QueryBodySchema, body), 0).cost, cost, 'bodyCosting self-check');
  return body;
}

export async function userOfTier(t: TestApp, email: string, tier: 'free' | 'basic' | 'premium'): Promise<{ id: number; token: string }> {
  const user = await t.createUser(email);
  await t.deps.db.run(sql`UPDATE users SET tier = ${tier} WHERE id = ${user.id}`);
  return user;
}

export interface QueryOptions {
  token: string;
  cost?: number;
  body?: unknown;
  apiTier?: string;
  dryRun?: boolean;
  headers?: Record<string, string>;
}

export function postQuery(t: TestApp, o: QueryOptions): Promise<TestResponse> {
  const params = new URLSearchParams();
  if (o.apiTier !== undefined) params.set('apiTier', o.apiTier);
  if (o.dryRun !== undefined) params.set('dryRun', String(o.dryRun));
  const qs = params.size > 0 ? `?${params}` : '';
  return t.request('POST', `/v1/telemetry/query${qs}`, { token: o.token, body: o.body ?? bodyCosting(o.cost ?? 2), headers: o.headers });
}

/** The rate-limit headers of a response, absent ones as null. */
export function limitHeaders(res: TestResponse): Record<string, string | null> {
  const names = ['x-ratelimit-cost', 'x-ratelimit-remaining', 'x-ratelimit-used', 'ratelimit-policy', 'ratelimit', 'retry-after'];
  return Object.fromEntries(names.map((n) => [n, res.headers.get(n)]));
}
