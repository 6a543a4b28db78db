// Two-factor authentication: TOTP against RFC 6238, setup/enable, login with the second factor, step-up to sudo,
// no replay, single-use recovery codes, regeneration and removal.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD, type TestApp } from '../support/app.ts';
import { login, loginRefresh, accessFrom, enableTotp, totpCode, assertRequiresSudo } from '../support/auth-helpers.ts';
import { totpStep } from '../../src/auth/totp.ts';
import { verifyToken } from '../../src/auth/tokens.ts';
import { TWO_FACTOR_MESSAGE } from '../../src/auth/login.routes.ts';

/** RFC 6238 appendix B, SHA-1: the 20-byte ASCII secret "12345678901234567890" (base32 below), 8-digit codes. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: [number, string][] = [
  [59, '94287082'], [1111111109, '07081804'], [1111111111, '14050471'],
  [1234567890, '89005924'], [2000000000, '69279037'], [20000000000, '65353130'],
];

async function partialLogin(t: TestApp): Promise<string> {
  const res = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
  const body = assertError(res, 401, 'TWO_FACTOR_REQUIRED');
  assert.equal(body.message, TWO_FACTOR_MESSAGE);
  return body.partialAuthToken;
}

/** An app whose admin has TOTP on; `access` is a fresh access token of a live session. */
async function withTotp() {
  const t = await makeTestApp();
  const refresh = await loginRefresh(t, ADMIN_EMAIL, ADMIN_PASSWORD);
  const { secret, recoveryCodes } = await enableTotp(t, await accessFrom(t, refresh));
  return { t, refresh, secret, recoveryCodes, access: await accessFrom(t, refresh) };
}

describe('totp: RFC 6238', () => {
  test('the verifier accepts the RFC 6238 SHA-1 test vectors (6-digit form) at their times, with their time steps', () => {
    for (const [time, code8] of RFC_VECTORS) {
      assert.equal(totpStep(RFC_SECRET, code8.slice(-6), time * 1000), Math.floor(time / 30), `T=${time}`);
    }
  });

  test('a code is refused two steps away from its time, and a non-code is refused', () => {
    const [time, code8] = RFC_VECTORS[1];
    assert.equal(totpStep(RFC_SECRET, code8.slice(-6), (time + 61) * 1000), undefined);
    assert.equal(totpStep(RFC_SECRET, code8.slice(-6), (time - 60) * 1000), undefined);
    assert.equal(totpStep(RFC_SECRET, 'abcdef', time * 1000), undefined);
    assert.equal(totpStep(RFC_SECRET, String((Number(code8.slice(-6)) + 1) % 1e6).padStart(6, '0'), time * 1000), undefined);
  });
});

