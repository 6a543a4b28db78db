// IP bans over HTTP (docs/api.md#ip-bans): 10 requests within 60 s while Retry-After has not elapsed → 300 s of 429 IP_BANNED,
// without X-RateLimit headers; the client address honours GRIDKEEPER_TRUST_PROXY. And the limiter state stays bounded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, makeTestApp, type TestApp } from '../support/app.ts';
import { limitHeaders, postQuery, userOfTier } from './support.ts';

/** Fills the user's free bucket and gets a 429 whose Retry-After is 60 s. */
async function throttled(t: TestApp, token: string, headers?: Record<string, string>): Promise<void> {
  assert.equal((await postQuery(t, { token, cost: 100, headers })).status, 200);
  assert.equal(assertError(await postQuery(t, { token, cost: 100, headers }), 429, 'RATE_LIMITED').retryAfter, 60);
}

describe('ip bans', () => {
  it('the 10th request within 60 s before Retry-After elapsed is banned for 300 s; then the address is free again', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await throttled(app, user.token);
    for (let i = 0; i < 9; i++) {
      app.clock.advance(1_000);
      assertError(await postQuery(app, { token: user.token, cost: 100 }), 429, 'RATE_LIMITED');
    }
    app.clock.advance(1_000);
    const res = await postQuery(app, { token: user.token, cost: 2 });
    const body = assertError(res, 429, 'IP_BANNED');
    assert.equal(body.retryAfter, 300);
    assert.equal(body.cost, undefined);
    assert.deepEqual(limitHeaders(res), {
      'x-ratelimit-cost': null, 'x-ratelimit-remaining': null, 'x-ratelimit-used': null,
      'ratelimit-policy': null, ratelimit: null, 'retry-after': '300',
    });
    // every query from the address, dry runs and other users included, until the ban ends
    const other = await userOfTier(app, 'other@example.com', 'premium');
    app.clock.advance(120_500);
    const later = assertError(await postQuery(app, { token: other.token, cost: 2, dryRun: true }), 429, 'IP_BANNED');
    assert.equal(later.retryAfter, 180); // 179.5 s → 180
    // the ban before anything else: an apiTier above the caller's tier is not a 403 here, a lower one charges nothing
    assertError(await postQuery(app, { token: user.token, cost: 2, apiTier: 'premium' }), 429, 'IP_BANNED');
    assertError(await postQuery(app, { token: other.token, cost: 2, apiTier: 'free' }), 429, 'IP_BANNED');
    app.clock.advance(179_499);
    assertError(await postQuery(app, { token: user.token, cost: 2 }), 429, 'IP_BANNED');
    app.clock.advance(1);
    const after = await postQuery(app, { token: user.token, cost: 2 });
    assert.equal(after.status, 200, after.text);
    assert.equal(after.headers.get('x-ratelimit-remaining'), '98'); // the bucket leaked empty meanwhile
    const metrics = (await app.request('GET', '/metrics')).text;
    assert.match(metrics, /gridkeeper_ratelimit_rejections_total\{reason="ip_banned"\} 5\n/);
  });

  it('nine requests are not enough; nor are requests sent after Retry-After', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await throttled(app, user.token);
    for (let i = 0; i < 8; i++) assertError(await postQuery(app, { token: user.token, cost: 100 }), 429, 'RATE_LIMITED');
    // 9th strike, an admitted cheap one: still not banned
    app.clock.advance(30_000);
    assert.equal((await postQuery(app, { token: user.token, cost: 2 })).status, 200);
    app.clock.advance(30_000); // the Retry-After (60 s) has elapsed: these are not strikes
    for (let i = 0; i < 20; i++) assert.notEqual((await postQuery(app, { token: user.token, cost: 2 })).body?.code, 'IP_BANNED');
  });

  it('dry runs sent before Retry-After count toward the ban too', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await throttled(app, user.token);
    for (let i = 0; i < 9; i++) assert.equal((await postQuery(app, { token: user.token, cost: 2, dryRun: true })).status, 200);
    assertError(await postQuery(app, { token: user.token, cost: 2, dryRun: true }), 429, 'IP_BANNED');
  });

  it('without GRIDKEEPER_TRUST_PROXY, X-Forwarded-For cannot move a client out of its ban', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    await throttled(app, user.token);
    for (let i = 0; i < 9; i++) await postQuery(app, { token: user.token, cost: 100, headers: { 'x-forwarded-for': `198.51.100.${i}` } });
    assertError(await postQuery(app, { token: user.token, cost: 2, headers: { 'x-forwarded-for': '203.0.113.7' } }), 429, 'IP_BANNED');
  });

  it('with GRIDKEEPER_TRUST_PROXY, bans follow the forwarded address', async (t) => {
    const app = await makeTestApp({ env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    t.after(() => app.close());
    const user = await userOfTier(app, 'u@example.com', 'free');
    const bad = { 'x-forwarded-for': '198.51.100.1, 10.0.0.1' };
    await throttled(app, user.token, bad);
    for (let i = 0; i < 9; i++) await postQuery(app, { token: user.token, cost: 100, headers: bad });
    assertError(await postQuery(app, { token: user.token, cost: 2, headers: bad }), 429, 'IP_BANNED');
    // another client behind the same proxy is not banned (the user's bucket is still full, so: rate limited)
    assertError(await postQuery(app, { token: user.token, cost: 2, headers: { 'x-forwarded-for': '198.51.100.2' } }), 429, 'RATE_LIMITED');
    const other = await app.createUser('o@example.com');
    assert.equal((await postQuery(app, { token: other.token, cost: 2, headers: { 'x-forwarded-for': '198.51.100.2' } })).status, 200);
  });
});

describe('limiter state is bounded', () => {
  it('buckets of many users and the strikes of many addresses are evicted once idle: the size goes back down', async (t) => {
    const app = await makeTestApp({ env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    t.after(() => app.close());
    const limiter = app.deps.rateLimiter;
    const users = [];
    for (let i = 0; i < 40; i++) users.push(await userOfTier(app, `u${i}@example.com`, 'free'));
    for (const [i, u] of users.entries()) {
      const headers = { 'x-forwarded-for': `198.51.100.${i}` };
      await throttled(app, u.token, headers); // a bucket full to the brim and an address with a Retry-After
    }
    assert.deepEqual(await limiter.size(), { buckets: 40, addresses: 40 });
    app.clock.advance(61_000); // the free buckets have drained, the Retry-Afters elapsed; the sweep is due
    const fresh = await app.token(users[0].id);
    await postQuery(app, { token: fresh, cost: 2, dryRun: true, headers: { 'x-forwarded-for': '203.0.113.1' } });
    assert.deepEqual(await limiter.size(), { buckets: 0, addresses: 0 });
  });
});
