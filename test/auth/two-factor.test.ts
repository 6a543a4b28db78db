// Two-factor authentication: TOTP against RFC 6238, setup/enable, login with the second factor, step-up to sudo,
// no replay, single-use recovery codes, regeneration and removal.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
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
  test('status before and after; setup gives an otpauth URL; enable gives 10 codes of 16 chars, stored hashed', async () => {
    const t = await makeTestApp();
    assert.deepEqual((await t.request('GET', '/user/2fa', { token: t.adminToken })).body, {
      enabled: false, totp: { completedAt: null }, recoveryCodes: { completedAt: null, remaining: 0 },
    });
    const setup = await t.request('POST', '/user/2fa/totp/setup', { token: t.adminToken });
    assert.equal(setup.status, 200, setup.text);
    assert.match(setup.body.secret, /^[A-Z2-7]{32}$/);
    const url = new URL(setup.body.otpauthUrl);
    assert.equal(url.protocol, 'otpauth:');
    assert.equal(url.searchParams.get('secret'), setup.body.secret);
    assert.equal(url.searchParams.get('issuer'), 'gridkeeper');
    assert.match(decodeURIComponent(url.pathname), /gridkeeper:admin@localhost/);
    // setting up is not enabling
    assert.equal((await t.request('GET', '/user/2fa', { token: t.adminToken })).body.enabled, false);

    const enable = await t.request('POST', '/user/2fa/totp/enable', { token: t.adminToken, body: { totp: totpCode(t, setup.body.secret) } });
    assert.equal(enable.status, 200, enable.text);
    const codes: string[] = enable.body.recoveryCodes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const code of codes) assert.match(code, /^[a-z2-9]{16}$/);
    assert.deepEqual((await t.request('GET', '/user/2fa', { token: t.adminToken })).body, {
      enabled: true,
      totp: { completedAt: new Date(t.clock.now()).toISOString() },
      recoveryCodes: { completedAt: new Date(t.clock.now()).toISOString(), remaining: 10 },
    });
    // stored hashed: no code appears in the database
    const rows = t.deps.db.sqlite.prepare('SELECT * FROM recovery_codes').all() as Record<string, unknown>[];
    assert.equal(rows.length, 10);
    const dump = JSON.stringify(rows.map((r) => Object.values(r).map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') + v.toString('hex') + v.toString('base64') : v))));
    for (const code of codes) assert.ok(!dump.includes(code), 'a recovery code is stored in clear');
    t.close();
  });

  test('enable: wrong code 401 TOTP_INCORRECT; no setup 409 TOTP_UNINITIALIZED; body validated', async () => {
    const t = await makeTestApp();
    assertError(await t.request('POST', '/user/2fa/totp/enable', { token: t.adminToken, body: { totp: '123456' } }), 409, 'TOTP_UNINITIALIZED');
    const setup = await t.request('POST', '/user/2fa/totp/setup', { token: t.adminToken });
    const wrong = String((Number(totpCode(t, setup.body.secret)) + 1) % 1e6).padStart(6, '0');
    assertError(await t.request('POST', '/user/2fa/totp/enable', { token: t.adminToken, body: { totp: wrong } }), 401, 'TOTP_INCORRECT');
    assert.match(assertError(await t.request('POST', '/user/2fa/totp/enable', { token: t.adminToken, body: { totp: '12345' } }), 400, 'BAD_REQUEST').message, /totp/);
    assert.match(assertError(await t.request('POST', '/user/2fa/totp/enable', { token: t.adminToken, body: {} }), 400, 'BAD_REQUEST').message, /totp/);
    assert.equal((await t.request('GET', '/user/2fa', { token: t.adminToken })).body.enabled, false);
    t.close();
  });

  test('setup with an access token older than 5 minutes: 401 TOKEN_TOO_OLD', async () => {
    const t = await makeTestApp();
    const token = await t.token(t.adminId, 'access');
    t.clock.advance(5 * 60 * 1000 + 1000);
    assertError(await t.request('POST', '/user/2fa/totp/setup', { token }), 401, 'TOKEN_TOO_OLD');
    t.close();
  });

  test('once enabled, setup and enable need a sudo token; with one the secret can be replaced', async () => {
    const { t, secret, access } = await withTotp();
    assertError(await t.request('POST', '/user/2fa/totp/setup', { token: access }), 403, 'SUDO_REQUIRED');
    const sudo = (await t.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(t, secret) } })).body.sudoToken;
    const setup = await t.request('POST', '/user/2fa/totp/setup', { token: sudo });
    assert.equal(setup.status, 200);
    assertError(await t.request('POST', '/user/2fa/totp/enable', { token: access, body: { totp: totpCode(t, setup.body.secret) } }), 403, 'SUDO_REQUIRED');
    t.clock.advance(30_000);
    const enable = await t.request('POST', '/user/2fa/totp/enable', { token: sudo, body: { totp: totpCode(t, setup.body.secret) } });
    assert.equal(enable.status, 200, enable.text);
    t.clock.advance(30_000);
    // the old secret is void, the new one works
    const fresh = await t.token(t.adminId, 'access');
    assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: fresh, body: { totp: totpCode(t, secret) } }), 401, 'TOTP_INCORRECT');
    assert.equal((await t.request('POST', '/user/2fa/totp/authenticate', { token: fresh, body: { totp: totpCode(t, setup.body.secret) } })).status, 200);
    t.close();
  });
});

