// Webhooks end to end against a local receiver: Standard Webhooks signatures (checked with the specification's own
// library), secret rotation, retries and their schedule, Retry-After, 410, redirects, the delivery log, test events,
// replays, and what a subscription's role may receive.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { makeTestApp, assertError, type TestApp } from '../support/app.ts';
import { ROOT_ROLE_ID } from '../../src/access/root.ts';
import { addRole, addManages, addDevice, addMonitors, userIn, flags, ALL } from '../roles/fixtures.ts';
import { startReceiver, deliveries, type Receiver } from './receiver.ts';
import { RETRY_DELAYS_MS } from '../../src/events/retry.ts';
import { postWebhook } from '../../src/events/webhook-sender.ts';

const INTERNAL = { GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL: 'true', GRIDKEEPER_INSTALLATION: 'site-a' };

async function setup(t: { after(fn: () => Promise<void>): void }, env: Record<string, string> = INTERNAL): Promise<{ app: TestApp; rx: Receiver }> {
  // a clock at the real time: the library refuses signatures more than 5 minutes from its own clock
  const app = await makeTestApp({ now: Date.now(), env });
  const rx = await startReceiver();
  t.after(async () => { await app.close(); await rx.close(); });
  return { app, rx };
}

async function hook(t: TestApp, roleId: number, body: Record<string, unknown>, token = t.adminToken): Promise<any> {
  const res = await t.request('POST', `/v1/webhook?roleId=${roleId}`, { token, body });
  assert.equal(res.status, 200, res.text);
  return res.body.webhook;
}

async function patchName(t: TestApp, deviceId: number, name: string): Promise<void> {
  const res = await t.request('PATCH', `/v1/device/${deviceId}`, { token: t.adminToken, body: [{ op: 'add', path: '/name', value: name }] });
  assert.equal(res.status, 200, res.text);
}

