// Login, token endpoints and logout: happy paths, validation, and revocation that survives a restart.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/app.ts';
import { login, loginRefresh, accessFrom, restartableApp } from '../support/auth-helpers.ts';
import { verifyToken } from '../../src/auth/tokens.ts';

describe('login: happy', () => {
  test('login answers a refresh token as text/plain; it buys access tokens; both validate', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await login(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(res.text, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a bare JWT, no quotes');
    const claims = await verifyToken(app.deps.keys, res.text, ['refresh'], app.clock.now());
    assert.equal(claims.sub, app.adminId);
    assert.equal(claims.exp - claims.iat, 14 * 24 * 3600);
    assert.ok(claims.sid, 'a refresh token opens a session');

    const access = await app.request('GET', '/auth/accesstoken', { token: res.text });
    assert.equal(access.status, 200);
    assert.match(access.headers.get('content-type') ?? '', /^text\/plain/);
    const accessClaims = await verifyToken(app.deps.keys, access.text, ['access'], app.clock.now());
    assert.equal(accessClaims.exp - accessClaims.iat, 10 * 60);
    assert.equal(accessClaims.sid, claims.sid, 'an access token belongs to its refresh token\'s session');

    assert.deepEqual((await app.request('GET', '/auth/refreshtoken/validate', { token: res.text })).body, { userId: app.adminId });
    assert.deepEqual((await app.request('GET', '/auth/accesstoken/validate', { token: access.text })).body, { userId: app.adminId });
  });

  test('the username is case-insensitive', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await login(app, ADMIN_EMAIL.toUpperCase(), ADMIN_PASSWORD);
    assert.equal(res.status, 200, res.text);
  });

  test('GET /auth/refreshtoken gives a new refresh token; the old one stays valid', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const first = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    app.clock.advance(1000);
    const renewed = await app.request('GET', '/auth/refreshtoken', { token: first });
    assert.equal(renewed.status, 200);
    assert.match(renewed.headers.get('content-type') ?? '', /^text\/plain/);
    assert.notEqual(renewed.text, first);
    assert.equal((await app.request('GET', '/auth/refreshtoken/validate', { token: renewed.text })).status, 200);
    assert.equal((await app.request('GET', '/auth/refreshtoken/validate', { token: first })).status, 200);
    // logging out the new one leaves the old one alone
    assert.equal((await app.request('POST', '/auth/logout', { token: renewed.text })).status, 204);
    assert.equal((await app.request('GET', '/auth/refreshtoken/validate', { token: first })).status, 200);
  });

  test('a sudo token is accepted where an access token is', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const sudo = await app.token(app.adminId, 'sudo');
    assert.deepEqual((await app.request('GET', '/auth/accesstoken/validate', { token: sudo })).body, { userId: app.adminId });
  });
});

describe('login: failures and validation', () => {
  test('wrong password and unknown user answer exactly alike', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const wrong = assertError(await login(app, ADMIN_EMAIL, 'not-the-password'), 401, 'PASSWORD_INCORRECT');
    const unknown = assertError(await login(app, 'nobody@localhost', 'not-the-password'), 401, 'PASSWORD_INCORRECT');
    assert.deepEqual(wrong, unknown);
    assert.deepEqual(Object.keys(wrong).sort(), ['code', 'error', 'message', 'statusCode']);
  });

  test('body validation: missing, unknown and overlong fields are 400 naming the field; wrong media type 415', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assert.match(assertError(await app.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL } }), 400, 'BAD_REQUEST').message, /password/);
    assert.match(assertError(await app.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: 'x', extra: 1 } }), 400, 'BAD_REQUEST').message, /extra/);
    assert.match(assertError(await app.request('POST', '/auth/login', { body: { username: 'a'.repeat(257), password: 'x' } }), 400, 'BAD_REQUEST').message, /username/);
    assert.match(assertError(await app.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: 7 } }), 400, 'BAD_REQUEST').message, /password/);
    assertError(await app.request('POST', '/auth/login', { raw: JSON.stringify({ username: ADMIN_EMAIL, password: ADMIN_PASSWORD }), headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assertError(await app.request('POST', '/auth/login?debug=1', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } }), 400, 'BAD_REQUEST');
  });

  test('accesstoken and refreshtoken endpoints take refresh tokens only', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (const path of ['/auth/accesstoken', '/auth/refreshtoken', '/auth/refreshtoken/validate']) {
      assertError(await app.request('GET', path), 401, 'UNAUTHENTICATED');
      for (const typ of ['access', 'sudo', 'partial'] as const) {
        assertError(await app.request('GET', path, { token: await app.token(app.adminId, typ) }), 401, 'UNAUTHENTICATED');
      }
    }
    assertError(await app.request('POST', '/auth/logout', { token: app.adminToken }), 401, 'UNAUTHENTICATED');
  });
});

describe('logout', () => {
  test('logout kills the refresh token and the access tokens minted from it', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const refresh = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const access = await accessFrom(app, refresh);
    const other = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const otherAccess = await accessFrom(app, other);
    assert.equal((await app.request('POST', '/auth/logout', { token: refresh })).status, 204);
    assertError(await app.request('GET', '/auth/accesstoken', { token: refresh }), 401, 'UNAUTHENTICATED');
    assertError(await app.request('GET', '/auth/refreshtoken/validate', { token: refresh }), 401, 'UNAUTHENTICATED');
    assertError(await app.request('GET', '/auth/accesstoken/validate', { token: access }), 401, 'UNAUTHENTICATED');
    assertError(await app.request('POST', '/auth/logout', { token: refresh }), 401, 'UNAUTHENTICATED');
    // another session of the same user is untouched
    assert.equal((await app.request('GET', '/auth/accesstoken/validate', { token: otherAccess })).status, 200);
    assert.equal((await app.request('GET', '/auth/accesstoken', { token: other })).status, 200);
  });

  test('a logged-out token stays dead after a restart (new app on the same database file)', async (t) => {
    const server = restartableApp();
    t.after(() => server.cleanup());
    const first = await server.start();
    const credentials = { username: ADMIN_EMAIL, password: ADMIN_PASSWORD };
    const loggedOut = (await first.request('POST', '/auth/login', { body: credentials })).text;
    const kept = (await first.request('POST', '/auth/login', { body: credentials })).text;
    const access = (await first.request('GET', '/auth/accesstoken', { token: loggedOut })).text;
    assert.equal((await first.request('POST', '/auth/logout', { token: loggedOut })).status, 204);
    await first.stop();

    const second = await server.start();
    assert.equal((await second.request('GET', '/auth/refreshtoken/validate', { token: loggedOut })).status, 401);
    assert.equal((await second.request('GET', '/auth/accesstoken', { token: loggedOut })).status, 401);
    assert.equal((await second.request('GET', '/auth/accesstoken/validate', { token: access })).status, 401);
    // keys and sessions survived: the other token still works after the restart
    assert.equal((await second.request('GET', '/auth/refreshtoken/validate', { token: kept })).status, 200);
    assert.equal((await second.request('GET', '/auth/accesstoken', { token: kept })).status, 200);
  });
});