describe('2fa: login and step-up with TOTP', () => {
  test('login with 2FA answers 401 TWO_FACTOR_REQUIRED with a 5-minute partial token; TOTP trades it for three tokens', async () => {
    const { t, secret } = await withTotp();
    const partial = await partialLogin(t);
    const claims = await verifyToken(t.deps.keys, partial, ['partial'], t.clock.now());
    assert.equal(claims.sub, t.adminId);
    assert.equal(claims.exp - claims.iat, 5 * 60);
    // the partial token is no access token
    assertError(await t.request('GET', '/user/2fa', { token: partial }), 401, 'UNAUTHENTICATED');

    const res = await t.request('POST', '/user/2fa/totp/authenticate', { token: partial, body: { totp: totpCode(t, secret) } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['accessToken', 'refreshToken', 'sudoToken']);
    const kinds = await Promise.all([
      verifyToken(t.deps.keys, res.body.accessToken, ['access'], t.clock.now()),
      verifyToken(t.deps.keys, res.body.refreshToken, ['refresh'], t.clock.now()),
      verifyToken(t.deps.keys, res.body.sudoToken, ['sudo'], t.clock.now()),
    ]);
    assert.equal(kinds[2].exp - kinds[2].iat, 5 * 60);
    assert.ok(kinds.every((k) => k.sub === t.adminId && k.sid === kinds[1].sid && k.sid));
    assert.equal((await t.request('GET', '/auth/accesstoken', { token: res.body.refreshToken })).status, 200);
    // the sudo token works for sudo operations
    assert.equal((await t.request('POST', '/user/2fa/recovery-code/regenerate', { token: res.body.sudoToken })).status, 200);
    t.close();
  });

  test('an expired partial token is refused', async () => {
    const { t, secret } = await withTotp();
    const partial = await partialLogin(t);
    t.clock.advance(5 * 60 * 1000);
    assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: partial, body: { totp: totpCode(t, secret) } }), 401, 'UNAUTHENTICATED');
    t.close();
  });

  test('a fresh access token steps up to a sudo token only; one older than 5 minutes gets TOKEN_TOO_OLD', async () => {
    const { t, secret, access, refresh } = await withTotp();
    const res = await t.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(t, secret) } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), ['sudoToken']);
    const sudo = await verifyToken(t.deps.keys, res.body.sudoToken, ['sudo'], t.clock.now());
    const parent = await verifyToken(t.deps.keys, access, ['access'], t.clock.now());
    assert.equal(sudo.sid, parent.sid, 'the sudo token belongs to the access token\'s session');

    const old = await accessFrom(t, refresh);
    t.clock.advance(5 * 60 * 1000 + 1000);
    assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: old, body: { totp: totpCode(t, secret) } }), 401, 'TOKEN_TOO_OLD');
    assertError(await t.request('POST', '/user/2fa/recovery-code/authenticate', { token: old, body: { recoveryCode: 'a'.repeat(16) } }), 401, 'TOKEN_TOO_OLD');
    // an authentication failure: reported before body validation
    assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: old, body: { totp: 'x' } }), 401, 'TOKEN_TOO_OLD');
    t.close();
  });

  test('a sudo token minted from a session dies with that session', async () => {
    const { t, secret, access, refresh } = await withTotp();
    const sudo = (await t.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(t, secret) } })).body.sudoToken;
    assert.equal((await t.request('POST', '/auth/logout', { token: refresh })).status, 204);
    assertError(await t.request('DELETE', '/user/2fa', { token: sudo }), 401, 'UNAUTHENTICATED');
    t.close();
  });

  test('no replay: an accepted code is refused the second time, and so is an older one', async () => {
    const { t, secret } = await withTotp();
    const code = totpCode(t, secret);
    const first = await t.request('POST', '/user/2fa/totp/authenticate', { token: await partialLogin(t), body: { totp: code } });
    assert.equal(first.status, 200);
    const again = await t.request('POST', '/user/2fa/totp/authenticate', { token: await partialLogin(t), body: { totp: code } });
    assertError(again, 401, 'TOTP_INCORRECT');
    // the next step's code (within the tolerance) is accepted; after it, the previous step's code is not
    const next = totpCode(t, secret, 1);
    assert.equal((await t.request('POST', '/user/2fa/totp/authenticate', { token: t.adminToken, body: { totp: next } })).status, 200);
    t.clock.advance(30_000);
    assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: await t.token(t.adminId), body: { totp: totpCode(t, secret, -1) } }), 401, 'TOTP_INCORRECT');
    t.close();
  });

  test('the code used to enable TOTP cannot be replayed to log in', async () => {
    const t = await makeTestApp();
    const setup = await t.request('POST', '/user/2fa/totp/setup', { token: t.adminToken });
    const code = totpCode(t, setup.body.secret);
    assert.equal((await t.request('POST', '/user/2fa/totp/enable', { token: t.adminToken, body: { totp: code } })).status, 200);
    assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: await partialLogin(t), body: { totp: code } }), 401, 'TOTP_INCORRECT');
    t.close();
  });

  test('TOTP_UNINITIALIZED without TOTP; RECOVERY_CODES_UNINITIALIZED without codes', async () => {
    const t = await makeTestApp();
    assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: t.adminToken, body: { totp: '123456' } }), 409, 'TOTP_UNINITIALIZED');
    assertError(await t.request('POST', '/user/2fa/recovery-code/authenticate', { token: t.adminToken, body: { recoveryCode: 'a'.repeat(16) } }), 409, 'RECOVERY_CODES_UNINITIALIZED');
    // a pending setup is not an initialized TOTP
    const setup = await t.request('POST', '/user/2fa/totp/setup', { token: t.adminToken });
    assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: t.adminToken, body: { totp: totpCode(t, setup.body.secret) } }), 409, 'TOTP_UNINITIALIZED');
    t.close();
  });
});