describe('webhooks: delivery and signatures', () => {
  it('a change reaches the endpoint once, signed as Standard Webhooks specify, with the event\'s shape', async (t) => {
    const { app, rx } = await setup(t);
    const w = await hook(app, ROOT_ROLE_ID, { name: 'bms', url: rx.url, types: ['device.*'] });
    assert.match(w.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual({ ...w, secret: undefined, id: undefined, createdAt: undefined, updatedAt: undefined }, {
      roleId: ROOT_ROLE_ID, kind: 'webhook', name: 'bms', url: rx.url, topicPrefix: null, types: ['device.*'], enabled: true,
      disabledAt: null, disabledReason: null, failures: 0, failingSince: null, previousSecretUntil: null,
      secret: undefined, id: undefined, createdAt: undefined, updatedAt: undefined,
    });
    const stored = (await app.deps.db.get(sql<{ secret: string }>`SELECT secret FROM event_subscriptions WHERE id = ${w.id}`))!;
    assert.ok(!stored.secret.includes(w.secret.slice(6)), 'the secret is sealed at rest');

    const device = await addDevice(app, { name: 'meter' });
    await addMonitors(app, ROOT_ROLE_ID, device, { mm: true });
    await patchName(app, device, 'meter 2');
    await app.request('PUT', `/v1/role/${ROOT_ROLE_ID}/member?userEmail=x@example.com`, { token: app.adminToken, body: {} }); // not a device event
    assert.equal(await app.deps.events.drain(), 1);
    assert.equal(rx.received.length, 1);
    const got = rx.received[0];
    const verified = new Webhook(w.secret).verify(got.body, got.headers) as any;
    assert.equal(verified.type, 'device.updated');
    assert.match(got.headers['webhook-id'], /^evt_/);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.deepEqual(got.json, {
      id: got.headers['webhook-id'], type: 'device.updated', time: new Date(app.clock.now()).toISOString(), installation: 'site-a',
      subject: { kind: 'device', id: device }, data: { changes: { name: { before: 'meter', after: 'meter 2' } } },
    });
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got.body, got.headers), /signature/i);
    const [d] = await deliveries(app);
    assert.deepEqual([d.state, d.attempts], ['delivered', 1]);
    // delivered is delivered: nothing more to do
    assert.equal(await app.deps.events.drain(), 0);
    assert.equal(rx.received.length, 1);
  });

  it('during a rotation each delivery carries both signatures; either secret verifies', async (t) => {
    const { app, rx } = await setup(t);
    const w = await hook(app, ROOT_ROLE_ID, { name: 'bms', url: rx.url });
    const rotated = await app.request('POST', `/v1/webhook/${w.id}/secret`, { token: app.adminToken });
    assert.equal(rotated.status, 200, rotated.text);
    assert.notEqual(rotated.body.secret, w.secret);
    assert.equal(rotated.body.previousSecretUntil, new Date(app.clock.now() + 24 * 3600_000).toISOString());
    const test = await app.request('POST', `/v1/webhook/${w.id}/test`, { token: app.adminToken });
    assert.equal(test.status, 200, test.text);
    await app.deps.events.drain();
    const got = rx.received[0];
    assert.equal(got.json.id, test.body.eventId);
    assert.equal(got.json.type, 'subscription.tested');
    assert.equal(got.headers['webhook-signature'].split(' ').length, 2);
    for (const secret of [w.secret, rotated.body.secret]) assert.equal((new Webhook(secret).verify(got.body, got.headers) as any).id, test.body.eventId);
  });

  it('a failure is retried on the schedule with jitter, honours Retry-After, and ends as failed after the last attempt', async (t) => {
    const { app, rx } = await setup(t);
    const w = await hook(app, ROOT_ROLE_ID, { name: 'bms', url: rx.url });
    rx.answers.push({ status: 500, body: 'down for maintenance' });
    await app.request('POST', `/v1/webhook/${w.id}/test`, { token: app.adminToken });
    await app.deps.events.drain();
    let [d] = await deliveries(app);
    assert.deepEqual([d.state, d.attempts, d.last_error], ['pending', 1, 'answered 500']);
    const first = app.clock.now();
    assert.ok(d.next_at >= first + RETRY_DELAYS_MS[0] * 0.8 && d.next_at <= first + RETRY_DELAYS_MS[0] * 1.2, `next attempt at +${d.next_at - first} ms`);
    // not due yet: nothing is sent
    assert.equal(await app.deps.events.drain(), 0);
    rx.answers.push({ status: 503, headers: { 'retry-after': '3600' } });
    app.clock.set(d.next_at);
    await app.deps.events.drain();
    [d] = await deliveries(app);
    assert.equal(d.attempts, 2);
    assert.ok(d.next_at >= app.clock.now() + 3600_000, 'Retry-After postpones the next attempt');
    // every attempt fails until the last
    for (let i = 0; i < 20 && d.state === 'pending'; i++) {
      rx.answers.push({ status: 500 });
      app.clock.set(d.next_at);
      await app.deps.events.drain();
      [d] = await deliveries(app);
    }
    assert.deepEqual([d.state, d.attempts], ['failed', 10]);
    assert.match(d.last_error!, /the last/);
    const token = await app.token(app.adminId);
    const log = await app.request('GET', `/v1/webhook/${w.id}/delivery/${d.id}`, { token });
    assert.equal(log.status, 200, log.text);
    assert.equal(log.body.attempts.length, 10);
    assert.deepEqual(log.body.attempts[0], { at: new Date(first).toISOString(), durationMs: log.body.attempts[0].durationMs, status: 500, error: 'answered 500', response: 'down for maintenance' });
    assert.equal(log.body.delivery.state, 'failed');
    const sub = await app.request('GET', `/v1/webhook/${w.id}`, { token });
    assert.equal(sub.body.webhook.failures, 10);
    assert.equal(sub.body.webhook.failingSince, new Date(first).toISOString());
  });

  it('410 Gone disables the endpoint and says why; a redirect is a failure; enabling again starts afresh', async (t) => {
    const { app, rx } = await setup(t);
    const w = await hook(app, ROOT_ROLE_ID, { name: 'bms', url: rx.url });
    rx.answers.push({ status: 302, headers: { location: 'http://example.test/' } });
    await app.request('POST', `/v1/webhook/${w.id}/test`, { token: app.adminToken });
    await app.deps.events.drain();
    assert.match((await deliveries(app))[0].last_error!, /redirects are not followed/);
    rx.answers.push({ status: 410 });
    app.clock.advance(10_000);
    await app.deps.events.drain();
    const gone = (await app.request('GET', `/v1/webhook/${w.id}`, { token: app.adminToken })).body.webhook;
    assert.equal(gone.enabled, false);
    assert.match(gone.disabledReason, /410 Gone/);
    // a disabled endpoint gets nothing new
    await app.request('POST', '/v1/device?roleId=1', { token: app.adminToken, body: { properties: {} } });
    assert.equal((await deliveries(app)).length, 1);
    const on = await app.request('PUT', `/v1/webhook/${w.id}`, { token: app.adminToken, body: { name: 'bms', url: rx.url, types: ['*'], enabled: true } });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual([on.body.webhook.enabled, on.body.webhook.disabledReason, on.body.webhook.failures], [true, null, 0]);
  });

  it('an endpoint failing for three days is disabled, with the reason', async (t) => {
    const { app, rx } = await setup(t);
    const w = await hook(app, ROOT_ROLE_ID, { name: 'bms', url: rx.url });
    for (let i = 0; i < 200; i++) rx.answers.push({ status: 500 });
    for (let i = 0; i < 11; i++) {
      await app.request('POST', `/v1/webhook/${w.id}/test`, { token: await app.token(app.adminId) });
      await app.deps.events.drain();
      app.clock.advance(8 * 3600_000);
    }
    const off = (await app.request('GET', `/v1/webhook/${w.id}`, { token: await app.token(app.adminId) })).body.webhook;
    assert.equal(off.enabled, false);
    assert.match(off.disabledReason, /every attempt failed since .* \(\d+ failures\)/);
  });

  it('an answer that takes too long is a failure (the timeout, made short here)', async (t) => {
    const { rx } = await setup(t);
    rx.answers.push({ status: 200 });
    const http = await import('node:http');
    const silent = http.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => { silent.closeAllConnections(); silent.close(() => r()); }));
    const port = (silent.address() as { port: number }).port;
    const result = await postWebhook(`http://127.0.0.1:${port}/`, {}, '{}', { allowInternal: true, timeoutMs: 50 });
    assert.deepEqual(result, { status: null, error: 'no complete answer within 0.05 s', response: null });
    const refused = await postWebhook(`http://127.0.0.1:${port}/`, {}, '{}', { allowInternal: false });
    assert.equal(refused.status, null);
    assert.match(refused.error!, /refused: 127\.0\.0\.1 is a loopback address/);
    const named = await postWebhook(`http://localhost:${port}/`, {}, '{}', { allowInternal: false });
    assert.match(named.error!, /refused: localhost resolves to a loopback address/);
  });
});

