// PUT /user/password: access + current password, or sudo alone; minimum length; every session of the user ends.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD, type TestApp } from '../support/app.ts';
import { login, loginRefresh, accessFrom, enableTotp, totpCode } from '../support/auth-helpers.ts';

const NEW = 'brand-new-password-1';

const hashOf = async (app: TestApp, userId: number) =>
  (await app.deps.db.get(sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE id = ${userId}`))!.password_hash;

describe('password change', () => {
  test('with an access token and the current password: 204; old password out, new one in; scrypt with a per-user salt', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const before = await hashOf(app, app.adminId);
    const access = await accessFrom(app, await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD));
    const res = await app.request('PUT', '/user/password', { token: access, body: { currentPassword: ADMIN_PASSWORD, newPassword: NEW } });
    assert.equal(res.status, 204, res.text);
    assertError(await login(app, ADMIN_EMAIL, ADMIN_PASSWORD), 401, 'PASSWORD_INCORRECT');
    assert.equal((await login(app, ADMIN_EMAIL, NEW)).status, 200);
    const after = await hashOf(app, app.adminId);
    assert.match(after, /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.ok(!after.includes(NEW));
    // same password for two users -> different hashes (salted)
    const twin = await hashOf(app, (await app.createUser('twin@localhost', NEW)).id);
    assert.notEqual(twin, after);
    assert.notEqual(before, after);
  });

  test('every refresh token of the user is revoked, with the access and sudo tokens minted from them; other users keep theirs', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    await app.createUser('bystander@localhost', 'bystander-pass-1');
    const theirs = await loginRefresh(app, 'bystander@localhost', 'bystander-pass-1');
    const r1 = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const r2 = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const a1 = await accessFrom(app, r1);
    const a2 = await accessFrom(app, r2);
    assert.equal((await app.request('PUT', '/user/password', { token: a1, body: { currentPassword: ADMIN_PASSWORD, newPassword: NEW } })).status, 204);
    for (const token of [r1, r2]) assertError(await app.request('GET', '/auth/accesstoken', { token }), 401, 'UNAUTHENTICATED');
    for (const token of [a1, a2]) assertError(await app.request('GET', '/auth/accesstoken/validate', { token }), 401, 'UNAUTHENTICATED');
    assert.equal((await app.request('GET', '/auth/accesstoken', { token: theirs })).status, 200);
    // a login right after the change (same clock tick) gives working tokens
    const fresh = await loginRefresh(app, ADMIN_EMAIL, NEW);
    assert.equal((await app.request('GET', '/auth/accesstoken', { token: fresh })).status, 200);
  });

  test('a pending partial token from before the change dies with it', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const refresh = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const { secret } = await enableTotp(app, await accessFrom(app, refresh));
    const partial = assertError(await login(app, ADMIN_EMAIL, ADMIN_PASSWORD), 401, 'TWO_FACTOR_REQUIRED').partialAuthToken;
    app.clock.advance(1000);
    assert.equal((await app.request('PUT', '/user/password', { token: app.adminToken, body: { currentPassword: ADMIN_PASSWORD, newPassword: NEW } })).status, 204);
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: partial, body: { totp: totpCode(app, secret) } }), 401, 'UNAUTHENTICATED');
  });

  test('with a sudo token the new password alone is enough', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const refresh = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const access = await accessFrom(app, refresh);
    const { secret } = await enableTotp(app, access);
    const sudo = (await app.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(app, secret) } })).body.sudoToken;
    assert.equal((await app.request('PUT', '/user/password', { token: sudo, body: { newPassword: NEW } })).status, 204);
    // the sudo token's session ended too
    assertError(await app.request('PUT', '/user/password', { token: sudo, body: { newPassword: NEW + 'x' } }), 401, 'UNAUTHENTICATED');
    const partial = assertError(await login(app, ADMIN_EMAIL, NEW), 401, 'TWO_FACTOR_REQUIRED');
    assert.ok(partial.partialAuthToken);
  });

  test('validation: access token without currentPassword 400; too short 400; wrong current 401; unknown field 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assert.match(assertError(await app.request('PUT', '/user/password', { token: app.adminToken, body: { newPassword: NEW } }), 400, 'BAD_REQUEST').message, /currentPassword/);
    assert.match(assertError(await app.request('PUT', '/user/password', { token: app.adminToken, body: { currentPassword: ADMIN_PASSWORD, newPassword: '123456789' } }), 400, 'BAD_REQUEST').message, /newPassword/);
    assertError(await app.request('PUT', '/user/password', { token: app.adminToken, body: { currentPassword: 'not-it-at-all', newPassword: NEW } }), 401, 'PASSWORD_INCORRECT');
    assert.match(assertError(await app.request('PUT', '/user/password', { token: app.adminToken, body: { currentPassword: ADMIN_PASSWORD, newPassword: NEW, confirm: NEW } }), 400, 'BAD_REQUEST').message, /confirm/);
    // nothing changed
    assert.equal((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
  });

  test('a ten-character password is long enough', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assert.equal((await app.request('PUT', '/user/password', { token: app.adminToken, body: { currentPassword: ADMIN_PASSWORD, newPassword: '0123456789' } })).status, 204);
  });
});
