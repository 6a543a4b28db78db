// Forgot password (Eniris op 1) and reset (ours): no token needed. The forgot answer is the same 204 whether or not the
// address has an account, and comes back before any mail is sent, so neither its body nor its timing tells them apart.
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { clientIp, ipThrottleKey } from '../http/client-ip.ts';
import { publicUrlOf } from '../lib/config.ts';
import { hashSecret } from './passwords.ts';
import { findUserByEmail, findUserById, setPasswordHash } from './users.store.ts';
import { revokeUserSessions } from './sessions.ts';
import { RULES, resetThrottle } from './throttle.ts';
import { isDisposableAddress } from './disposable-domains.ts';
import { mailLanguage, resetMail } from './reset-mail.ts';
import {
  RESET_TOKEN_TTL_MS, isResetTokenUsable, issueResetToken, recordResetRequest, resetLink, spendResetToken,
} from './password-reset.ts';
import { ForgotPasswordBody, ForgotPasswordQuery, ResetPasswordBody, ThrottledError } from './auth.schemas.ts';
import resetPage from './reset-password.html';
import { recordAudit } from '../audit/record.ts';

export function registerPasswordResetRoutes({ api, deps }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'post', path: '/v1/auth/forgot-password', tag: 'authentication', summary: 'Send a password reset link by e-mail',
    description: 'No token needed. Always 204 for a valid body (no way to learn whether the address has an account). When it '
      + 'has one, a link valid 60 minutes and usable once goes out by SMTP, in English, Dutch, French or German per `language` '
      + '(default English). `origin` is accepted and not used: links point at GRIDKEEPER_PUBLIC_URL. 403 DISPOSABLE_EMAIL '
      + 'for a known disposable-mail domain; 429 TOO_MANY_RESET_REQUESTS when the address or the client address asked less '
      + 'than 60 s ago.',
    query: ForgotPasswordQuery, body: ForgotPasswordBody,
    responses: {
      204: { description: 'accepted' },
      429: { description: 'TOO_MANY_RESET_REQUESTS', schema: ThrottledError },
    },
  }, async (c, { query, body }) => {
    if (isDisposableAddress(body.email)) {
      throw new ApiError('DISPOSABLE_EMAIL', 'addresses at disposable-mail domains cannot receive reset links');
    }
    const now = deps.now();
    // One unit of work whether or not the address has an account: the same commit, so the same timing.
    const issued = await db.write(async (tx) => {
      await recordResetRequest(tx, body.email, ipThrottleKey(clientIp(c, deps)), now);
      const found = await findUserByEmail(tx, body.email);
      if (!found) return undefined;
      // only root members and the user can read it: it does not tell anyone else that the address has an account
      await recordAudit(tx, c, deps, { action: 'user.password.reset-link', target: { kind: 'user', id: found.id }, changes: { resetLink: { after: 'issued' } } },
        { userId: null, token: null });
      return { user: found, token: await issueResetToken(tx, found.id, now) };
    });
    if (!issued) return c.body(null, 204);
    const { user, token } = issued;
    if (!deps.mailer.configured) {
      deps.log.warn('password reset asked, but no mail can be sent (GRIDKEEPER_SMTP_URL is not set); '
        + '`gridkeeper user reset-link <email>` prints a link to hand over', { userId: user.id });
      return c.body(null, 204);
    }
    const language = mailLanguage(query.language);
    const mail = resetMail(language, resetLink(publicUrlOf(deps.config), token), RESET_TOKEN_TTL_MS / 60_000);
    // Not awaited: the answer must not wait for (or reveal) the SMTP exchange. Failures are logged, never thrown.
    void deps.mailer.send({ to: user.email, language, ...mail }).then(
      () => deps.log.info('password reset mail sent', { userId: user.id, language }),
      (err: Error) => deps.log.error('password reset mail could not be sent', { userId: user.id, error: err.message }),
    );
    return c.body(null, 204);
  });

  api.route({
    method: 'post', path: '/v1/auth/reset-password', tag: 'authentication', summary: 'Set a new password with a reset token',
    description: 'No token needed: body { token, newPassword } with the token of a reset link. 204; the token is then void, '
      + 'and every refresh token of the user (and the tokens minted from them) is revoked. 400 RESET_TOKEN_INVALID for an '
      + 'unknown, used or expired token. Two-factor authentication, when enabled, is still asked at the next login.',
    body: ResetPasswordBody,
    responses: { 204: { description: 'password set' } },
  }, async (c, { body }) => {
    const invalid = () => new ApiError('RESET_TOKEN_INVALID', 'the reset token is unknown, used or expired');
    // checked before the (deliberately slow) password hash, so made-up tokens cost the server almost nothing
    if (!(await isResetTokenUsable(db, body.token, deps.now()))) throw invalid();
    const hash = await hashSecret(body.newPassword);
    const now = deps.now();
    await db.write(async (tx) => {
      // spent inside the transaction that sets the password: of two requests racing with one token, one wins
      const userId = await spendResetToken(tx, body.token, now);
      if (userId === undefined) throw invalid();
      await setPasswordHash(tx, userId, hash, now);
      const sessionsRevoked = await revokeUserSessions(tx, userId, now);
      // the holder of the link acted, as the user it was for
      await recordAudit(tx, c, deps, { action: 'user.password', target: { kind: 'user', id: userId }, changes: { password: { after: 'reset' }, sessionsRevoked } },
        { userId, token: null });
      // the owner of the mailbox proved who they are: failed guesses by others no longer lock them out
      const user = await findUserById(tx, userId);
      if (user) await resetThrottle(tx, { rule: RULES.passwordPerUser, subject: user.email.toLowerCase() });
    });
    return c.body(null, 204);
  });

  api.route({
    method: 'get', path: '/reset-password', tag: 'authentication', summary: 'The page a reset link opens',
    description: 'A small offline form that reads the token from the link\'s fragment and posts it with the new password to '
      + '/v1/auth/reset-password.',
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
  }, (c) => {
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cache-Control', 'no-store');
    return c.html(resetPage);
  });
}
