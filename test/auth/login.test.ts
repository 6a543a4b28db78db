// Login, token endpoints and logout: happy paths, validation, and revocation that survives a restart.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD, fakeClock, T0 } from '../support/app.ts';
import { login, loginRefresh, accessFrom } from '../support/auth-helpers.ts';
import { createApp } from '../../src/app.ts';
import { openDatabase } from '../../src/db/open.ts';
import { createDeps } from '../../src/runtime.ts';
import { parseConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
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
    const dir = mkdtempSync(join(tmpdir(), 'gridkeeper-auth-'));
    const file = join(dir, 'gridkeeper.db');
    const clock = fakeClock(T0);
    const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_LOG: 'error' }, []);
    const start = async () => {
      const db = openDatabase({ file });
      const { deps } = await createDeps({ config, db, now: clock.now, log: createLogger('error') });
      const { app } = createApp(deps);
      const call = async (method: string, path: string, token?: string, body?: unknown) => {
        const res = await app.request(path, {
          method,
          headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        }, { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
        return { status: res.status, text: await res.text() };
      };
      return { db, call };
    };
    try {
      const first = await start();
      const loggedOut = (await first.call('POST', '/auth/login', undefined, { username: ADMIN_EMAIL, password: ADMIN_PASSWORD })).text;
      const kept = (await first.call('POST', '/auth/login', undefined, { username: ADMIN_EMAIL, password: ADMIN_PASSWORD })).text;
      const access = (await first.call('GET', '/auth/accesstoken', loggedOut)).text;
      assert.equal((await first.call('POST', '/auth/logout', loggedOut)).status, 204);
      first.db.close();

      const second = await start();
      assert.equal((await second.call('GET', '/auth/refreshtoken/validate', loggedOut)).status, 401);
      assert.equal((await second.call('GET', '/auth/accesstoken', loggedOut)).status, 401);
      assert.equal((await second.call('GET', '/auth/accesstoken/validate', access)).status, 401);
      // keys and sessions survived: the other token still works after the restart
      assert.equal((await second.call('GET', '/auth/refreshtoken/validate', kept)).status, 200);
      assert.equal((await second.call('GET', '/auth/accesstoken', kept)).status, 200);
      second.db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
