// Several nodes on one PostgreSQL database deliver each event once per subscription, whichever node claims it; a node
// that dies with claims in hand leaves them to the others when its lease ends. On SQLite, a claim left by a stopped
// process is taken over the same way.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, threeNodes, ROOT_ROLE_ID } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';
import { claimDue } from '../../src/events/events.store.ts';
import { LEASE_MS } from '../../src/events/dispatcher.ts';
import { startReceiver, deliveries } from './receiver.ts';

const skip = testBackend() !== 'postgres' && 'several nodes share a PostgreSQL database';
const ENV = { GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true' };

describe('events on several nodes', { skip }, () => {
  it('three nodes draining at once send each event once per subscription', async (t) => {
    const nodes = await threeNodes(t, { env: ENV });
    const [rx1, rx2] = [await startReceiver(), await startReceiver()];
    t.after(async () => { await rx1.close(); await rx2.close(); });
    for (const rx of [rx1, rx2]) {
      const res = await nodes[0].request('POST', `/v1/webhook?roleId=${ROOT_ROLE_ID}`, { token: nodes[0].adminToken, body: { name: 'x', url: rx.url } });
      assert.equal(res.status, 200, res.text);
    }
    // 60 changes spread over the nodes, then every node drains at the same time, several times over
    for (let i = 0; i < 60; i++) {
      const node = nodes[i % 3];
      const res = await node.request('POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { token: node.adminToken, body: { properties: { name: `d${i}` } } });
      assert.equal(res.status, 200, res.text);
    }
    const sent = await Promise.all([...nodes, ...nodes].map((n) => n.deps.events.drain()));
    assert.equal(sent.reduce((a, b) => a + b, 0), 120);
    for (const rx of [rx1, rx2]) {
      const ids = rx.received.map((r) => r.json.id);
      assert.equal(ids.length, 60);
      assert.equal(new Set(ids).size, 60, 'no event twice');
    }
    assert.ok((await deliveries(nodes[0])).every((d) => d.state === 'delivered'));
  });
});

describe('events: a claim whose node died', () => {
  it('is taken over when its lease ends, and delivered once', async (t) => {
    const app = await makeTestApp({ env: ENV });
    const rx = await startReceiver();
    t.after(async () => { await app.close(); await rx.close(); });
    const made = await app.request('POST', `/v1/webhook?roleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { name: 'x', url: rx.url } });
    await app.request('POST', `/v1/webhook/${made.body.webhook.id}/test`, { token: app.adminToken });
    // a node claims it and dies before it sends or records anything
    const now = app.clock.now();
    const claimed = await app.deps.db.tx((tx) => claimDue(tx, made.body.webhook.id, now, 10, now + LEASE_MS, 'dead-node'));
    assert.equal(claimed.length, 1);
    assert.equal(await app.deps.events.drain(), 0, 'not while the lease holds');
    app.clock.advance(LEASE_MS);
    assert.equal(await app.deps.events.drain(), 1);
    assert.equal(rx.received.length, 1);
    const [d] = await deliveries(app);
    assert.deepEqual([d.state, d.attempts], ['delivered', 1]);
    // the dead node's late outcome changes nothing: its lease is gone
    const lease = (await app.deps.db.get(sql<{ lease: string | null }>`SELECT lease FROM event_deliveries WHERE id = ${d.id}`))!.lease;
    assert.equal(lease, null);
  });
});
