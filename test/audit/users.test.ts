// Audit entries of logins (and failed logins, recorded on purpose), logout, token refresh, password changes, second
// factors and tiers. No secret — password, hash, TOTP secret, recovery code, token — is ever written.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/app.ts';
import { accessFrom, enableTotp, login, loginRefresh, totpCode } from '../support/auth-helpers.ts';
import { added, auditCount, auditText, core, refusedWithoutEntry } from './fixtures.ts';

describe('audit: logins', () => {
  it('auth.login with the session, auth.refresh, auth.logout; failed logins are recorded, throttled ones are not', async () => {
    const t = await makeTestApp();
    const me = { userId: t.adminId, email: ADMIN_EMAIL };
    const ok = await added(t, () => login(t, 'Admin@Localhost', ADMIN_PASSWORD));
    assert.deepEqual(ok.entries.map(core), [{ actor: { ...me, token: null }, action: 'auth.login', target: { kind: 'user', id: t.adminId }, changes: { factor: 'password' } }]);
    const refresh = ok.res.text;

    const again = await added(t, () => t.request('GET', '/auth/refreshtoken', { token: refresh }));
    assert.deepEqual(again.entries.map(core), [{ actor: { ...me, token: 'refresh' }, action: 'auth.refresh', target: { kind: 'user', id: t.adminId }, changes: {} }]);
    const out = await added(t, () => t.request('POST', '/auth/logout', { token: refresh }), 204);
    assert.deepEqual(out.entries.map(core), [{ actor: { ...me, token: 'refresh' }, action: 'auth.logout', target: { kind: 'user', id: t.adminId }, changes: {} }]);
    await refusedWithoutEntry(t, 401, () => t.request('POST', '/auth/logout', { token: refresh }));

    const wrong = await added(t, () => login(t, ADMIN_EMAIL, 'wrong-password-1'), 401);
    assert.deepEqual(wrong.entries.map(core), [{
      actor: { userId: null, email: null, token: null }, action: 'auth.login.failed', target: { kind: 'user', id: t.adminId },
      changes: { username: ADMIN_EMAIL, factor: 'password' },
    }]);
    const unknown = await added(t, () => login(t, 'Nobody@Example.test', 'wrong-password-1'), 401);
    assert.deepEqual(unknown.entries.map(core), [{
      actor: { userId: null, email: null, token: null }, action: 'auth.login.failed', target: { kind: 'user', id: null },
      changes: { username: 'nobody@example.test', factor: 'password' },
    }]);
    // after 5 failures for the user the throttle answers 429 without checking a password: not recorded
    for (let i = 0; i < 4; i++) await added(t, () => login(t, ADMIN_EMAIL, 'wrong-password-1'), 401);
    await refusedWithoutEntry(t, 429, () => login(t, ADMIN_EMAIL, 'wrong-password-1'));
    await refusedWithoutEntry(t, 429, () => login(t, ADMIN_EMAIL, ADMIN_PASSWORD));
    assert.doesNotMatch(await auditText(t), /wrong-password-1|admin-password-123/);
    await t.close();
  });

  it('two factors: setup, enable, partial login, TOTP login, failed TOTP, sudo step-up, recovery codes, disable', async () => {
    const t = await makeTestApp();
    const user = await t.createUser('two@example.test', 'two-factor-pass-1');
    const who = (token: string | null) => ({ userId: user.id, email: 'two@example.test', token });
    const target = { kind: 'user', id: user.id };
    const access = await accessFrom(t, await loginRefresh(t, 'two@example.test', 'two-factor-pass-1'));
    const setup = await added(t, () => t.request('POST', '/user/2fa/totp/setup', { token: access }));
    assert.deepEqual(setup.entries.map(core), [{ actor: who('access'), action: 'user.2fa.setup', target, changes: { totpSecret: { after: 'pending' } } }]);
    const secret = setup.res.body.secret;
    await refusedWithoutEntry(t, 401, () => t.request('POST', '/user/2fa/totp/enable', { token: access, body: { totp: totpCode(t, secret, 5) } }));
    const enable = await added(t, () => t.request('POST', '/user/2fa/totp/enable', { token: access, body: { totp: totpCode(t, secret) } }));
    assert.deepEqual(enable.entries.map(core), [{
      actor: who('access'), action: 'user.2fa.enable', target,
      changes: { totp: { before: 'disabled', after: 'enabled' }, recoveryCodes: { after: 'generated' } },
    }]);
    const codes: string[] = enable.res.body.recoveryCodes;
    t.clock.advance(30_000);

    const partial = await added(t, () => login(t, 'two@example.test', 'two-factor-pass-1'), 401);
    assert.deepEqual(partial.entries.map(core), [{ actor: who(null), action: 'auth.login.partial', target, changes: { factor: 'password' } }]);
    const partialToken = partial.res.body.partialAuthToken;
    const failed = await added(t, () => t.request('POST', '/user/2fa/totp/authenticate', { token: partialToken, body: { totp: totpCode(t, secret, 9) } }), 401);
    assert.deepEqual(failed.entries.map(core), [{ actor: who('partial'), action: 'auth.login.failed', target, changes: { factor: 'totp' } }]);
    const second = await added(t, () => t.request('POST', '/user/2fa/totp/authenticate', { token: partialToken, body: { totp: totpCode(t, secret) } }));
    assert.deepEqual(second.entries.map(core), [{ actor: who('partial'), action: 'auth.login', target, changes: { factor: 'totp' } }]);
    const fresh = second.res.body.accessToken;

    const sudo = await added(t, () => t.request('POST', '/user/2fa/recovery-code/authenticate', { token: fresh, body: { recoveryCode: codes[0] } }));
    assert.deepEqual(sudo.entries.map(core), [{ actor: who('access'), action: 'auth.sudo', target, changes: { factor: 'recovery-code' } }]);
    const badCode = await added(t, () => t.request('POST', '/user/2fa/recovery-code/authenticate', { token: fresh, body: { recoveryCode: codes[0] } }), 401);
    assert.deepEqual(badCode.entries.map(core), [{ actor: who('access'), action: 'auth.sudo.failed', target, changes: { factor: 'recovery-code' } }]);
    const sudoToken = sudo.res.body.sudoToken;
    const regen = await added(t, () => t.request('POST', '/user/2fa/recovery-code/regenerate', { token: sudoToken }));
    assert.deepEqual(regen.entries.map(core), [{ actor: who('sudo'), action: 'user.2fa.recovery-codes', target, changes: { recoveryCodes: { after: 'regenerated' } } }]);
    await refusedWithoutEntry(t, 403, () => t.request('DELETE', '/user/2fa', { token: fresh }));
    const off = await added(t, () => t.request('DELETE', '/user/2fa', { token: sudoToken }), 204);
    assert.deepEqual(off.entries.map(core), [{
      actor: who('sudo'), action: 'user.2fa.disable', target,
      changes: { totp: { before: 'enabled', after: 'disabled' }, recoveryCodes: { before: 'set', after: 'removed' } },
    }]);
    const text = await auditText(t);
    for (const s of [secret, ...codes, ...regen.res.body.recoveryCodes, 'two-factor-pass-1', partialToken, fresh, sudoToken]) assert.ok(!text.includes(s), 'no secret in the audit log');
    await t.close();
  });
});

