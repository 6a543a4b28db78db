// POST /v1/telemetry/query under docs/api.md#rate-limit, black-box on a fake clock: headers, filling and leaking, the exact
// boundary, 422 and 429 with their bodies, dry runs, tiers and apiTier, IP bans, metrics, bounded state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, makeTestApp } from '../support/app.ts';
import { bodyCosting, limitHeaders, postQuery, userOfTier } from './support.ts';

describe('rate limit: admitted requests', () => {
  it('a 200 carries the X-RateLimit figures and the IETF RateLimit-Policy / RateLimit fields', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await app.createUser('u@example.com'); // basic by default
    const res = await postQuery(app, { token: user.token, cost: 40 });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(limitHeaders(res), {
      'x-ratelimit-cost': '40', 'x-ratelimit-remaining': '5960', 'x-ratelimit-used': '40',
      'ratelimit-policy': '"basic";q=6000;w=60', ratelimit: '"basic";r=5960;t=1', 'retry-after': null,
    });
  });

  it('fills with each request and leaks continuously (free: 100 per minute)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    assert.equal((await postQuery(app, { token: user.token, cost: 30 })).headers.get('x-ratelimit-remaining'), '70');
    assert.equal((await postQuery(app, { token: user.token, cost: 30 })).headers.get('x-ratelimit-remaining'), '40');
    app.clock.advance(6_000); // 10 units leaked
    const res = await postQuery(app, { token: user.token, cost: 20 });
    assert.deepEqual([res.headers.get('x-ratelimit-remaining'), res.headers.get('x-ratelimit-used'), res.headers.get('ratelimit')],
      ['30', '70', '"free";r=30;t=42']);
    app.clock.advance(42_000);
    assert.equal((await postQuery(app, { token: user.token, cost: 100 })).status, 200); // empty again: the whole capacity fits
  });

  it('cost == remaining is admitted; cost == remaining + 1 is not', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await postQuery(app, { token: user.token, cost: 57 });
    app.clock.advance(1_000); // 1.67 units leaked: remaining 44 (the partly leaked unit still counts as used)
    const dry = await postQuery(app, { token: user.token, cost: 2, dryRun: true });
    assert.equal(dry.body.remainingCapacity, 44);
    assertError(await postQuery(app, { token: user.token, cost: 45 }), 429, 'RATE_LIMITED');
    const ok = await postQuery(app, { token: user.token, cost: 44 });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers.get('x-ratelimit-remaining'), '0');
  });
});

describe('rate limit: refusals', () => {
  it('429 RATE_LIMITED: body fields, Retry-After rounded up, X-RateLimit headers; nothing charged; the wait is enough', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await postQuery(app, { token: user.token, cost: 95 });
    const res = await postQuery(app, { token: user.token, cost: 10 });
    const body = assertError(res, 429, 'RATE_LIMITED');
    // 5 remain; 10 fits after 5 more units leak = 3000 ms → 3 s
    assert.deepEqual({ cost: body.cost, remainingCapacity: body.remainingCapacity, usedCapacity: body.usedCapacity, retryAfter: body.retryAfter },
      { cost: 10, remainingCapacity: 5, usedCapacity: 95, retryAfter: 3 });
    assert.deepEqual(limitHeaders(res), {
      'x-ratelimit-cost': '10', 'x-ratelimit-remaining': '5', 'x-ratelimit-used': '95',
      'ratelimit-policy': null, ratelimit: null, 'retry-after': '3',
    });
    app.clock.advance(1_000);
    assert.equal(assertError(await postQuery(app, { token: user.token, cost: 11 }), 429, 'RATE_LIMITED').retryAfter, 3); // 2.4 s → 3
    app.clock.advance(1_999);
    assert.equal(assertError(await postQuery(app, { token: user.token, cost: 10 }), 429, 'RATE_LIMITED').retryAfter, 1); // 1 ms → 1 s
    app.clock.advance(1);
    assert.equal((await postQuery(app, { token: user.token, cost: 10 })).status, 200);
  });

  it('422 COST_EXCEEDS_CAPACITY when the cost can never fit; nothing is charged', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await postQuery(app, { token: user.token, cost: 10 });
    const res = await postQuery(app, { token: user.token, cost: 101 });
    const body = assertError(res, 422, 'COST_EXCEEDS_CAPACITY');
    assert.deepEqual([body.cost, body.maximumCapacity], [101, 100]);
    assert.equal(res.headers.get('x-ratelimit-cost'), '101');
    assert.equal(res.headers.get('retry-after'), null);
    // still 90 left
    assert.equal((await postQuery(app, { token: user.token, cost: 90 })).status, 200);
    // the capacity itself is fine on an empty bucket
    const premium = await userOfTier(app, 'p@example.com', 'premium');
    assert.equal((await postQuery(app, { token: premium.token, cost: 60_000 })).status, 200);
    assertError(await postQuery(app, { token: premium.token, cost: 60_001 }), 422, 'COST_EXCEEDS_CAPACITY');
  });

  it('rejections are counted in the metrics by reason', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await postQuery(app, { token: user.token, cost: 101 });
    await postQuery(app, { token: user.token, cost: 100 });
    await postQuery(app, { token: user.token, cost: 2 });
    await postQuery(app, { token: user.token, cost: 2 });
    const text = (await app.request('GET', '/metrics')).text;
    assert.match(text, /gridkeeper_ratelimit_rejections_total\{reason="cost_exceeds_capacity"\} 1\n/);
    assert.match(text, /gridkeeper_ratelimit_rejections_total\{reason="rate_limited"\} 2\n/);
  });
});