describe('2fa: setup and enable', () => {
  test('status before and after; setup gives an otpauth URL; enable gives 10 codes of 16 chars, stored hashed', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assert.deepEqual((await app.request('GET', '/user/2fa', { token: app.adminToken })).body, {
      enabled: false, totp: { completedAt: null }, recoveryCodes: { completedAt: null, remaining: 0 },
    });
    const setup = await app.request('POST', '/user/2fa/totp/setup', { token: app.adminToken });
    assert.equal(setup.status, 200, setup.text);
    assert.match(setup.body.secret, /^[A-Z2-7]{32}$/);
    const url = new URL(setup.body.otpauthUrl);
    assert.equal(url.protocol, 'otpauth:');
    assert.equal(url.searchParams.get('secret'), setup.body.secret);
    assert.equal(url.searchParams.get('issuer'), 'gridkeeper');
    assert.match(decodeURIComponent(url.pathname), /gridkeeper:admin@localhost/);
    // setting up is not enabling
    assert.equal((await app.request('GET', '/user/2fa', { token: app.adminToken })).body.enabled, false);

    const enable = await app.request('POST', '/user/2fa/totp/enable', { token: app.adminToken, body: { totp: totpCode(app, setup.body.secret) } });
    assert.equal(enable.status, 200, enable.text);
    const codes: string[] = enable.body.recoveryCodes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const code of codes) assert.match(code, /^[a-z2-9]{16}$/);
    assert.deepEqual((await app.request('GET', '/user/2fa', { token: app.adminToken })).body, {
      enabled: true,
      totp: { completedAt: new Date(app.clock.now()).toISOString() },
      recoveryCodes: { completedAt: new Date(app.clock.now()).toISOString(), remaining: 10 },
    });
    // stored hashed: no code appears in the database
    const rows = await app.deps.db.all(sql<Record<string, unknown>>`SELECT * FROM recovery_codes`);
    assert.equal(rows.length, 10);
    const dump = JSON.stringify(rows.map((r) => Object.values(r).map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') + v.toString('hex') + v.toString('base64') : v))));
    for (const code of codes) assert.ok(!dump.includes(code), 'a recovery code is stored in clear');
  });

  test('enable: wrong code 401 TOTP_INCORRECT; no setup 409 TOTP_UNINITIALIZED; body validated', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assertError(await app.request('POST', '/user/2fa/totp/enable', { token: app.adminToken, body: { totp: '123456' } }), 409, 'TOTP_UNINITIALIZED');
    const setup = await app.request('POST', '/user/2fa/totp/setup', { token: app.adminToken });
    const wrong = String((Number(totpCode(app, setup.body.secret)) + 1) % 1e6).padStart(6, '0');
    assertError(await app.request('POST', '/user/2fa/totp/enable', { token: app.adminToken, body: { totp: wrong } }), 401, 'TOTP_INCORRECT');
    assert.match(assertError(await app.request('POST', '/user/2fa/totp/enable', { token: app.adminToken, body: { totp: '12345' } }), 400, 'BAD_REQUEST').message, /totp/);
    assert.match(assertError(await app.request('POST', '/user/2fa/totp/enable', { token: app.adminToken, body: {} }), 400, 'BAD_REQUEST').message, /totp/);
    assert.equal((await app.request('GET', '/user/2fa', { token: app.adminToken })).body.enabled, false);
  });

  test('setup with an access token older than 5 minutes: 401 TOKEN_TOO_OLD', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const token = await app.token(app.adminId, 'access');
    app.clock.advance(5 * 60 * 1000 + 1000);
    assertError(await app.request('POST', '/user/2fa/totp/setup', { token }), 401, 'TOKEN_TOO_OLD');
  });

  test('once enabled, setup and enable need a sudo token; with one the secret can be replaced', async (t) => {
    const { t: app, secret, access } = await withTotp();
    t.after(() => app.close());
    assertError(await app.request('POST', '/user/2fa/totp/setup', { token: access }), 403, 'SUDO_REQUIRED');
    const sudo = (await app.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(app, secret) } })).body.sudoToken;
    const setup = await app.request('POST', '/user/2fa/totp/setup', { token: sudo });
    assert.equal(setup.status, 200);
    assertError(await app.request('POST', '/user/2fa/totp/enable', { token: access, body: { totp: totpCode(app, setup.body.secret) } }), 403, 'SUDO_REQUIRED');
    app.clock.advance(30_000);
    const enable = await app.request('POST', '/user/2fa/totp/enable', { token: sudo, body: { totp: totpCode(app, setup.body.secret) } });
    assert.equal(enable.status, 200, enable.text);
    app.clock.advance(30_000);
    // the old secret is void, the new one works
    const fresh = await app.token(app.adminId, 'access');
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: fresh, body: { totp: totpCode(app, secret) } }), 401, 'TOTP_INCORRECT');
    assert.equal((await app.request('POST', '/user/2fa/totp/authenticate', { token: fresh, body: { totp: totpCode(app, setup.body.secret) } })).status, 200);
  });
});

