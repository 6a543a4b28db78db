// PUT /user/password: with an access token and the current password, or with a sudo token alone.
// Every session of the user ends (all refresh tokens, and the access/sudo tokens minted from them).
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { clientIp, ipThrottleKey } from '../http/client-ip.ts';
import { hashSecret, verifySecret } from './passwords.ts';
import { findUserById, setPasswordHash } from './users.store.ts';
import { revokeUserSessions } from './sessions.ts';
import { RULES, releaseAttempt, reserveAttempt, type ThrottleKey } from './throttle.ts';
import { PasswordBody, ThrottledError } from './auth.schemas.ts';
import { recordAudit } from '../audit/record.ts';

export function registerPasswordRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'put', path: '/user/password', tag: 'authentication', summary: 'Change the caller\'s password',
    description: 'Body { currentPassword, newPassword } with an access token, or { newPassword } with a sudo token. '
      + 'All the user\'s refresh tokens (and tokens minted from them) are revoked.',
    auth: auth.requireSession, body: PasswordBody,
    responses: {
      204: { description: 'changed' },
      429: { description: 'TOO_MANY_FAILED_PASSWORD_CHECKS', schema: ThrottledError },
    },
  }, async (c, { body }) => {
    const actor = c.var.actor;
    if (actor.tokenType !== 'sudo' && body.currentPassword === undefined) {
      throw new ApiError('BAD_REQUEST', 'currentPassword: required with an access token (or use a sudo token)');
    }
    const user = await findUserById(db, actor.userId);
    if (!user) throw new ApiError('UNAUTHENTICATED', 'unknown user');
    if (body.currentPassword !== undefined) {
      // A stolen access token must not become a password-guessing oracle: the login throttles count here too.
      const keys: ThrottleKey[] = [
        { rule: RULES.passwordPerUser, subject: user.email.toLowerCase() },
        { rule: RULES.passwordPerIp, subject: ipThrottleKey(clientIp(c, deps)) },
      ];
      const attempt = await reserveAttempt(db, keys, 'TOO_MANY_FAILED_PASSWORD_CHECKS', deps.now());
      if (!(await verifySecret(body.currentPassword, user.password_hash))) {
        throw new ApiError('PASSWORD_INCORRECT', 'currentPassword is incorrect');
      }
      await db.write((tx) => releaseAttempt(tx, attempt));
    }
    const hash = await hashSecret(body.newPassword);
    const now = deps.now();
    await db.write(async (tx) => {
      await setPasswordHash(tx, user.id, hash, now);
      const sessionsRevoked = await revokeUserSessions(tx, user.id, now);
      await recordAudit(tx, c, deps, { action: 'user.password', target: { kind: 'user', id: user.id }, changes: { password: { after: 'changed' }, sessionsRevoked } });
    });
    return c.body(null, 204);
  });
}