describe('2fa: recovery codes', () => {
  test('a recovery code completes a login once; the second use is refused; remaining counts down', async () => {
    const { t, recoveryCodes, access } = await withTotp();
    const code = recoveryCodes[3];
    const res = await t.request('POST', '/user/2fa/recovery-code/authenticate', { token: await partialLogin(t), body: { recoveryCode: code } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['accessToken', 'refreshToken', 'sudoToken']);
    assertError(await t.request('POST', '/user/2fa/recovery-code/authenticate', { token: await partialLogin(t), body: { recoveryCode: code } }), 401, 'RECOVERY_CODE_INCORRECT');
    assert.equal((await t.request('GET', '/user/2fa', { token: access })).body.recoveryCodes.remaining, 9);
    // another code still works; typed in upper case with dashes it is the same code
    const typed = recoveryCodes[0].toUpperCase().replace(/(.{4})(?!$)/g, '$1-');
    const step = await t.request('POST', '/user/2fa/recovery-code/authenticate', { token: access, body: { recoveryCode: typed } });
    assert.equal(step.status, 200, step.text);
    assert.deepEqual(Object.keys(step.body), ['sudoToken']);
    assert.equal((await t.request('GET', '/user/2fa', { token: access })).body.recoveryCodes.remaining, 8);
    t.close();
  });

  test('regenerate (sudo) voids the old codes; DELETE /user/2fa (sudo) switches 2FA off', async () => {
    const { t, recoveryCodes, access, secret } = await withTotp();
    await assertRequiresSudo(t, 'POST', '/user/2fa/recovery-code/regenerate');
    await assertRequiresSudo(t, 'DELETE', '/user/2fa');
    const sudo = (await t.request('POST', '/user/2fa/totp/authenticate', { token: access, body: { totp: totpCode(t, secret) } })).body.sudoToken;
    const regen = await t.request('POST', '/user/2fa/recovery-code/regenerate', { token: sudo });
    assert.equal(regen.status, 200);
    assert.equal(regen.body.recoveryCodes.length, 10);
    assert.ok(regen.body.recoveryCodes.every((c: string) => !recoveryCodes.includes(c)));
    assertError(await t.request('POST', '/user/2fa/recovery-code/authenticate', { token: access, body: { recoveryCode: recoveryCodes[0] } }), 401, 'RECOVERY_CODE_INCORRECT');
    assert.equal((await t.request('POST', '/user/2fa/recovery-code/authenticate', { token: access, body: { recoveryCode: regen.body.recoveryCodes[0] } })).status, 200);

    assert.equal((await t.request('DELETE', '/user/2fa', { token: sudo })).status, 204);
    assert.deepEqual((await t.request('GET', '/user/2fa', { token: access })).body, {
      enabled: false, totp: { completedAt: null }, recoveryCodes: { completedAt: null, remaining: 0 },
    });
    // login needs no second factor any more
    assert.equal((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
    // without TOTP there is nothing to regenerate codes for
    assertError(await t.request('POST', '/user/2fa/recovery-code/regenerate', { token: sudo }), 409, 'TOTP_UNINITIALIZED');
    t.close();
  });
});
