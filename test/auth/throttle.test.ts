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
  test('5 failures within 15 minutes: the 6th attempt gets 429 with the exact wait, even with the right password', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (let i = 0; i < 5; i++) {
      assertError(await login(app, ADMIN_EMAIL, `wrong-${i}`), 401, 'PASSWORD_INCORRECT');
      app.clock.advance(MIN);
    }
    // failures at 0..4 min; now 5 min: the first ages out at 15 min
    assertThrottled(await login(app, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 600);
    // case does not open a second counter
    assertThrottled(await login(app, ADMIN_EMAIL.toUpperCase(), ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 600);
    app.clock.advance(10 * MIN - 1500);
    assertThrottled(await login(app, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 2);
    app.clock.advance(1500);
    // the first failure left the window: one attempt is free again
    assert.equal((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
  });

  test('refused attempts do not extend the lockout; the next failure locks until the next-oldest ages out', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (let i = 0; i < 5; i++) { await login(app, ADMIN_EMAIL, 'wrong-password'); app.clock.advance(MIN); }
    for (let i = 0; i < 3; i++) assertError(await login(app, ADMIN_EMAIL, 'wrong-password'), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
    app.clock.advance(10 * MIN); // now 15 min: failure #1 (at 0) is out
    assertError(await login(app, ADMIN_EMAIL, 'wrong-password'), 401, 'PASSWORD_INCORRECT');
    // failures at 1,2,3,4,15 min: blocked until 16 min
    assertThrottled(await login(app, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 60);
  });

  test('unknown users are throttled exactly like known ones (no enumeration through 429)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (let i = 0; i < 5; i++) assertError(await login(app, 'ghost@localhost', 'wrong-password'), 401, 'PASSWORD_INCORRECT');
    assertThrottled(await login(app, 'ghost@localhost', 'wrong-password'), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 900);
    // another user is not affected
    assert.equal((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
  });

  test('parallel guesses cannot overshoot the limit', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: 12 }, () => login(app, ADMIN_EMAIL, 'wrong-password')));
    assert.equal(results.filter((r) => r.status === 401).length, 5);
    assert.equal(results.filter((r) => r.status === 429).length, 7);
    // the refused ones do not wait out each other (the 10 s bound on waiting; on PostgreSQL they did)
    const took = performance.now() - t0;
    assert.ok(took < 5_000, `answered after ${Math.round(took)} ms: the refused guesses waited for each other`);
  });

  test('a correct password resets the user counter', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (let i = 0; i < 4; i++) await login(app, ADMIN_EMAIL, 'wrong-password');
    assert.equal((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD)).status, 200);
    for (let i = 0; i < 4; i++) assertError(await login(app, ADMIN_EMAIL, 'wrong-password'), 401, 'PASSWORD_INCORRECT');
  });

  test('PUT /user/password counts wrong current passwords against the same throttle', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (let i = 0; i < 5; i++) {
      assertError(await app.request('PUT', '/user/password', { token: app.adminToken, body: { currentPassword: 'wrong-password', newPassword: 'new-password-123' } }), 401, 'PASSWORD_INCORRECT');
    }
    assertThrottled(await app.request('PUT', '/user/password', { token: app.adminToken, body: { currentPassword: ADMIN_PASSWORD, newPassword: 'new-password-123' } }), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 900);
    assertThrottled(await login(app, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 900);
  });
});

