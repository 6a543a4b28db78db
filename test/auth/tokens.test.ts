// Token security: forged, tampered, expired and wrong-kind tokens are refused everywhere.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, generateKeyPair, exportJWK } from 'jose';
import { createHmac } from 'node:crypto';
import { makeTestApp, assertError, type TestApp } from '../support/app.ts';
import { assertRequiresAuth, liveToken } from '../support/auth-helpers.ts';
import { createApp } from '../../src/boot/app.ts';
import type { TokenType } from '../../src/http/env.ts';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function claimsNow(t: TestApp, typ: TokenType = 'access') {
  const iat = Math.floor(t.clock.now() / 1000);
  return { typ, sub: String(t.adminId), jti: 'x1', iat, exp: iat + 600 };
}

const validate = (t: TestApp, token: string) => t.request('GET', '/auth/accesstoken/validate', { token });

describe('tokens: forgeries', () => {
  test('a genuine token passes (control for the cases below)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assert.equal((await validate(app, app.adminToken)).status, 200);
  });

  test('alg "none" is refused', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { kid } = await app.deps.keys.signer(app.clock.now());
    const token = `${b64({ alg: 'none', typ: 'JWT', kid })}.${b64(claimsNow(app))}.`;
    assertError(await validate(app, token), 401, 'UNAUTHENTICATED');
  });

  test('a token signed by a foreign Ed25519 key is refused, with our kid or its own', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { privateKey } = await generateKeyPair('Ed25519');
    for (const kid of [(await app.deps.keys.signer(app.clock.now())).kid, 'someone-else']) {
      const token = await new SignJWT(claimsNow(app)).setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' }).sign(privateKey);
      assertError(await validate(app, token), 401, 'UNAUTHENTICATED');
    }
  });

  test('HS256 keyed with our public key (algorithm confusion) is refused', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { kid } = await app.deps.keys.signer(app.clock.now());
    const jwk = await exportJWK((await app.deps.keys.publicKey(kid))!);
    const head = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claimsNow(app))}`;
    for (const secret of [JSON.stringify(jwk), String(jwk.x)]) {
      const sig = createHmac('sha256', secret).update(head).digest('base64url');
      assertError(await validate(app, `${head}.${sig}`), 401, 'UNAUTHENTICATED');
    }
  });

  test('a tampered payload (other user, other kind, later expiry) breaks the signature', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const other = await app.createUser('other@localhost');
    const [header, payload, signature] = (await app.token(other.id, 'access')).split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    for (const change of [{ sub: String(app.adminId) }, { typ: 'sudo' }, { exp: claims.exp + 86400 }]) {
      const forged = `${header}.${b64({ ...claims, ...change })}.${signature}`;
      assertError(await validate(app, forged), 401, 'UNAUTHENTICATED');
    }
    // the untouched token is fine
    assert.deepEqual((await validate(app, `${header}.${payload}.${signature}`)).body, { userId: other.id });
  });

  test('an expired token is refused, also when it was verified (and cached) before', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const seen = await app.token(app.adminId, 'access');
    const unseen = await app.token(app.adminId, 'access');
    assert.equal((await validate(app, seen)).status, 200);
    app.clock.advance(10 * 60 * 1000 - 1000);
    assert.equal((await validate(app, seen)).status, 200, 'still valid one second before expiry');
    app.clock.advance(1000);
    assert.match(assertError(await validate(app, seen), 401, 'UNAUTHENTICATED').message, /expired/);
    assert.match(assertError(await validate(app, unseen), 401, 'UNAUTHENTICATED').message, /expired/);
  });

  test('a refresh token without a session (not issued by login) is refused', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assertError(await app.request('GET', '/auth/refreshtoken/validate', { token: await app.token(app.adminId, 'refresh') }), 401, 'UNAUTHENTICATED');
    const { token } = await liveToken(app, app.adminId, 'refresh');
    assert.equal((await app.request('GET', '/auth/refreshtoken/validate', { token })).status, 200);
  });

  test('a token of a session that belongs to another user is refused', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const other = await app.createUser('other@localhost');
    const { sid } = await liveToken(app, other.id, 'refresh');
    const { token } = await liveToken(app, app.adminId, 'access', sid);
    assertError(await validate(app, token), 401, 'UNAUTHENTICATED');
  });
});

describe('tokens: each kind only where it is expected', () => {
  // accepted kinds per route; sudo-only routes answer a plain access token with 403 SUDO_REQUIRED
  const ROUTES: { method: string; path: string; accepts: TokenType[]; sudoOnly?: boolean; body?: unknown }[] = [
    { method: 'GET', path: '/auth/accesstoken', accepts: ['refresh'] },
    { method: 'GET', path: '/auth/refreshtoken', accepts: ['refresh'] },
    { method: 'GET', path: '/auth/refreshtoken/validate', accepts: ['refresh'] },
    { method: 'POST', path: '/auth/logout', accepts: ['refresh'] },
    { method: 'GET', path: '/auth/accesstoken/validate', accepts: ['access', 'sudo'] },
    { method: 'GET', path: '/user/2fa', accepts: ['access', 'sudo'] },
    { method: 'POST', path: '/user/2fa/totp/setup', accepts: ['access', 'sudo'] },
    { method: 'POST', path: '/user/2fa/totp/enable', accepts: ['access', 'sudo'], body: { totp: '123456' } },
    { method: 'POST', path: '/user/2fa/totp/authenticate', accepts: ['partial', 'access', 'sudo'], body: { totp: '123456' } },
    { method: 'POST', path: '/user/2fa/recovery-code/authenticate', accepts: ['partial', 'access', 'sudo'], body: { recoveryCode: 'x' } },
    { method: 'POST', path: '/user/2fa/recovery-code/regenerate', accepts: ['sudo'], sudoOnly: true },
    { method: 'DELETE', path: '/user/2fa', accepts: ['sudo'], sudoOnly: true },
    { method: 'PUT', path: '/user/password', accepts: ['access', 'sudo'], body: { newPassword: 'new-password-123' } },
    { method: 'PUT', path: '/v1/user/:email/tier', accepts: ['access', 'sudo'], body: { tier: 'free' } },
    { method: 'POST', path: '/user/tokens', accepts: ['access', 'sudo'], body: { name: 'x', scopes: ['api'] } },
    { method: 'GET', path: '/user/tokens', accepts: ['access', 'sudo'] },
    { method: 'DELETE', path: '/user/tokens/:id', accepts: ['access', 'sudo'] },
  ];

  test('the table covers every authenticated route of the auth domain', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { api } = createApp(app.deps);
    const mine = api.specs.filter((s) => s.path.startsWith('/auth/') || s.path.startsWith('/user') || s.path.startsWith('/v1/user/'));
    const listed = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
    for (const spec of mine) {
      const key = `${spec.method.toUpperCase()} ${spec.path}`;
      if (key === 'POST /auth/login') { assert.equal(spec.auth, undefined); continue; }
      assert.ok(spec.auth, `${key} declares an authenticator`);
      assert.ok(listed.has(key), `${key} is in the table`);
    }
  });

  test('every other kind of token gets 401 (sudo-only routes: 403 SUDO_REQUIRED for access)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (const route of ROUTES) {
      const path = route.path.replace(':email', 'admin@localhost').replace(':id', '1');
      for (const typ of ['refresh', 'access', 'partial', 'sudo'] as const) {
        if (route.accepts.includes(typ)) continue;
        const { token } = await liveToken(app, app.adminId, typ);
        const res = await app.request(route.method, path, { token, body: route.body });
        if (route.sudoOnly && typ === 'access') assertError(res, 403, 'SUDO_REQUIRED');
        else assertError(res, 401, 'UNAUTHENTICATED');
      }
      assertError(await app.request(route.method, path, { body: route.body }), 401, 'UNAUTHENTICATED');
    }
  });

  test('assertRequiresAuth passes for an access route and fails for an open one', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    await assertRequiresAuth(app, 'GET', '/user/2fa');
    await assertRequiresAuth(app, 'PUT', '/v1/user/admin@localhost/tier', { tier: 'free' });
    await assert.rejects(assertRequiresAuth(app, 'GET', '/healthz'));
    // a route that (wrongly) took refresh tokens would be caught
    await assert.rejects(assertRequiresAuth(app, 'GET', '/auth/refreshtoken/validate'));
  });
});
