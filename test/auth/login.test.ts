// Login, token endpoints and logout: happy paths, validation, and revocation that survives a restart.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/app.ts';
import { login, loginRefresh, accessFrom, restartableApp } from '../support/auth-helpers.ts';
import { verifyToken } from '../../src/auth/tokens.ts';

describe('login: happy', () => {
  test('login answers a refresh token as text/plain; it buys access tokens; both validate', async () => {
    const t = await makeTestApp();
    const res = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(res.text, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a bare JWT, no quotes');
    const claims = await verifyToken(t.deps.keys, res.text, ['refresh'], t.clock.now());
    assert.equal(claims.sub, t.adminId);
    assert.equal(claims.exp - claims.iat, 14 * 24 * 3600);
    assert.ok(claims.sid, 'a refresh token opens a session');

    const access = await t.request('GET', '/auth/accesstoken', { token: res.text });
    assert.equal(access.status, 200);
    assert.match(access.headers.get('content-type') ?? '', /^text\/plain/);
    const accessClaims = await verifyToken(t.deps.keys, access.text, ['access'], t.clock.now());
    assert.equal(accessClaims.exp - accessClaims.iat, 10 * 60);
    assert.equal(accessClaims.sid, claims.sid, 'an access token belongs to its refresh token\'s session');

    assert.deepEqual((await t.request('GET', '/auth/refreshtoken/validate', { token: res.text })).body, { userId: t.adminId });
    assert.deepEqual((await t.request('GET', '/auth/accesstoken/validate', { token: access.text })).body, { userId: t.adminId });
    t.close();
  });

  test('the username is case-insensitive', async () => {
    const t = await makeTestApp();
    const res = await login(t, ADMIN_EMAIL.toUpperCase(), ADMIN_PASSWORD);
    assert.equal(res.status, 200, res.text);
    t.close();
  });

  test('GET /auth/refreshtoken gives a new refresh token; the old one stays valid', async () => {
    const t = await makeTestApp();
    const first = await loginRefresh(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    t.clock.advance(1000);
    const renewed = await t.request('GET', '/auth/refreshtoken', { token: first });
    assert.equal(renewed.status, 200);
    assert.match(renewed.headers.get('content-type') ?? '', /^text\/plain/);
    assert.notEqual(renewed.text, first);
    assert.equal((await t.request('GET', '/auth/refreshtoken/validate', { token: renewed.text })).status, 200);
    assert.equal((await t.request('GET', '/auth/refreshtoken/validate', { token: first })).status, 200);
    // logging out the new one leaves the old one alone
    assert.equal((await t.request('POST', '/auth/logout', { token: renewed.text })).status, 204);
    assert.equal((await t.request('GET', '/auth/refreshtoken/validate', { token: first })).status, 200);
    t.close();
  });

  test('a sudo token is accepted where an access token is', async () => {
    const t = await makeTestApp();
    const sudo = await t.token(t.adminId, 'sudo');
    assert.deepEqual((await t.request('GET', '/auth/accesstoken/validate', { token: sudo })).body, { userId: t.adminId });
    t.close();
  });
});

describe('login: failures and validation', () => {
  test('wrong password and unknown user answer exactly alike', async () => {
    const t = await makeTestApp();
    const wrong = assertError(await login(t, ADMIN_EMAIL, 'not-the-password'), 401, 'PASSWORD_INCORRECT');
    const unknown = assertError(await login(t, 'nobody@localhost', 'not-the-password'), 401, 'PASSWORD_INCORRECT');
    assert.deepEqual(wrong, unknown);
    assert.deepEqual(Object.keys(wrong).sort(), ['code', 'error', 'message', 'statusCode']);
    t.close();
  });

  test('body validation: missing, unknown and overlong fields are 400 naming the field; wrong media type 415', async () => {
    const t = await makeTestApp();
    assert.match(assertError(await t.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL } }), 400, 'BAD_REQUEST').message, /password/);
    assert.match(assertError(await t.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: 'x', extra: 1 } }), 400, 'BAD_REQUEST').message, /extra/);
    assert.match(assertError(await t.request('POST', '/auth/login', { body: { username: 'a'.repeat(257), password: 'x' } }), 400, 'BAD_REQUEST').message, /username/);
    assert.match(assertError(await t.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: 7 } }), 400, 'BAD_REQUEST').message, /password/);
    assertError(await t.request('POST', '/auth/login', { raw: JSON.stringify({ username: ADMIN_EMAIL, password: ADMIN_PASSWORD }), headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assertError(await t.request('POST', '/auth/login?debug=1', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } }), 400, 'BAD_REQUEST');
    t.close();
  });

  test('accesstoken and refreshtoken endpoints take refresh tokens only', async () => {
    const t = await makeTestApp();
    for (const path of ['/auth/accesstoken', '/auth/refreshtoken', '/auth/refreshtoken/validate']) {
      assertError(await t.request('GET', path), 401, 'UNAUTHENTICATED');
      for (const typ of ['access', 'sudo', 'partial'] as const) {
        assertError(await t.request('GET', path, { token: await t.token(t.adminId, typ) }), 401, 'UNAUTHENTICATED');
      }
    }
    assertError(await t.request('POST', '/auth/logout', { token: t.adminToken }), 401, 'UNAUTHENTICATED');
    t.close();
  });
});