describe('throttle: passwords per IP', () => {
  test('20 failures from one IP within 15 minutes block that IP for every user', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    for (let i = 0; i < 20; i++) {
      assertError(await login(app, `user${i}@localhost`, 'wrong-password'), 401, 'PASSWORD_INCORRECT');
      app.clock.advance(10_000);
    }
    // first failure at 0, now 200 s
    assertThrottled(await login(app, ADMIN_EMAIL, ADMIN_PASSWORD), 'TOO_MANY_FAILED_PASSWORD_CHECKS', 700);
  });

  test('X-Forwarded-For is ignored unless the proxy is trusted, then its first entry is the client', async (t) => {
    const untrusted = await makeTestApp();
    t.after(() => untrusted.close());
    for (let i = 0; i < 20; i++) await login(untrusted, `u${i}@localhost`, 'wrong-password', { 'x-forwarded-for': `10.0.0.${i}` });
    // all 20 counted against the socket address, whatever the header claimed
    assertError(await login(untrusted, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '10.9.9.9' }), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');

    const trusted = await makeTestApp({ env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    t.after(() => trusted.close());
    for (let i = 0; i < 20; i++) await login(trusted, `u${i}@localhost`, 'wrong-password', { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' });
    assertError(await login(trusted, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '203.0.113.7' }), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
    assert.equal((await login(trusted, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '203.0.113.8, 203.0.113.7' })).status, 200);
  });

  test('IPv6 clients are counted per /64', async (t) => {
    const app = await makeTestApp({ env: { GRIDKEEPER_TRUST_PROXY: 'true' } });
    t.after(() => app.close());
    for (let i = 0; i < 20; i++) await login(app, `u${i}@localhost`, 'wrong-password', { 'x-forwarded-for': `2001:db8:1:2::${(i + 1).toString(16)}` });
    assertError(await login(app, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '2001:db8:1:2:ffff::1' }), 429, 'TOO_MANY_FAILED_PASSWORD_CHECKS');
    assert.equal((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD, { 'x-forwarded-for': '2001:db8:1:3::1' })).status, 200);
  });
});

describe('throttle: second factors', () => {
  test('5 wrong TOTP codes: 429 TOO_MANY_TOTP_CHECKS with the exact wait, even for the right code', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { secret } = await enableTotp(app, await accessFrom(app, await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD)));
    for (let i = 0; i < 5; i++) {
      assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: await app.token(app.adminId), body: { totp: wrongTotp(app, secret) } }), 401, 'TOTP_INCORRECT');
      app.clock.advance(MIN);
    }
    assertThrottled(await app.request('POST', '/user/2fa/totp/authenticate', { token: await app.token(app.adminId), body: { totp: totpCode(app, secret) } }), 'TOO_MANY_TOTP_CHECKS', 600);
    app.clock.advance(10 * MIN);
    assert.equal((await app.request('POST', '/user/2fa/totp/authenticate', { token: await app.token(app.adminId), body: { totp: totpCode(app, secret) } })).status, 200);
  });

  test('a correct TOTP code resets the TOTP counter', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { secret } = await enableTotp(app, await accessFrom(app, await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD)));
    for (let i = 0; i < 4; i++) await app.request('POST', '/user/2fa/totp/authenticate', { token: app.adminToken, body: { totp: wrongTotp(app, secret) } });
    assert.equal((await app.request('POST', '/user/2fa/totp/authenticate', { token: await app.token(app.adminId), body: { totp: totpCode(app, secret) } })).status, 200);
    for (let i = 0; i < 4; i++) {
      assertError(await app.request('POST', '/user/2fa/totp/authenticate', { token: await app.token(app.adminId), body: { totp: wrongTotp(app, secret) } }), 401, 'TOTP_INCORRECT');
    }
  });

  test('5 wrong recovery codes: 429 TOO_MANY_RECOVERY_CODE_CHECKS; a correct one later resets the counter', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { recoveryCodes } = await enableTotp(app, await accessFrom(app, await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD)));
    const attempt = async (code: string) => app.request('POST', '/user/2fa/recovery-code/authenticate', { token: await app.token(app.adminId), body: { recoveryCode: code } });
    for (let i = 0; i < 5; i++) assertError(await attempt('wrongwrongwrong' + i), 401, 'RECOVERY_CODE_INCORRECT');
    assertThrottled(await attempt(recoveryCodes[0]), 'TOO_MANY_RECOVERY_CODE_CHECKS', 900);
    // the TOTP counter is separate
    app.clock.advance(15 * MIN);
    assert.equal((await attempt(recoveryCodes[0])).status, 200);
    for (let i = 0; i < 4; i++) await attempt('wrongwrongwrong' + i);
    assert.equal((await attempt(recoveryCodes[1])).status, 200);
    for (let i = 0; i < 4; i++) assertError(await attempt('wrongwrongwrong' + i), 401, 'RECOVERY_CODE_INCORRECT');
  });

  test('throttles survive a restart: the counters live in the database', async (t) => {
    const server = restartableApp();
    t.after(() => server.cleanup());
    const first = await server.start();
    for (let i = 0; i < 5; i++) await first.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: 'wrong-password' } });
    await first.stop();
    const second = await server.start();
    const res = await second.request('POST', '/auth/login', { body: { username: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(res.status, 429, res.text);
    assert.equal(res.body.retryAfter, 900);
  });
});