describe('audit: user settings', () => {
  it('user.password records the change and the sessions it ended; a wrong current password records nothing', async () => {
    const t = await makeTestApp();
    await t.createUser('pw@example.test', 'old-password-123');
    const refresh = await loginRefresh(t, 'pw@example.test', 'old-password-123');
    const access = await accessFrom(t, refresh);
    const userId = (await t.deps.db.get(sql<{ id: number }>`SELECT id FROM users WHERE email = 'pw@example.test'`))?.id;
    await refusedWithoutEntry(t, 401, () => t.request('PUT', '/user/password', { token: access, body: { currentPassword: 'not-the-password', newPassword: 'new-password-123' } }));
    const res = await added(t, () => t.request('PUT', '/user/password', { token: access, body: { currentPassword: 'old-password-123', newPassword: 'new-password-123' } }), 204);
    assert.deepEqual(res.entries.map(core), [{
      actor: { userId, email: 'pw@example.test', token: 'access' }, action: 'user.password', target: { kind: 'user', id: userId },
      changes: { password: { after: 'changed' }, sessionsRevoked: 1 },
    }]);
    assert.doesNotMatch(await auditText(t), /old-password-123|new-password-123|not-the-password/);
    await t.close();
  });

  it('user.tier records before and after; the same tier, a non-root caller and an unknown user record nothing', async () => {
    const t = await makeTestApp();
    const user = await t.createUser('tier@example.test');
    const res = await added(t, () => t.request('PUT', '/v1/user/tier@example.test/tier', { token: t.adminToken, body: { tier: 'premium' } }), 204);
    assert.deepEqual(res.entries.map(core), [{
      actor: { userId: t.adminId, email: ADMIN_EMAIL, token: 'access' }, action: 'user.tier', target: { kind: 'user', id: user.id },
      changes: { tier: { before: 'basic', after: 'premium' } },
    }]);
    assert.deepEqual((await added(t, () => t.request('PUT', '/v1/user/tier@example.test/tier', { token: t.adminToken, body: { tier: 'premium' } }), 204)).entries, []);
    await refusedWithoutEntry(t, 403, () => t.request('PUT', '/v1/user/tier@example.test/tier', { token: user.token, body: { tier: 'free' } }));
    await refusedWithoutEntry(t, 404, () => t.request('PUT', '/v1/user/ghost@example.test/tier', { token: t.adminToken, body: { tier: 'free' } }));
    assert.ok((await auditCount(t)) === 1);
    await t.close();
  });
});