describe('webhooks: what a role receives', () => {
  it('a device event carries only the properties the role may read, and nothing where it may read none', async (t) => {
    const { app, rx } = await setup(t);
    const site = await addRole(app, 'site');
    await addManages(app, ROOT_ROLE_ID, site, ALL);
    const other = await addRole(app, 'other');
    await addManages(app, ROOT_ROLE_ID, other, ALL);
    const device = await addDevice(app, { name: 'meter', secret: 'a' });
    await addMonitors(app, ROOT_ROLE_ID, device, { mm: true });
    await addMonitors(app, site, device, { reads: ['name'] });
    const w = await hook(app, site, { name: 'bms', url: rx.url });
    await hook(app, other, { name: 'elsewhere', url: rx.url });
    await app.request('PATCH', `/v1/device/${device}`, { token: app.adminToken, body: [{ op: 'replace', path: '/name', value: 'm2' }, { op: 'replace', path: '/secret', value: 'b' }] });
    await app.request('PATCH', `/v1/device/${device}`, { token: app.adminToken, body: [{ op: 'replace', path: '/secret', value: 'c' }] });
    await app.deps.events.drain();
    assert.equal(rx.received.length, 1);
    assert.deepEqual(rx.received[0].json.data, { changes: { name: { before: 'meter', after: 'm2' } } });
    const log = await app.request('POST', `/v1/webhook/${w.id}/delivery/query`, { token: app.adminToken, body: {} });
    // what the role may not read is not sent, and leaves no trace in its log
    assert.deepEqual(log.body.deliveries.map((d: any) => [d.event.type, d.state]), [['device.updated', 'delivered']]);
    const others = await app.request('POST', '/v1/webhook/query', { token: app.adminToken, body: { filter: { roleId: [other] } } });
    const otherLog = await app.request('POST', `/v1/webhook/${others.body.webhook[0].id}/delivery/query`, { token: app.adminToken, body: {} });
    assert.deepEqual(otherLog.body.deliveries, [], 'a role that cannot read the device hears nothing of it');
    assert.equal((await deliveries(app)).length, 1);
    // nor can it have one replayed: an event it may not read is answered like one that does not exist
    const hidden = (await app.deps.db.get(sql<{ uid: string }>`SELECT uid FROM events WHERE type = 'device.updated' ORDER BY id LIMIT 1`))!.uid;
    assertError(await app.request('POST', `/v1/webhook/${others.body.webhook[0].id}/replay`, { token: app.adminToken, body: { eventId: hidden } }), 404, 'NOT_FOUND');
    assertError(await app.request('POST', `/v1/webhook/${others.body.webhook[0].id}/replay`, { token: app.adminToken, body: { eventId: 'evt_AAAAAAAAAAAAAAAAAAAAAA' } }), 404, 'NOT_FOUND');
    assert.doesNotMatch(JSON.stringify(rx.received), /"secret"/);
  });

  it('role, member and deletion events follow the role\'s reach and rights', async (t) => {
    const { app, rx } = await setup(t);
    // site may manage its own members (a self flag); sub may not
    const [site, sub] = [await addRole(app, 'site', flags('userManagement')), await addRole(app, 'sub')];
    await addManages(app, ROOT_ROLE_ID, site, ALL);
    await addManages(app, site, sub, flags('roleManagement'));
    await hook(app, sub, { name: 'low', url: `${rx.url}?low`, types: ['role.*'] });
    await hook(app, site, { name: 'high', url: `${rx.url}?high`, types: ['role.*'] });
    await app.request('PUT', `/v1/role/${sub}`, { token: app.adminToken, body: { name: 'sub 2', selfRights: flags() } });
    await app.request('PUT', `/v1/role/${site}/member?userEmail=m@example.com`, { token: app.adminToken, body: {} });
    await app.deps.events.drain();
    // sub hears of itself; site of sub (in its reach) and of its own new member
    assert.deepEqual(rx.received.map((r) => r.json.type).sort(), ['role.member.created', 'role.updated', 'role.updated']);
    // a role without userManagement over itself does not hear of its members
    await app.request('PUT', `/v1/role/${sub}/member?userEmail=n@example.com`, { token: app.adminToken, body: {} });
    await app.deps.events.drain();
    assert.equal(rx.received.length, 3);
  });
});

