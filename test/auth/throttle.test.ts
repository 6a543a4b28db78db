// Throttles: failed passwords per user and per IP, wrong TOTP codes, wrong recovery codes. Exact retryAfter with the
// fake clock; while active even the right secret is refused; a correct second factor resets its counter.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, ADMIN_EMAIL, ADMIN_PASSWORD, type TestApp, type TestResponse } from '../support/app.ts';
import { login, loginRefresh, accessFrom, enableTotp, totpCode, restartableApp } from '../support/auth-helpers.ts';

const MIN = 60_000;

function assertThrottled(res: TestResponse, code: string, retryAfter: number): void {
  const body = assertError(res, 429, code);
  assert.equal(body.retryAfter, retryAfter, res.text);
  assert.equal(res.headers.get('retry-after'), String(retryAfter));
}

const wrongTotp = (t: TestApp, secret: string) => String((Number(totpCode(t, secret)) + 500_000) % 1e6).padStart(6, '0');

describe('throttle: passwords per user', () => {
  test('5 failures within 15 minutes: the 6th attempt gets 429 with the exact wait, even with the right password', async () => {
    const t = await makeTestApp();
    for (let i = 0; i < 5; i++) {
      assertError(await login(t, ADMIN_EMAIL, `wrong-${i}`), 401, 'PASSWORD_INCORRECT');
      t.clock.advance(MIN);
    }
    // failures at 0..4 min; now 5 min: the first ages out at 15 min
    assertThrottled(await login(t, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 600);
    // case does not open a second counter
    assertThrottled(await login(t, ADMIN_EMAIL.toUpperCase(), ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 600);
    t.clock.advance(10 * MIN - 1500);
    assertThrottled(await login(t, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 2);
    t.clock.advance(1500);
    // the first failure left the window: one attempt is free again
    assert.equal((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
    t.close();
  });

  test('refused attempts do not extend the lockout; the next failure locks until the next-oldest ages out', async () => {
    const t = await makeTestApp();
    for (let i = 0; i < 5; i++) { await login(t, ADMIN_EMAIL, 'wrong-password'); t.clock.advance(MIN); }
    for (let i = 0; i < 3; i++) assertError(await login(t, ADMIN_EMAIL, 'wrong-password'), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
    t.clock.advance(10 * MIN); // now 15 min: failure #1 (at 0) is out
    assertError(await login(t, ADMIN_EMAIL, 'wrong-password'), 401, 'PASSWORD_INCORRECT');
    // failures at 1,2,3,4,15 min: blocked until 16 min
    assertThrottled(await login(t, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 60);
    t.close();
  });

  test('unknown users are throttled exactly like known ones (no enumeration through 429)', async () => {
    const t = await makeTestApp();
    for (let i = 0; i < 5; i++) assertError(await login(t, 'ghost@localhost', 'wrong-password'), 401, 'PASSWORD_INCORRECT');
    assertThrottled(await login(t, 'ghost@localhost', 'wrong-password'), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 900);
    // another user is not affected
    assert.equal((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
    t.close();
  });

  test('parallel guesses cannot overshoot the limit', async () => {
    const t = await makeTestApp();
    const results = await Promise.all(Array.from({ length: 12 }, () => login(t, ADMIN_EMAIL, 'wrong-password')));
    assert.equal(results.filter((r) => r.status === 401).length, 5);
    assert.equal(results.filter((r) => r.status === 429).length, 7);
    t.close();
  });

  test('a correct password resets the user counter', async () => {
    const t = await makeTestApp();
    for (let i = 0; i < 4; i++) await login(t, ADMIN_EMAIL, 'wrong-password');
    assert.equal((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
    for (let i = 0; i < 4; i++) assertError(await login(t, ADMIN_EMAIL, 'wrong-password'), 401, 'PASSWORD_INCORRECT');
    t.close();
  });

  test('PUT /user/password counts wrong current passwords against the same throttle', async () => {
    const t = await makeTestApp();
    for (let i = 0; i < 5; i++) {
      assertError(await t.request('PUT', '/user/password', { token: t.adminToken, body: { currentPassword: 'wrong-password', newPassword: 'new-password-123' } }), 401, 'PASSWORD_INCORRECT');
    }
    assertThrottled(await t.request('PUT', '/user/password', { token: t.adminToken, body: { currentPassword: ADMIN_PASSWORD, newPassword: 'new-password-123' } }), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 900);
    assertThrottled(await login(t, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 900);
    t.close();
  });
});

describe('throttle: passwords per IP', () => {
  test('20 failures from one IP within 15 minutes block that IP for every user', async () => {
    const t = await makeTestApp();
    for (let i = 0; i < 20; i++) {
      assertError(await login(t, `user${i}@localhost`, 'wrong-password'), 401, 'PASSWORD_INCORRECT');
      t.clock.advance(10_000);
    }
    // first failure at 0, now 200 s
    assertThrottled(await login(t, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 700);
    t.close();
  });

  test('X-Forwarded-For is ignored unless the proxy is trusted, then its first entry is the client', async () => {
    const untrusted = await makeTestApp();
    for (let i = 0; i < 20; i++) await login(untrusted, `u${i}@localhost`, 'wrong-password', { 'x-forwarded-for': `10.0.0.${i}` });
    // all 20 counted against the socket address, whatever the header claimed
    assertError(await login(untrusted, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '10.9.9.9' }), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
    untrusted.close();

    const trusted = await makeTestApp({ env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    for (let i = 0; i < 20; i++) await login(trusted, `u${i}@localhost`, 'wrong-password', { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' });
    assertError(await login(trusted, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '203.0.113.7' }), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
    assert.equal((await login(trusted, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '203.0.113.8, 203.0.113.7' })).status, 200);
    trusted.close();
  });

  test('IPv6 clients are counted per /64', async () => {
    const t = await makeTestApp({ env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    for (let i = 0; i < 20; i++) await login(t, `u${i}@localhost`, 'wrong-password', { 'x-forwarded-for': `2001:db8:1:2::${(i + 1).toString(16)}` });
    assertError(await login(t, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '2001:db8:1:2:ffff::1' }), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
    assert.equal((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '2001:db8:1:3::1' })).status, 200);
    t.close();
  });
});

describe('throttle: second factors', () => {
  test('5 wrong TOTP codes: 429 TOO_MANY_TOTP_CHECKS with the exact wait, even for the right code', async () => {
    const t = await makeTestApp();
    const { secret } = await enableTotp(t, await accessFrom(t, await loginRefresh(t, ADMIN_EMAIL, ADMIN_PASSWORD)));
    for (let i = 0; i < 5; i++) {
      assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: await t.token(t.adminId), body: { totp: wrongTotp(t, secret) } }), 401, 'TOTP_INCORRECT');
      t.clock.advance(MIN);
    }
    assertThrottled(await t.request('POST', '/user/2fa/totp/authenticate', { token: await t.token(t.adminId), body: { totp: totpCode(t, secret) } }), 'TOO_MANY_TOTP_CHECKS', 600);
    t.clock.advance(10 * MIN);
    assert.equal((await t.request('POST', '/user/2fa/totp/authenticate', { token: await t.token(t.adminId), body: { totp: totpCode(t, secret) } })).status, 200);
    t.close();
  });

  test('a correct TOTP code resets the TOTP counter', async () => {
    const t = await makeTestApp();
    const { secret } = await enableTotp(t, await accessFrom(t, await loginRefresh(t, ADMIN_EMAIL, ADMIN_PASSWORD)));
    for (let i = 0; i < 4; i++) await t.request('POST', '/user/2fa/totp/authenticate', { token: t.adminToken, body: { totp: wrongTotp(t, secret) } });
    assert.equal((await t.request('POST', '/user/2fa/totp/authenticate', { token: await t.token(t.adminId), body: { totp: totpCode(t, secret) } })).status, 200);
    for (let i = 0; i < 4; i++) {
      assertError(await t.request('POST', '/user/2fa/totp/authenticate', { token: await t.token(t.adminId), body: { totp: wrongTotp(t, secret) } }), 401, 'TOTP_INCORRECT');
    }
    t.close();
  });

  test('5 wrong recovery codes: 429 TOO_MANY_RECOVERY_CODE_CHECKS; a correct one later resets the counter', async () => {
    const t = await makeTestApp();
    const { recoveryCodes } = await enableTotp(t, await accessFrom(t, await loginRefresh(t, ADMIN_EMAIL, ADMIN_PASSWORD)));
    const attempt = async (code: string) => t.request('POST', '/user/2fa/recovery-code/authenticate', { token: await t.token(t.adminId), body: { recoveryCode: code } });
    for (let i = 0; i < 5; i++) assertError(await attempt('wrongwrongwrong' + i), 401, 'RECOVERY_CODE_INCORRECT');
    assertThrottled(await attempt(recoveryCodes[0]), 'TOO_MANY_RECOVERY_CODE_CHECKS', 900);
    // the TOTP counter is separate
    t.clock.advance(15 * MIN);
    assert.equal((await attempt(recoveryCodes[0])).status, 200);
    for (let i = 0; i < 4; i++) await attempt('wrongwrongwrong' + i);
    assert.equal((await attempt(recoveryCodes[1])).status, 200);
    for (let i = 0; i < 4; i++) assertError(await attempt('wrongwrongwrong' + i), 401, 'RECOVERY_CODE_INCORRECT');
    t.close();
  });

  test('throttles survive a restart: the counters live in the database', async () => {
    const server = restartableApp();
    try {
      const first = await server.start();
      for (let i = 0; i < 5; i++) await first.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: 'wrong-password' } });
      first.stop();
      const second = await server.start();
      const res = await second.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      assert.equal(res.status, 429, res.text);
      assert.equal(res.body.retryAfter, 900);
      second.stop();
    } finally {
      server.cleanup();
    }
  });
});