describe('2fa: login and step-up with TOTP', () => {
  test('login with 2FA answers 401 TWO_FACTOR_REQUIRED with a 5-minute partial token; TOTP trades it for three tokens', async (t) => {
    const { t: app, secret } = await withTotp();
    t.after(() => app.close());
    const partial = await partialLogin(app);
    const claims = await verifyToken(app.deps.keys, partial, ['partial'], app.clock.now());
    assert.equal(claims.sub, app.adminId);
    assert.equal(claims.exp - claims.iat, 5 * 60);
    // the partial token is no access token
    assertError(await app.request('GET', '/user/2fa', { token: partial }), 401, 'UNAUTHENTICATED');

    const res = await app.request('POST', '/user/2fa/totp/authenticate', { token: partial, body: { totp: totpCode(app, secret) } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['accessToken', 'refreshToken', 'sudoToken']);
    const kinds = await Promise.all([
      verifyToken(app.deps.keys, res.body.accessToken, ['access'], app.clock.now()),
      verifyToken(app.deps.keys, res.body.refreshToken, ['refresh'], app.clock.now()),
      verifyToken(app.deps.keys, res.body.sudoToken, ['sudo'], app.clock.now()),
    ]);
    assert.equal(kinds[2].exp - kinds[2].iat, 5 * 60);
    assert.ok(kinds.every((k) => k.sub === app.adminId && k.sid === kinds[1].sid && k.sid));
    assert.equal((await app.request('GET', '/auth/accesstoken', { token: res.body.refreshToken })).status, 200);
    // the sudo token works for sudo operations
    assert.equal((await app.request('POST', '/user/2fa/recovery-code/regenerate', { token: res.body.sudoToken })).status, 200);
  });

  test('an expired partial token is refused', async (t) => {
    const { t: app, secret } = await withTotp();
    t.after(() => app.close());
    const partial = await partialLogin(app);
    app.clock.advance(5 * 60 * 1000);
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: partial, body: { totp: totpCode(app, secret) } }), 401, 'UNAUTHENTICATED');
  });

  test('a fresh access token steps up to a sudo token only; one older than 5 minutes gets TOKEN_TOO_OLD', async (t) => {
    const { t: app, secret, access, refresh } = await withTotp();
    t.after(() => app.close());
    const res = await app.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(app, secret) } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), ['sudoToken']);
    const sudo = await verifyToken(app.deps.keys, res.body.sudoToken, ['sudo'], app.clock.now());
    const parent = await verifyToken(app.deps.keys, access, ['access'], app.clock.now());
    assert.equal(sudo.sid, parent.sid, 'the sudo token belongs to the access token\'s session');

    const old = await accessFrom(app, refresh);
    app.clock.advance(5 * 60 * 1000 + 1000);
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: old, body: { totp: totpCode(app, secret) } }), 401, 'TOKEN_TOO_OLD');
    assertError(await app.request('POST', '/user/2fa/recovery-code/authenticate', { token: old, body: { recoveryCode: 'a'.repeat(16) } }), 401, 'TOKEN_TOO_OLD');
    // an authentication failure: reported before body validation
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: old, body: { totp: 'x' } }), 401, 'TOKEN_TOO_OLD');
  });

  test('a sudo token minted from a session dies with that session', async (t) => {
    const { t: app, secret, access, refresh } = await withTotp();
    t.after(() => app.close());
    const sudo = (await app.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(app, secret) } })).body.sudoToken;
    assert.equal((await app.request('POST', '/auth/logout', { token: refresh })).status, 204);
    assertError(await app.request('DELETE', '/user/2fa', { token: sudo }), 401, 'UNAUTHENTICATED');
  });

  test('no replay: an accepted code is refused the second time, and so is an older one', async (t) => {
    const { t: app, secret } = await withTotp();
    t.after(() => app.close());
    const code = totpCode(app, secret);
    const first = await app.request('POST', '/user/2fa/totp/authenticate', { token: await partialLogin(app), body: { totp: code } });
    assert.equal(first.status, 200);
    const again = await app.request('POST', '/user/2fa/totp/authenticate', { token: await partialLogin(app), body: { totp: code } });
    assertError(again, 401, 'TOTP_INCORRECT');
    // the next step's code (within the tolerance) is accepted; after it, the previous step's code is not
    const next = totpCode(app, secret, 1);
    assert.equal((await app.request('POST', '/user/2fa/totp/authenticate', { token: app.adminToken, body: { totp: next } })).status, 200);
    app.clock.advance(30_000);
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: await app.token(app.adminId), body: { totp: totpCode(app, secret, -1) } }), 401, 'TOTP_INCORRECT');
  });

  test('the code used to enable TOTP cannot be replayed to log in', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const setup = await app.request('POST', '/user/2fa/totp/setup', { token: app.adminToken });
    const code = totpCode(app, setup.body.secret);
    assert.equal((await app.request('POST', '/user/2fa/totp/enable', { token: app.adminToken, body: { totp: code } })).status, 200);
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: await partialLogin(app), body: { totp: code } }), 401, 'TOTP_INCORRECT');
  });

  test('TOTP_UNINITIALIZED without TOTP; RECOVERY_CODES_UNINITIALIZED without codes', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: app.adminToken, body: { totp: '123456' } }), 409, 'TOTP_UNINITIALIZED');
    assertError(await app.request('POST', '/user/2fa/recovery-code/authenticate', { token: app.adminToken, body: { recoveryCode: 'a'.repeat(16) } }), 409, 'RECOVERY_CODES_UNINITIALIZED');
    // a pending setup is not an initialized TOTP
    const setup = await app.request('POST', '/user/2fa/totp/setup', { token: app.adminToken });
    assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: app.adminToken, body: { totp: totpCode(app, setup.body.secret) } }), 409, 'TOTP_UNINITIALIZED');
  });
});

