// Several nodes on one PostgreSQL database (issue 13): the telemetry query limiter's buckets and bans are shared, so a
// limit holds whatever node takes each request — spent on one node, refused on another with the right Retry-After;
// concurrent charges spread over three nodes admit exactly what fits; strikes counted on different nodes add up to a
// ban that every node enforces. PostgreSQL only: the embedded SQLite backend is one process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, threeNodes } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';
import { limitHeaders, postQuery, userOfTier } from './support.ts';

const skip = testBackend() !== 'postgres' && 'several nodes share a PostgreSQL database';


describe('the query limiter across nodes', { skip }, () => {
  it('a bucket spent on node A refuses on nodes B and C, with the Retry-After and readings of the one bucket', async (t) => {
    const [a, b, c] = await threeNodes(t, { env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    const user = await userOfTier(a, 'spender@example.com', 'free');
    assert.equal((await postQuery(a, { token: user.token, cost: 100 })).status, 200);
    for (const node of [b, c]) {
      const refused = assertError(await postQuery(node, { token: user.token, cost: 2 }), 429, 'RATE_LIMITED');
      assert.equal(refused.retryAfter, 2);
      assert.equal(refused.remainingCapacity, 0);
    }
    const dry = await postQuery(b, { token: user.token, cost: 2, dryRun: true });
    assert.equal(dry.status, 200);
    assert.equal(dry.body.remainingCapacity, 0);
    // it leaks on every node alike: 30 s later half the capacity is back
    a.clock.advance(30_000);
    assert.equal((await postQuery(c, { token: user.token, cost: 50 })).status, 200);
    assertError(await postQuery(a, { token: user.token, cost: 2 }), 429, 'RATE_LIMITED');
  });

  it('30 concurrent charges of 10 spread over three nodes admit exactly the 10 that fit a capacity of 100', async (t) => {
    const nodes = await threeNodes(t, { env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    const user = await userOfTier(nodes[0], 'racer@example.com', 'free');
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => postQuery(nodes[i % 3], { token: user.token, cost: 10 })));
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 10, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 429).length, 20, JSON.stringify(statuses));
    assert.deepEqual(await nodes[1].deps.rateLimiter.size(), { buckets: 1, addresses: 1 });
  });

  it('a node charging from the row it wrote last notices charges made on another node in between', async (t) => {
    const [a, b] = await threeNodes(t, { env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    const user = await userOfTier(a, 'alternating@example.com', 'free');
    // each node charges from the row it wrote last: right when nobody wrote since, refused by the row when B did
    for (const [node, cost, remaining] of [[a, 20, 80], [a, 10, 70], [b, 30, 40], [a, 25, 15], [a, 5, 10], [b, 4, 6], [a, 6, 0]] as const) {
      const res = await postQuery(node, { token: user.token, cost });
      assert.equal(res.status, 200, res.text);
      assert.equal(limitHeaders(res)['x-ratelimit-remaining'], String(remaining), `after ${cost} on ${node === a ? 'A' : 'B'}`);
    }
    for (const node of [a, b]) assertError(await postQuery(node, { token: user.token, cost: 2 }), 429, 'RATE_LIMITED');
    assert.deepEqual(await b.deps.rateLimiter.size(), { buckets: 1, addresses: 1 });
  });

  it('strikes sent to different nodes add up: the 10th bans the address on every node', async (t) => {
    const nodes = await threeNodes(t, { env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    const user = await userOfTier(nodes[0], 'striker@example.com', 'free');
    const headers = { 'x-forwarded-for': '198.51.100.7' };
    assert.equal((await postQuery(nodes[0], { token: user.token, cost: 100, headers })).status, 200);
    assertError(await postQuery(nodes[0], { token: user.token, cost: 100, headers }), 429, 'RATE_LIMITED');
    for (let i = 0; i < 9; i++) {
      nodes[0].clock.advance(1_000);
      assertError(await postQuery(nodes[i % 3], { token: user.token, cost: 100, headers }), 429, 'RATE_LIMITED');
    }
    nodes[0].clock.advance(1_000);
    const banned = assertError(await postQuery(nodes[0], { token: user.token, cost: 2, headers }), 429, 'IP_BANNED');
    assert.equal(banned.retryAfter, 300);
    for (const node of nodes) assertError(await postQuery(node, { token: user.token, cost: 2, headers }), 429, 'IP_BANNED');
    // another address is not banned on any node
    const other = await nodes[1].createUser('other@example.com');
    assert.equal((await postQuery(nodes[2], { token: other.token, cost: 2, headers: { 'x-forwarded-for': '198.51.100.8' } })).status, 200);
  });
});
