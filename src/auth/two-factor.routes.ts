// Two-factor authentication: status, TOTP setup/enable, the second-factor step (TOTP or recovery code), recovery-code
// regeneration and switching 2FA off.
import type { Context } from 'hono';
import type { RouteContext } from '../context/route-context.ts';
import type { Deps } from '../context/deps.ts';
import type { Db } from '../db/open.ts';
import type { Actor, AppEnv } from '../http/env.ts';
import type { Authenticator } from '../http/route.ts';
import { ApiError, type ErrorCode } from '../http/errors.ts';
import { findUserById } from './users.store.ts';
import { newTotpSecret, otpauthUrl, totpStep } from './totp.ts';
import { generateRecoveryCodes, matchRecoveryCode } from './recovery-codes.ts';
import {
  acceptTotpStep, activatePendingSecret, countRecoveryCodes, deleteTwoFactor, getTwoFactor, openTotpSecret, replaceRecoveryCodes,
  setPendingSecret, spendRecoveryCode, unusedRecoveryCodes,
} from './two-factor.store.ts';
import { RULES, releaseAttempt, reserveAttempt, resetThrottle, type ThrottleKey } from './throttle.ts';
import { issueLoginTokens, issueToken } from './issue-tokens.ts';
import {
  RecoveryCodeBody, RecoveryCodesResponse, SecondFactorResponse, ThrottledError, TotpBody, TotpSetupResponse, TwoFactorStatus,
} from './auth.schemas.ts';
import { recordAudit } from '../audit/record.ts';

/** How old an access token may be to step up to sudo (or start a first TOTP setup). */
export const FRESH_ACCESS_S = 5 * 60;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A plain access token must be at most 5 minutes old for a step-up; a sudo token is fresh by its lifetime. */
function requireFresh(actor: Actor, deps: Deps): void {
  if (actor.tokenType === 'access' && Math.floor(deps.now() / 1000) - actor.issuedAt > FRESH_ACCESS_S) {
    throw new ApiError('TOKEN_TOO_OLD', `the access token is older than ${FRESH_ACCESS_S / 60} minutes: get a new one from /auth/accesstoken`);
  }
}

/**
 * The answer of a successful second factor: with a partial token (login) a new session's access, refresh and sudo
 * tokens; with an access or sudo token a sudo token of the same session.
 */
async function secondFactorAnswer(c: Context<AppEnv>, deps: Deps, factor: string): Promise<Response> {
  const actor = c.var.actor;
  if (actor.tokenType === 'partial') {
    return c.json(await issueLoginTokens(deps, actor.userId, (tx) => recordAudit(tx, c, deps, {
      action: 'auth.login', target: { kind: 'user', id: actor.userId }, changes: { factor },
    })));
  }
  return c.json({ sudoToken: await issueToken(deps, 'sudo', actor.userId, actor.sessionId) });
}

