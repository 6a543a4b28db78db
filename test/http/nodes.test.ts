// Several nodes on one PostgreSQL database (issue 13): what one node writes, the others answer at once, and the
// checks that must hold exactly hold across nodes — a session ended on one node is ended on all, a device changed on
// one is read changed on the next, and an If-Unmodified-Since race spread over three nodes has one winner. Each node
// is a test app of its own (its own process state and connection pool) on the same database and clock.
// PostgreSQL only: the embedded SQLite backend is one process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_EMAIL, ADMIN_PASSWORD, makeTestApp, T0, type TestApp } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';

const skip = testBackend() !== 'postgres' && 'several nodes share a PostgreSQL database';
const iso = (ms: number) => new Date(ms).toISOString();

async function threeNodes(t: { after(fn: () => Promise<void>): void }): Promise<TestApp[]> {
  const a = await makeTestApp();
  const b = await a.anotherNode();
  const c = await a.anotherNode();
  t.after(async () => {
    await c.close();
    await b.close();
    await a.close();
  });
  return [a, b, c];
}

describe('several nodes on one database', { skip }, () => {
  it('log in on A, get an access token on B, use it on C; log out on C: the session is refused on A and B', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const login = await a.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200, login.text);
    const access = await b.request('GET', '/auth/accesstoken', { token: login.text });
    assert.equal(access.status, 200, access.text);
    assert.deepEqual((await c.request('GET', '/auth/accesstoken/validate', { token: access.text })).body, { userId: a.adminId });
    assert.equal((await c.request('POST', '/auth/logout', { token: login.text })).status, 204);
    for (const node of [a, b]) {
      assert.equal((await node.request('GET', '/auth/accesstoken', { token: login.text })).status, 401);
      assert.equal((await node.request('GET', '/auth/refreshtoken/validate', { token: login.text })).status, 401);
    }
  });

  it('a device created and patched on A is read, changed, on B and C at once', async (t) => {
    const [a, b, c] = await threeNodes(t);
    const created = await a.request('POST', '/v1/device?roleId=1', { token: a.adminToken, body: { properties: { nodeId: 'n1', owner: 'first' } } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.device.id;
    const patched = await a.request('PATCH', `/v1/device/${id}`, { token: a.adminToken, body: [{ op: 'replace', path: '/owner', value: 'second' }] });
    assert.equal(patched.status, 200, patched.text);
    for (const node of [b, c]) {
      const read = await node.request('POST', '/v1/device/query', { token: node.adminToken, body: {} });
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(read.body.device.map((d: { id: number; properties: unknown }) => [d.id, d.properties]), [[id, { nodeId: 'n1', owner: 'second' }]]);
    }
  });

  it('30 PATCHes with one If-Unmodified-Since spread over three nodes: exactly one wins, the others get 412', async (t) => {
    const nodes = await threeNodes(t);
    const [a] = nodes;
    const created = await a.request('POST', '/v1/device?roleId=1', { token: a.adminToken, body: { properties: { owner: 'nobody' } } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.device.id;
    a.clock.advance(60_000);
    const header = { 'if-unmodified-since': iso(T0) };
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => nodes[i % 3].request('PATCH', `/v1/device/${id}`,
      { token: nodes[i % 3].adminToken, body: [{ op: 'replace', path: '/owner', value: `client-${i}` }], headers: header })));
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 412).length, 29, JSON.stringify(statuses));
    const winner = results.find((r) => r.status === 200)!;
    const read = await nodes[2].request('POST', '/v1/device/query', { token: nodes[2].adminToken, body: {} });
    assert.deepEqual(read.body.device[0].properties, winner.body.device.properties);
  });
});
