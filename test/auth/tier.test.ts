// PUT /v1/user/{email}/tier: members of the root role only.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';

const tierOf = async (t: Awaited<ReturnType<typeof makeTestApp>>, email: string) =>
  (await t.deps.db.get(sql<{ tier: string }>`SELECT tier FROM users WHERE email = ${email}`))?.tier;

describe('user tier', () => {
  test('a root member sets a tier (204); default is basic; e-mail is case-insensitive', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    await app.createUser('customer@example.com');
    assert.equal(await tierOf(app, 'customer@example.com'), 'basic');
    const res = await app.request('PUT', '/v1/user/customer@example.com/tier', { token: app.adminToken, body: { tier: 'premium' } });
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    assert.equal(await tierOf(app, 'customer@example.com'), 'premium');
    assert.equal((await app.request('PUT', '/v1/user/Customer%40Example.com/tier', { token: app.adminToken, body: { tier: 'free' } })).status, 204);
    assert.equal(await tierOf(app, 'customer@example.com'), 'free');
  });

  test('a user outside the root role gets 403, even for their own tier; a member of another role too', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await app.createUser('customer@example.com');
    const body = assertError(await app.request('PUT', '/v1/user/customer@example.com/tier', { token: user.token, body: { tier: 'premium' } }), 403, 'FORBIDDEN');
    assert.match(body.message, /root/);
    const role = (await app.deps.db.get(sql<{ id: number }>`INSERT INTO roles (name, self_role_management, self_user_management, self_view_management,
      self_device_management, self_report_management, self_alarm_management, created_at) VALUES ('other', 1, 1, 1, 1, 1, 1, 0) RETURNING id`))!;
    await app.deps.db.run(sql`INSERT INTO members (role_id, user_id) VALUES (${role.id}, ${user.id})`);
    assertError(await app.request('PUT', '/v1/user/customer@example.com/tier', { token: user.token, body: { tier: 'premium' } }), 403, 'FORBIDDEN');
    assert.equal(await tierOf(app, 'customer@example.com'), 'basic');
    // made a root member, the same user may
    await app.deps.db.run(sql`INSERT INTO members (role_id, user_id) VALUES (1, ${user.id})`);
    assert.equal((await app.request('PUT', '/v1/user/customer@example.com/tier', { token: user.token, body: { tier: 'premium' } })).status, 204);
  });

  test('unknown user 404 (for root members); invalid tier or extra field 400; auth required', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assertError(await app.request('PUT', '/v1/user/ghost@example.com/tier', { token: app.adminToken, body: { tier: 'free' } }), 404, 'NOT_FOUND');
    assert.match(assertError(await app.request('PUT', '/v1/user/admin@localhost/tier', { token: app.adminToken, body: { tier: 'gold' } }), 400, 'BAD_REQUEST').message, /tier/);
    assertError(await app.request('PUT', '/v1/user/admin@localhost/tier', { token: app.adminToken, body: { tier: 'free', x: 1 } }), 400, 'BAD_REQUEST');
    assertError(await app.request('PUT', '/v1/user/admin@localhost/tier', { token: app.adminToken }), 400, 'BAD_REQUEST');
    // a non-root caller learns nothing about which users exist: 403 before 404
    const user = await app.createUser('customer@example.com');
    assertError(await app.request('PUT', '/v1/user/ghost@example.com/tier', { token: user.token, body: { tier: 'free' } }), 403, 'FORBIDDEN');
    await assertRequiresAuth(app, 'PUT', '/v1/user/admin@localhost/tier', { tier: 'free' });
  });
});