describe('rate limit: dry runs', () => {
  it('dryRun=true answers the figures and the remaining capacity, charges nothing, and answers no results', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await app.createUser('u@example.com');
    await postQuery(app, { token: user.token, cost: 100 });
    const body = bodyCosting(1234);
    const res = await postQuery(app, { token: user.token, body, dryRun: true });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { cost: 1234, estimatedDatapoints: 122_850, scannedShards: 2, remainingCapacity: 5900 });
    assert.deepEqual(limitHeaders(res), {
      'x-ratelimit-cost': '1234', 'x-ratelimit-remaining': '5900', 'x-ratelimit-used': '100',
      'ratelimit-policy': '"basic";q=6000;w=60', ratelimit: '"basic";r=5900;t=1', 'retry-after': null,
    });
    assert.equal((await postQuery(app, { token: user.token, body, dryRun: true })).body.remainingCapacity, 5900);
    assert.equal((await postQuery(app, { token: user.token, body, dryRun: false })).headers.get('x-ratelimit-remaining'), '4666');
  });

  it('a dry run answers 200 even when the request would be refused: the figures are what the client asked for', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await postQuery(app, { token: user.token, cost: 100 });
    const full = await postQuery(app, { token: user.token, cost: 50, dryRun: true });
    assert.deepEqual([full.status, full.body.cost, full.body.remainingCapacity], [200, 50, 0]);
    const huge = await postQuery(app, { token: user.token, cost: 500, dryRun: true });
    assert.deepEqual([huge.status, huge.body.cost, huge.body.remainingCapacity], [200, 500, 0]);
  });
});

describe('rate limit: tiers', () => {
  it('capacities follow the tier set with PUT /v1/user/{email}/tier', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await app.createUser('u@example.com');
    // the tier is read with the token's own check: an access token's session, an API token's row
    const created = await app.request('POST', '/user/tokens', { token: user.token, body: { name: 'reader', scopes: ['telemetry:read'] } });
    assert.equal(created.status, 201);
    const apiToken = (created.body as { token: string }).token;
    const capacityOf = async (token: string) => (await postQuery(app, { token, dryRun: true })).headers.get('ratelimit-policy');
    for (const token of [user.token, apiToken]) assert.equal(await capacityOf(token), '"basic";q=6000;w=60');
    for (const [tier, policy] of [['free', '"free";q=100;w=60'], ['premium', '"premium";q=60000;w=60']]) {
      assert.equal((await app.request('PUT', '/v1/user/u@example.com/tier', { token: app.adminToken, body: { tier } })).status, 204);
      for (const token of [user.token, apiToken]) assert.equal(await capacityOf(token), policy);
    }
  });

  it('apiTier may lower the tier (a bucket of its own); a higher one is 403; an unknown one 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await app.createUser('u@example.com'); // basic
    await postQuery(app, { token: user.token, cost: 100 });
    const low = await postQuery(app, { token: user.token, cost: 30, apiTier: 'free' });
    assert.equal(low.status, 200, low.text);
    assert.deepEqual([low.headers.get('ratelimit-policy'), low.headers.get('x-ratelimit-remaining')], ['"free";q=100;w=60', '70']);
    assertError(await postQuery(app, { token: user.token, cost: 71, apiTier: 'free' }), 429, 'RATE_LIMITED');
    assert.equal((await postQuery(app, { token: user.token, cost: 2, apiTier: 'basic' })).headers.get('x-ratelimit-remaining'), '5898');
    const high = assertError(await postQuery(app, { token: user.token, cost: 2, apiTier: 'premium' }), 403, 'FORBIDDEN');
    assert.match(high.message, /premium/);
    assertError(await postQuery(app, { token: user.token, cost: 2, apiTier: 'gold' }), 400, 'BAD_REQUEST');
    const free = await userOfTier(app, 'f@example.com', 'free');
    assertError(await postQuery(app, { token: free.token, cost: 2, apiTier: 'basic' }), 403, 'FORBIDDEN');
    const premium = await userOfTier(app, 'p@example.com', 'premium');
    assert.equal((await postQuery(app, { token: premium.token, cost: 2, apiTier: 'basic' })).headers.get('ratelimit-policy'), '"basic";q=6000;w=60');
  });

  it('buckets are per user', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await userOfTier(app, 'a@example.com', 'free');
    const b = await userOfTier(app, 'b@example.com', 'free');
    await postQuery(app, { token: a.token, cost: 100 });
    assert.equal((await postQuery(app, { token: b.token, cost: 100 })).status, 200);
  });
});
