// Login and the token endpoints: /auth/login, /auth/accesstoken, /auth/refreshtoken, their validators, /auth/logout.
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { clientIp, ipThrottleKey } from '../http/client-ip.ts';
import { dummyHash, rehashed, verifySecret } from './passwords.ts';
import { findUserByEmail, upgradePasswordHash, type UserRow } from './users.store.ts';
import { isTwoFactorEnabled } from './two-factor.store.ts';
import { issueRefreshToken, issueToken } from './issue-tokens.ts';
import { revokeSession } from './sessions.ts';
import { RULES, releaseAttempt, reserveAttemptWaiting, resetThrottle, type ThrottleKey } from './throttle.ts';
import { LoginBody, ThrottledError, TwoFactorRequiredError, UserIdResponse } from './auth.schemas.ts';
import { recordAudit } from '../audit/record.ts';
import { forgetPasswordFile } from './first-password.ts';

const TEXT = 'text/plain';
export const TWO_FACTOR_MESSAGE = '2FA required: send the partialAuthToken to /user/2fa/totp/authenticate';

export function registerLoginRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'post', path: '/auth/login', tag: 'authentication', summary: 'Log in with e-mail and password',
    description: 'Answers the refresh token as text/plain. A user with 2FA gets 401 TWO_FACTOR_REQUIRED with a partialAuthToken.',
    body: LoginBody,
    responses: {
      200: { description: 'the refresh token (14 days)', contentType: TEXT },
      401: { description: 'PASSWORD_INCORRECT, or TWO_FACTOR_REQUIRED with partialAuthToken', schema: TwoFactorRequiredError },
      429: { description: 'TOO_MANY_FAILED_PASSWORD_CHECKS (5 per user or 20 per IP within 15 minutes)', schema: ThrottledError },
    },
  }, async (c, { body }) => {
    const keys: ThrottleKey[] = [
      { rule: RULES.passwordPerUser, subject: body.username.toLowerCase() },
      { rule: RULES.passwordPerIp, subject: ipThrottleKey(clientIp(c, deps)) },
    ];
    // 429 before any secret is looked at: while throttled even the right password is refused. (A limit reached only
    // by logins still being checked waits for them instead of refusing.)
    const attempt = await reserveAttemptWaiting(db, keys, 'TOO_MANY_FAILED_PASSWORD_CHECKS', deps.now);
    let user: UserRow | undefined;
    let ok = false;
    try {
      user = await findUserByEmail(db, body.username);
      // Unknown users cost one scrypt too, and get the same answer: no user-enumeration oracle.
      ok = await verifySecret(body.password, user?.password_hash ?? dummyHash());
      if (user && ok) await db.write((tx) => releaseAttempt(tx, attempt));
    } finally {
      attempt.settle();
    }
    const target = { kind: 'user' as const, id: user?.id ?? null };
    if (!user || !ok) {
      // Recorded on purpose, in a unit of its own (the request fails). Throttled attempts (429) are not: they cost the
      // caller no hash, so recording them would let anyone fill the log. The name tried is kept, the password never.
      await db.write((tx) => recordAudit(tx, c, deps, {
        action: 'auth.login.failed', target, changes: { username: body.username.toLowerCase(), factor: 'password' },
      }, { userId: null, token: null }));
      throw new ApiError('PASSWORD_INCORRECT', 'username or password incorrect');
    }
    forgetPasswordFile(deps.config, user.email);
    const twoFactor = await isTwoFactorEnabled(db, user.id);
    // The password is known to be right here: a hash made with older parameters is made again with today's.
    const upgraded = await rehashed(body.password, user.password_hash);
    await db.write(async (tx) => {
      await resetThrottle(tx, keys[0]);
      if (upgraded !== undefined) await upgradePasswordHash(tx, user.id, user.password_hash, upgraded);
      // the password was right; the login completes (auth.login) with the second factor
      if (twoFactor) await recordAudit(tx, c, deps, { action: 'auth.login.partial', target, changes: { factor: 'password' } }, { userId: user.id, token: null });
    });
    if (twoFactor) {
      const partialAuthToken = await issueToken(deps, 'partial', user.id);
      throw new ApiError('TWO_FACTOR_REQUIRED', TWO_FACTOR_MESSAGE, { extra: { partialAuthToken } });
    }
    return c.text(await issueRefreshToken(deps, user.id, (tx) => recordAudit(tx, c, deps, {
      action: 'auth.login', target, changes: { factor: 'password' },
    }, { userId: user.id, token: null })));
  });

  api.route({
    method: 'get', path: '/auth/accesstoken', tag: 'authentication', summary: 'Trade a refresh token for an access token',
    auth: auth.requireRefresh,
    responses: { 200: { description: 'an access token (10 minutes)', contentType: TEXT } },
  }, async (c) => {
    const actor = c.var.actor;
    return c.text(await issueToken(deps, 'access', actor.userId, actor.sessionId));
  });

  api.route({
    method: 'get', path: '/auth/refreshtoken', tag: 'authentication', summary: 'Get a new refresh token',
    description: 'The presented refresh token stays valid until it expires or is logged out.',
    auth: auth.requireRefresh,
    responses: { 200: { description: 'a new refresh token (14 days)', contentType: TEXT } },
  }, async (c) => c.text(await issueRefreshToken(deps, c.var.actor.userId, (tx) => recordAudit(tx, c, deps, {
    action: 'auth.refresh', target: { kind: 'user', id: c.var.actor.userId },
  }))));

  api.route({
    method: 'get', path: '/auth/refreshtoken/validate', tag: 'authentication', summary: 'Check a refresh token',
    auth: auth.requireRefresh,
    responses: { 200: { description: 'the token is valid', schema: UserIdResponse } },
  }, (c) => c.json({ userId: c.var.actor.userId }));

  api.route({
    method: 'get', path: '/auth/accesstoken/validate', tag: 'authentication', summary: 'Check an access token',
    auth: auth.requireSession,
    responses: { 200: { description: 'the token is valid', schema: UserIdResponse } },
  }, (c) => c.json({ userId: c.var.actor.userId }));

  api.route({
    method: 'post', path: '/auth/logout', tag: 'authentication', summary: 'Revoke a refresh token',
    description: 'The refresh token and every access or sudo token minted from it stop working, also after a restart.',
    auth: auth.requireRefresh,
    responses: { 204: { description: 'logged out' } },
  }, async (c) => {
    // requireRefresh only lets refresh tokens with a live session through, so sessionId is set
    await revokeSession(db, c.var.actor.sessionId!, deps.now(), (tx) => recordAudit(tx, c, deps, { action: 'auth.logout', target: { kind: 'user', id: c.var.actor.userId } }));
    return c.body(null, 204);
  });
}