export function registerTwoFactorRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;
  // The second-factor step: a partial token, or an access token fresh enough to step up (TOKEN_TOO_OLD is an
  // authentication failure, so it comes before body validation).
  const requireStepUp: Authenticator = {
    ...auth.requirePartialOrActor,
    authenticate: async (c) => {
      await auth.requirePartialOrActor.authenticate(c);
      requireFresh(c.var.actor, deps);
    },
  };
  /**
   * The second-factor step of both factors: a failure is counted (and committed) before the code is looked at; `check`
   * throws (rejects) when the code is wrong, and otherwise spends it — with the unit's handle `tx` — in the same unit of
   * work that forgets the counted failures.
   */
  async function secondFactor(c: Context<AppEnv>, key: ThrottleKey, throttled: ErrorCode, check: (tx: Db, now: number) => Promise<void>): Promise<Response> {
    const now = deps.now();
    const attempt = await reserveAttempt(db, [key], throttled, now);
    const { userId, tokenType } = c.var.actor;
    const login = tokenType === 'partial';
    const factor = key.rule === RULES.totp ? 'totp' : 'recovery-code';
    try {
      await db.write(async (tx) => {
        await check(tx, now);
        await releaseAttempt(tx, attempt);
        await resetThrottle(tx, key);
        // a login is recorded with its new session (secondFactorAnswer); a step-up to sudo here
        if (!login) await recordAudit(tx, c, deps, { action: 'auth.sudo', target: { kind: 'user', id: userId }, changes: { factor } });
      });
    } catch (err) {
      // a wrong second factor is a failed login (or step-up), recorded on purpose in a unit of its own
      if (err instanceof ApiError && err.status === 401) {
        await db.write((tx) => recordAudit(tx, c, deps, { action: login ? 'auth.login.failed' : 'auth.sudo.failed', target: { kind: 'user', id: userId }, changes: { factor } }));
      }
      throw err;
    }
    return secondFactorAnswer(c, deps, factor);
  }
  const totpKey = (userId: number): ThrottleKey => ({ rule: RULES.totp, subject: String(userId) });
  const recoveryKey = (userId: number): ThrottleKey => ({ rule: RULES.recoveryCode, subject: String(userId) });

  api.route({
    method: 'get', path: '/user/2fa', tag: 'two-factor', summary: 'Two-factor status of the caller',
    auth: auth.requireSession,
    responses: { 200: { description: 'status', schema: TwoFactorStatus } },
  }, async (c) => {
    const userId = c.var.actor.userId;
    const tf = await getTwoFactor(db, userId);
    const { remaining } = await countRecoveryCodes(db, userId);
    return c.json({
      enabled: tf?.totp_secret != null,
      totp: { completedAt: iso(tf?.totp_enabled_at ?? null) },
      recoveryCodes: { completedAt: iso(tf?.recovery_codes_at ?? null), remaining },
    });
  });

  api.route({
    method: 'post', path: '/user/2fa/totp/setup', tag: 'two-factor', summary: 'Start a TOTP setup',
    description: 'Needs a sudo token, or — while 2FA is not yet enabled — an access token at most 5 minutes old. '
      + 'The new secret takes effect with /user/2fa/totp/enable.',
    auth: auth.requireSession,
    responses: { 200: { description: 'the secret and its otpauth:// URL (for a QR code)', schema: TotpSetupResponse } },
  }, async (c) => {
    const actor = c.var.actor;
    if (actor.tokenType !== 'sudo') {
      if ((await getTwoFactor(db, actor.userId))?.totp_secret != null) {
        throw new ApiError('SUDO_REQUIRED', '2FA is enabled: replacing the TOTP secret needs a sudo token');
      }
      requireFresh(actor, deps);
    }
    const user = await findUserById(db, actor.userId);
    if (!user) throw new ApiError('UNAUTHENTICATED', 'unknown user');
    const secret = newTotpSecret();
    await db.write(async (tx) => {
      await setPendingSecret(tx, deps.secrets, actor.userId, secret, deps.now());
      await recordAudit(tx, c, deps, { action: 'user.2fa.setup', target: { kind: 'user', id: actor.userId }, changes: { totpSecret: { after: 'pending' } } });
    });
    return c.json({ secret, otpauthUrl: otpauthUrl(user.email, secret) });
  });

  api.route({
    method: 'post', path: '/user/2fa/totp/enable', tag: 'two-factor', summary: 'Enable TOTP with a first code',
    description: 'Confirms the secret of the last setup with a code from it. Answers 10 single-use recovery codes '
      + '(shown once; earlier codes are void). While 2FA is already enabled this needs a sudo token.',
    auth: auth.requireSession, body: TotpBody,
    responses: {
      200: { description: '2FA is on', schema: RecoveryCodesResponse },
      429: { description: 'TOO_MANY_TOTP_CHECKS', schema: ThrottledError },
    },
  }, async (c, { body }) => {
    const { userId, tokenType } = c.var.actor;
    const tf = await getTwoFactor(db, userId);
    if (tf?.totp_secret != null && tokenType !== 'sudo') {
      throw new ApiError('SUDO_REQUIRED', '2FA is enabled: replacing the TOTP secret needs a sudo token');
    }
    const pending = tf?.pending_secret == null ? undefined : openTotpSecret(deps.secrets, userId, tf.pending_secret);
    if (pending === undefined) throw new ApiError('TOTP_UNINITIALIZED', 'no TOTP setup in progress: call /user/2fa/totp/setup first');
    const now = deps.now();
    const attempt = await reserveAttempt(db, [totpKey(userId)], 'TOO_MANY_TOTP_CHECKS', now);
    const step = totpStep(pending, body.totp, now);
    if (step === undefined) throw new ApiError('TOTP_INCORRECT', 'the TOTP code is incorrect');
    const recoveryCodes = generateRecoveryCodes();
    await db.write(async (tx) => {
      await activatePendingSecret(tx, deps.secrets, userId, pending, step, now);
      await replaceRecoveryCodes(tx, userId, recoveryCodes, now);
      await releaseAttempt(tx, attempt);
      await resetThrottle(tx, totpKey(userId));
      await recordAudit(tx, c, deps, {
        action: 'user.2fa.enable', target: { kind: 'user', id: userId },
        changes: { totp: { before: tf?.totp_secret != null ? 'enabled' : 'disabled', after: 'enabled' }, recoveryCodes: { after: 'generated' } },
      });
    });
    return c.json({ recoveryCodes });
  });

  api.route({
    method: 'post', path: '/user/2fa/totp/authenticate', tag: 'two-factor', summary: 'Second factor: a TOTP code',
    description: 'With a partial token (login): a new session\'s accessToken, refreshToken and sudoToken. With an access '
      + 'token at most 5 minutes old: a sudoToken. A code is accepted once.',
    auth: requireStepUp, body: TotpBody,
    responses: {
      200: { description: 'tokens', schema: SecondFactorResponse },
      429: { description: 'TOO_MANY_TOTP_CHECKS (5 wrong codes within 15 minutes)', schema: ThrottledError },
    },
  }, async (c, { body }) => {
    const userId = c.var.actor.userId;
    const stored = (await getTwoFactor(db, userId))?.totp_secret;
    if (stored == null) throw new ApiError('TOTP_UNINITIALIZED', 'TOTP is not enabled for this user');
    const secret = openTotpSecret(deps.secrets, userId, stored);
    return secondFactor(c, totpKey(userId), 'TOO_MANY_TOTP_CHECKS', async (tx, now) => {
      const step = totpStep(secret, body.totp, now);
      // no replay: a code (time step) accepted once is refused, as is any code older than the last one accepted
      if (step === undefined || !(await acceptTotpStep(tx, userId, step))) throw new ApiError('TOTP_INCORRECT', 'the TOTP code is incorrect');
    });
  });

  api.route({
    method: 'post', path: '/user/2fa/recovery-code/authenticate', tag: 'two-factor', summary: 'Second factor: a recovery code',
    description: 'Same two cases and answers as /user/2fa/totp/authenticate. Each recovery code works once.',
    auth: requireStepUp, body: RecoveryCodeBody,
    responses: {
      200: { description: 'tokens', schema: SecondFactorResponse },
      429: { description: 'TOO_MANY_RECOVERY_CODE_CHECKS (5 wrong codes within 15 minutes)', schema: ThrottledError },
    },
  }, async (c, { body }) => {
    const userId = c.var.actor.userId;
    if ((await countRecoveryCodes(db, userId)).total === 0) {
      throw new ApiError('RECOVERY_CODES_UNINITIALIZED', 'this user has no recovery codes');
    }
    return secondFactor(c, recoveryKey(userId), 'TOO_MANY_RECOVERY_CODE_CHECKS', async (tx, now) => {
      const id = matchRecoveryCode(body.recoveryCode, await unusedRecoveryCodes(tx, userId));
      if (id === undefined || !(await spendRecoveryCode(tx, id, now))) {
        throw new ApiError('RECOVERY_CODE_INCORRECT', 'the recovery code is incorrect or was already used');
      }
    });
  });

  api.route({
    method: 'post', path: '/user/2fa/recovery-code/regenerate', tag: 'two-factor', summary: 'Replace the recovery codes',
    description: '10 new codes, shown once; the old ones stop working.',
    auth: auth.requireSudo,
    responses: { 200: { description: 'the new codes', schema: RecoveryCodesResponse } },
  }, async (c) => {
    const userId = c.var.actor.userId;
    if ((await getTwoFactor(db, userId))?.totp_secret == null) throw new ApiError('TOTP_UNINITIALIZED', 'TOTP is not enabled for this user');
    const recoveryCodes = generateRecoveryCodes();
    await db.write(async (tx) => {
      await replaceRecoveryCodes(tx, userId, recoveryCodes, deps.now());
      await recordAudit(tx, c, deps, { action: 'user.2fa.recovery-codes', target: { kind: 'user', id: userId }, changes: { recoveryCodes: { after: 'regenerated' } } });
    });
    return c.json({ recoveryCodes });
  });

  api.route({
    method: 'delete', path: '/user/2fa', tag: 'two-factor', summary: 'Switch 2FA off',
    description: 'Removes the TOTP secret and the recovery codes.',
    auth: auth.requireSudo,
    responses: { 204: { description: '2FA is off' } },
  }, async (c) => {
    const userId = c.var.actor.userId;
    await db.write(async (tx) => {
      const enabled = (await getTwoFactor(tx, userId))?.totp_secret != null;
      const codes = (await countRecoveryCodes(tx, userId)).total > 0;
      await deleteTwoFactor(tx, userId);
      // switching off what is already off changes nothing and records nothing
      if (enabled || codes) {
        await recordAudit(tx, c, deps, {
          action: 'user.2fa.disable', target: { kind: 'user', id: userId },
          changes: { totp: { before: enabled ? 'enabled' : 'disabled', after: 'disabled' }, ...(codes ? { recoveryCodes: { before: 'set', after: 'removed' } } : {}) },
        });
      }
    });
    return c.body(null, 204);
  });
}
