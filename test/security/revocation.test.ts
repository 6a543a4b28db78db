// A password change voids every token issued before it — exactly, not to the second: the clock stands still, so the
// change and the issues fall in the same millisecond (revocation by whole seconds let these tokens through).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/app.ts';
import { accessFrom, enableTotp, login, loginRefresh, totpCode } from '../support/auth-helpers.ts';

const NEW = 'brand-new-password-1';

test('partial and access tokens issued in the same millisecond as a password change, before it, are refused', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const access = await accessFrom(app, await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD));
  const { secret } = await enableTotp(app, access);
  const frozen = app.clock.now();

  // same millisecond: a partial token (2FA login), a session-less access token, a sudo token for the change itself
  const first = await login(app, ADMIN_EMAIL, ADMIN_PASSWORD);
  const partial = assertError(first, 401, 'TWO_FACTOR_REQUIRED').partialAuthToken as string;
  const loose = await app.token(app.adminId, 'access');
  const sudo = (await app.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(app, secret) } })).body.sudoToken;
  assert.equal(app.clock.now(), frozen);
  const changed = await app.request('PUT', '/user/password', { token: sudo, body: { newPassword: NEW } });
  assert.equal(changed.status, 204, changed.text);
  assert.equal(app.clock.now(), frozen, 'the change happened in the same millisecond as the issues');
  assert.equal((await app.deps.db.get(sql<{ g: number }>`SELECT token_generation AS g FROM users WHERE id = ${app.adminId}`))?.g, 1);

  assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: partial, body: { totp: totpCode(app, secret, 1) } }), 401, 'UNAUTHENTICATED');
  assertError(await app.request('GET', '/auth/accesstoken/validate', { token: loose }), 401, 'UNAUTHENTICATED');
  assertError(await app.request('GET', '/auth/accesstoken/validate', { token: access }), 401, 'UNAUTHENTICATED');

  // tokens issued after the change, still in the same millisecond, work
  const again = assertError(await login(app, ADMIN_EMAIL, NEW), 401, 'TWO_FACTOR_REQUIRED').partialAuthToken as string;
  const tokens = await app.request('POST', '/user/2fa/totp/authenticate', { token: again, body: { totp: totpCode(app, secret, 1) } });
  assert.equal(tokens.status, 200, tokens.text);
  assert.equal((await app.request('GET', '/auth/accesstoken/validate', { token: tokens.body.accessToken })).status, 200);
  assert.equal((await app.request('GET', '/auth/accesstoken/validate', { token: await app.token(app.adminId, 'access') })).status, 200);
});
