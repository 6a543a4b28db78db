// Deliveries are claimed and settled in batches: one statement claims a subscription's due deliveries, outcomes that
// end alike are settled together, each settled one keeps its attempt, a claim taken over meanwhile changes nothing, and
// the subscription's run of failures follows the outcomes in their order. A body whose data the role sees in full is
// the stored text as it is, the same JSON as the envelope serialized.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { claimDue, eventsByIds, recordOutcomes, type Outcome } from '../../src/events/events.store.ts';
import { envelopeBody, envelopeFor } from '../../src/events/payload.ts';
import { writeEvents } from '../../src/events/outbox.ts';
import type { SubscriberRights } from '../../src/access/subscribers.ts';
import type { DeviceAccess } from '../../src/access/rights.ts';

const ENV = { GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true' };

async function subscriptionWithEvents(t: TestApp, count: number): Promise<number> {
  const made = await t.request('POST', `/v1/webhook?roleId=${ROOT_ROLE_ID}`, { token: t.adminToken, body: { name: 'x', url: 'http://127.0.0.1:9/hook', types: ['device.*'] } });
  assert.equal(made.status, 200, made.text);
  await t.deps.db.tx((tx) => writeEvents(tx, Array.from({ length: count }, (_, i) => ({
    type: 'device.updated', at: t.clock.now(), subject: 'device', subjectId: '7', audience: 'device' as const, roleId: null, deviceId: 7,
    data: { changes: { n: { before: i, after: i + 1 } } },
  }))));
  return made.body.webhook.id;
}

interface Row { id: number; state: string; attempts: number; next_at: number; lease: string | null; last_status: number | null; last_error: string | null }
const rows = (t: TestApp) => t.deps.db.all(sql<Row>`SELECT id, state, attempts, next_at, lease, last_status, last_error FROM event_deliveries ORDER BY id`);
const attempts = (t: TestApp) => t.deps.db.all(sql<{ delivery_id: number; status: number | null }>`SELECT delivery_id, status FROM event_attempts ORDER BY id`);
const run = (t: TestApp, id: number) => t.deps.db.get(sql<{ failures: number; failing_since: number | null }>`SELECT failures, failing_since FROM event_subscriptions WHERE id = ${id}`);

describe('events: claims and outcomes in batches', () => {
  it('one claim takes up to its limit, oldest first, and leaves the rest due', async (t) => {
    const app = await makeTestApp({ env: ENV });
    t.after(() => app.close());
    const sub = await subscriptionWithEvents(app, 5);
    const now = app.clock.now();
    const claimed = await app.deps.db.tx((tx) => claimDue(tx, sub, now, 3, now + 60_000, 'lease-a'));
    const all = await rows(app);
    assert.deepEqual(claimed.map((c) => c.id), all.slice(0, 3).map((r) => r.id));
    assert.deepEqual(claimed.map((c) => c.attempts), [0, 0, 0]);
    assert.deepEqual(all.map((r) => [r.lease, r.next_at]), [
      ['lease-a', now + 60_000], ['lease-a', now + 60_000], ['lease-a', now + 60_000], [null, now], [null, now]]);
    const events = await eventsByIds(app.deps.db, claimed.map((c) => c.event_id));
    assert.deepEqual([...events.keys()].sort(), claimed.map((c) => c.event_id).sort());
    // the same rows are not claimed twice while the lease holds
    const again = await app.deps.db.tx((tx) => claimDue(tx, sub, now, 10, now + 60_000, 'lease-b'));
    assert.deepEqual(again.map((c) => c.id), all.slice(3).map((r) => r.id));
  });

  it('settles a batch: alike outcomes together, attempts of the settled only, a taken-over claim untouched', async (t) => {
    const app = await makeTestApp({ env: ENV });
    t.after(() => app.close());
    const sub = await subscriptionWithEvents(app, 5);
    const now = app.clock.now();
    const [a, b, c, d] = await app.deps.db.tx((tx) => claimDue(tx, sub, now, 4, now + 60_000, 'mine'));
    // d was taken over by another node after this one's lease ended
    await app.deps.db.run(sql`UPDATE event_deliveries SET lease = 'other' WHERE id = ${d.id}`);
    const attempt = (status: number | null, error: string | null) => ({ at: now, durationMs: 3, status, error, response: '' });
    const base = { subscriptionId: sub, lease: 'mine' };
    const outcomes: Outcome[] = [
      { ...base, deliveryId: a.id, state: 'pending', nextAt: now + 5_000, attempt: attempt(503, 'answered 503'), subscription: 'failure', error: 'answered 503' },
      { ...base, deliveryId: b.id, state: 'delivered', attempt: attempt(204, null), subscription: 'none' },
      { ...base, deliveryId: c.id, state: 'delivered', attempt: attempt(200, null), subscription: 'none' },
      { ...base, deliveryId: d.id, state: 'delivered', attempt: attempt(204, null), subscription: 'none' },
    ];
    await app.deps.db.tx((tx) => recordOutcomes(tx, outcomes, now + 10));
    const after = new Map((await rows(app)).map((r) => [r.id, r]));
    assert.deepEqual(after.get(a.id), { id: a.id, state: 'pending', attempts: 1, next_at: now + 5_000, lease: null, last_status: 503, last_error: 'answered 503' });
    assert.deepEqual(after.get(b.id), { id: b.id, state: 'delivered', attempts: 1, next_at: now + 10, lease: null, last_status: 204, last_error: null });
    assert.deepEqual(after.get(c.id), { id: c.id, state: 'delivered', attempts: 1, next_at: now + 10, lease: null, last_status: 200, last_error: null });
    assert.deepEqual([after.get(d.id)!.state, after.get(d.id)!.attempts, after.get(d.id)!.lease], ['pending', 0, 'other']);
    assert.deepEqual(await attempts(app), [{ delivery_id: a.id, status: 503 }, { delivery_id: b.id, status: 204 }, { delivery_id: c.id, status: 200 }]);
    // the failure was followed by successes in the same batch: no run of failures is left
    assert.deepEqual(await run(app, sub), { failures: 0, failing_since: null });
  });

  it('counts a run of failures in order: failures after a success start a new run, without one they add up', async (t) => {
    const app = await makeTestApp({ env: ENV });
    t.after(() => app.close());
    const sub = await subscriptionWithEvents(app, 6);
    const now = app.clock.now();
    await app.deps.db.run(sql`UPDATE event_subscriptions SET failures = 4, failing_since = ${now - 1_000} WHERE id = ${sub}`);
    const claimed = await app.deps.db.tx((tx) => claimDue(tx, sub, now, 6, now + 60_000, 'l'));
    const fail = (i: number, at: number): Outcome => ({ deliveryId: claimed[i].id, subscriptionId: sub, lease: 'l', state: 'pending', nextAt: at + 5_000,
      attempt: { at, durationMs: 1, status: 500, error: 'answered 500', response: '' }, subscription: 'failure', error: 'answered 500' });
    const ok = (i: number, at: number): Outcome => ({ deliveryId: claimed[i].id, subscriptionId: sub, lease: 'l', state: 'delivered',
      attempt: { at, durationMs: 1, status: 204, error: null, response: '' }, subscription: 'success' });
    // fail, success, fail, fail: a new run of two since the first failure after the success
    await app.deps.db.tx((tx) => recordOutcomes(tx, [fail(0, now + 1), ok(1, now + 2), fail(2, now + 3), fail(3, now + 4)], now + 5));
    assert.deepEqual(await run(app, sub), { failures: 2, failing_since: now + 3 });
    // two more failures, no success: they add to the stored run, which keeps its start
    await app.deps.db.tx((tx) => recordOutcomes(tx, [fail(4, now + 6), fail(5, now + 7)], now + 8));
    assert.deepEqual(await run(app, sub), { failures: 4, failing_since: now + 3 });
    assert.equal((await attempts(app)).length, 6);
  });
});

describe('events: the body as sent', () => {
  const event = {
    id: 1, uid: 'evt_AZrMAAAAAAAAAAAAAAAAAA', type: 'device.updated', at: Date.UTC(2026, 0, 2, 3, 4, 5, 6), subject_kind: 'device', subject_id: '42',
    audience: 'device' as const, role_id: null, device_id: 42, data: JSON.stringify({ changes: { name: { before: 'a', after: 'b' }, secret: { before: 1, after: 2 } } }),
  };
  const rights = (access: Partial<DeviceAccess> | undefined, root = false): SubscriberRights => ({
    root, reach: new Set(), members: new Set(), licenses: new Set(),
    devices: new Map(access === undefined ? [] : [[42, access as DeviceAccess]]),
  });

  it('is the envelope serialized, with the stored data as it is when all of it is seen', () => {
    const body = envelopeBody(event, rights(undefined, true), 'site-1')!;
    assert.equal(body, JSON.stringify(envelopeFor(event, rights(undefined, true), 'site-1')));
    assert.deepEqual(JSON.parse(body), {
      id: event.uid, type: 'device.updated', time: '2026-01-02T03:04:05.006Z', installation: 'site-1', subject: { kind: 'device', id: 42 },
      data: { changes: { name: { before: 'a', after: 'b' }, secret: { before: 1, after: 2 } } },
    });
  });

  it('keeps only the readable properties, and is not sent when none is readable or the device is not', () => {
    const access = (reads: string[], canRead = true): DeviceAccess => ({ deviceId: 42, canRead, monitorManagement: false, reads: new Set(reads), edits: new Set() });
    const body = envelopeBody(event, rights(access(['name'])), 'site-1')!;
    assert.deepEqual(JSON.parse(body).data, { changes: { name: { before: 'a', after: 'b' } } });
    assert.equal(body, JSON.stringify(envelopeFor(event, rights(access(['name'])), 'site-1')));
    assert.equal(envelopeBody(event, rights(access(['other'])), 'site-1'), undefined, 'no readable property left');
    assert.equal(envelopeBody(event, rights(access(['name'], false)), 'site-1'), undefined, 'the device is not readable');
    assert.equal(envelopeBody(event, rights(undefined), 'site-1'), undefined, 'the device is not among the role\'s');
  });
});