describe('logout', () => {
  test('logout kills the refresh token and the access tokens minted from it', async () => {
    const t = await makeTestApp();
    const refresh = await loginRefresh(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const access = await accessFrom(t, refresh);
    const other = await loginRefresh(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const otherAccess = await accessFrom(t, other);
    assert.equal((await t.request('POST', '/auth/logout', { token: refresh })).status, 204);
    assertError(await t.request('GET', '/auth/accesstoken', { token: refresh }), 401, 'UNAUTHENTICATED');
    assertError(await t.request('GET', '/auth/refreshtoken/validate', { token: refresh }), 401, 'UNAUTHENTICATED');
    assertError(await t.request('GET', '/auth/accesstoken/validate', { token: access }), 401, 'UNAUTHENTICATED');
    assertError(await t.request('POST', '/auth/logout', { token: refresh }), 401, 'UNAUTHENTICATED');
    // another session of the same user is untouched
    assert.equal((await t.request('GET', '/auth/accesstoken/validate', { token: otherAccess })).status, 200);
    assert.equal((await t.request('GET', '/auth/accesstoken', { token: other })).status, 200);
    t.close();
  });

  test('a logged-out token stays dead after a restart (new app on the same database file)', async () => {
    const server = restartableApp();
    try {
      const first = await server.start();
      const credentials = { username: ADMIN_EMAIL, password: ADMIN_PASSWORD };
      const loggedOut = (await first.request('POST', '/auth/login', { body: credentials })).text;
      const kept = (await first.request('POST', '/auth/login', { body: credentials })).text;
      const access = (await first.request('GET', '/auth/accesstoken', { token: loggedOut })).text;
      assert.equal((await first.request('POST', '/auth/logout', { token: loggedOut })).status, 204);
      first.stop();

      const second = await server.start();
      assert.equal((await second.request('GET', '/auth/refreshtoken/validate', { token: loggedOut })).status, 401);
      assert.equal((await second.request('GET', '/auth/accesstoken', { token: loggedOut })).status, 401);
      assert.equal((await second.request('GET', '/auth/accesstoken/validate', { token: access })).status, 401);
      // keys and sessions survived: the other token still works after the restart
      assert.equal((await second.request('GET', '/auth/refreshtoken/validate', { token: kept })).status, 200);
      assert.equal((await second.request('GET', '/auth/accesstoken', { token: kept })).status, 200);
      second.stop();
    } finally {
      server.cleanup();
    }
  });
});