describe('webhooks: the API', () => {
  it('creating needs the right to add members to the role; others get 403 or 404; URLs are checked', async (t) => {
    const { app } = await setup(t, { GRIDKEEPER_INSTALLATION: 'site-a' });
    const site = await addRole(app, 'site');
    await addManages(app, ROOT_ROLE_ID, site, ALL);
    const [managed, plain] = [await addRole(app, 'managed'), await addRole(app, 'plain')];
    await addManages(app, site, managed, flags('userManagement'));
    await addManages(app, site, plain, flags('deviceManagement'));
    const user = await userIn(app, site);
    const body = { name: 'x', url: 'https://bms.example.com/hook' };
    assert.equal((await app.request('POST', `/v1/webhook?roleId=${managed}`, { token: user.token, body })).status, 200);
    assertError(await app.request('POST', `/v1/webhook?roleId=${plain}`, { token: user.token, body }), 403, 'FORBIDDEN');
    assertError(await app.request('POST', `/v1/webhook?roleId=${ROOT_ROLE_ID}`, { token: user.token, body }), 404, 'NOT_FOUND');
    for (const url of ['http://127.0.0.1/', 'http://localhost:8080/', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/',
      'http://0x7f000001/', 'ftp://example.com/', 'https://user:pw@example.com/', 'http://[fe80::1]/', 'http://100.100.100.200/']) {
      const res = await app.request('POST', `/v1/webhook?roleId=${managed}`, { token: user.token, body: { name: 'x', url } });
      assertError(res, 400, 'BAD_REQUEST');
      assert.match(res.body.message, /^url: /);
    }
    // private LAN addresses are what an appliance talks to
    assert.equal((await app.request('POST', `/v1/webhook?roleId=${managed}`, { token: user.token, body: { name: 'lan', url: 'http://192.168.1.20:8123/api/webhook/x' } })).status, 200);
    assertError(await app.request('POST', `/v1/webhook?roleId=${managed}`, { token: user.token, body: { name: 'x', url: 'https://a.example/', types: ['nothing.here'] } }), 400, 'BAD_REQUEST');
    assertError(await app.request('POST', `/v1/webhook?roleId=${managed}`, { token: user.token, body: { name: 'x', url: 'https://a.example/', secret: 'whsec_short' } }), 400, 'BAD_REQUEST');
    const listed = await app.request('POST', '/v1/webhook/query', { token: user.token, body: {} });
    assert.deepEqual(listed.body.webhook.map((w: any) => w.name), ['x', 'lan']);
    assert.ok(listed.body.webhook.every((w: any) => w.secret === undefined));
    const outsider = await userIn(app, plain);
    assert.deepEqual((await app.request('POST', '/v1/webhook/query', { token: outsider.token, body: {} })).body.webhook, []);
    const id = listed.body.webhook[0].id;
    assertError(await app.request('GET', `/v1/webhook/${id}`, { token: outsider.token }), 404, 'NOT_FOUND');
    assertError(await app.request('GET', `/v1/webhook/999999`, { token: outsider.token }), 404, 'NOT_FOUND');
    assertError(await app.request('DELETE', `/v1/webhook/${id}`, { token: outsider.token }), 404, 'NOT_FOUND');
    assert.equal((await app.request('DELETE', `/v1/webhook/${id}`, { token: user.token })).status, 204);
    assertError(await app.request('GET', `/v1/webhook/${id}`, { token: user.token }), 404, 'NOT_FOUND');
  });

  it('replays one event or a time range, and lists the event types', async (t) => {
    const { app, rx } = await setup(t);
    const w = await hook(app, ROOT_ROLE_ID, { name: 'bms', url: rx.url, types: ['device.*'] });
    const from = new Date(app.clock.now()).toISOString();
    const d1 = await addDevice(app, { name: 'a' });
    await addMonitors(app, ROOT_ROLE_ID, d1, { mm: true });
    await patchName(app, d1, 'b');
    app.clock.advance(1000);
    await patchName(app, d1, 'c');
    await app.deps.events.drain();
    assert.equal(rx.received.length, 2);
    const one = await app.request('POST', `/v1/webhook/${w.id}/replay`, { token: app.adminToken, body: { eventId: rx.received[0].json.id } });
    assert.deepEqual(one.body, { queued: 1 });
    await app.deps.events.drain();
    assert.equal(rx.received[2].json.id, rx.received[0].json.id, 'the same event id: the receiver can drop the repeat');
    const range = await app.request('POST', `/v1/webhook/${w.id}/replay`, { token: app.adminToken, body: { from, to: new Date(app.clock.now() + 1).toISOString() } });
    assert.deepEqual(range.body, { queued: 2 });
    await app.deps.events.drain();
    assert.equal(rx.received.length, 5);
    assertError(await app.request('POST', `/v1/webhook/${w.id}/replay`, { token: app.adminToken, body: { from, to: from } }), 400, 'BAD_REQUEST');
    const types = await app.request('GET', '/v1/event/types', { token: app.adminToken });
    assert.ok(types.body.types.some((x: any) => x.type === 'device.updated' && x.subject === 'device'));
    const metrics = await app.request('GET', '/metrics');
    assert.match(metrics.text, /gridkeeper_events_pending 0/);
    assert.match(metrics.text, /gridkeeper_event_delivery_attempts_total\{kind="webhook"\} 5/);
  });
});