describe('2fa: recovery codes', () => {
  test('a recovery code completes a login once; the second use is refused; remaining counts down', async (t) => {
    const { t: app, recoveryCodes, access } = await withTotp();
    t.after(() => app.close());
    const code = recoveryCodes[3];
    const res = await app.request('POST', '/user/2fa/recovery-code/authenticate', { token: await partialLogin(app), body: { recoveryCode: code } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['accessToken', 'refreshToken', 'sudoToken']);
    assertError(await app.request('POST', '/user/2fa/recovery-code/authenticate', { token: await partialLogin(app), body: { recoveryCode: code } }), 401, 'RECOVERY_CODE_INCORRECT');
    assert.equal((await app.request('GET', '/user/2fa', { token: access })).body.recoveryCodes.remaining, 9);
    // another code still works; typed in upper case with dashes it is the same code
    const typed = recoveryCodes[0].toUpperCase().replace(/(.{4})(?!$)/g, '$1-');
    const step = await app.request('POST', '/user/2fa/recovery-code/authenticate', { token: access, body: { recoveryCode: typed } });
    assert.equal(step.status, 200, step.text);
    assert.deepEqual(Object.keys(step.body), ['sudoToken']);
    assert.equal((await app.request('GET', '/user/2fa', { token: access })).body.recoveryCodes.remaining, 8);
  });

  test('regenerate (sudo) voids the old codes; DELETE /user/2fa (sudo) switches 2FA off', async (t) => {
    const { t: app, recoveryCodes, access, secret } = await withTotp();
    t.after(() => app.close());
    await assertRequiresSudo(app, 'POST', '/user/2fa/recovery-code/regenerate');
    await assertRequiresSudo(app, 'DELETE', '/user/2fa');
    const sudo = (await app.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(app, secret) } })).body.sudoToken;
    const regen = await app.request('POST', '/user/2fa/recovery-code/regenerate', { token: sudo });
    assert.equal(regen.status, 200);
    assert.equal(regen.body.recoveryCodes.length, 10);
    assert.ok(regen.body.recoveryCodes.every((c: string) => !recoveryCodes.includes(c)));
    assertError(await app.request('POST', '/user/2fa/recovery-code/authenticate', { token: access, body: { recoveryCode: recoveryCodes[0] } }), 401, 'RECOVERY_CODE_INCORRECT');
    assert.equal((await app.request('POST', '/user/2fa/recovery-code/authenticate', { token: access, body: { recoveryCode: regen.body.recoveryCodes[0] } })).status, 200);

    assert.equal((await app.request('DELETE', '/user/2fa', { token: sudo })).status, 204);
    assert.deepEqual((await app.request('GET', '/user/2fa', { token: access })).body, {
      enabled: false, totp: { completedAt: null }, recoveryCodes: { completedAt: null, remaining: 0 },
    });
    // login needs no second factor any more
    assert.equal((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
    // without TOTP there is nothing to regenerate codes for
    assertError(await app.request('POST', '/user/2fa/recovery-code/regenerate', { token: sudo }), 409, 'TOTP_UNINITIALIZED');
  });
});
