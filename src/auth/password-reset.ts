// Password reset tokens and the forgot-password limit.
//
// A token is 256 random bits (base64url), handed out once (by e-mail or by `gridkeeper user reset-link`) and stored only
// as its SHA-256: a leaked table reveals no usable link, and a fast hash is enough for a secret of that strength.
// Single use, valid 60 minutes; a newer link voids the older ones of the same user, and a reset voids them all.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { findUsableResetToken, insertResetRequests, lastResetRequest, replaceResetToken, useResetTokensOf, type ResetSubject } from './password-reset.store.ts';

export const RESET_TOKEN_TTL_MS = 60 * 60 * 1000;
/** one forgot-password request per address and per client address a minute */
export const RESET_REQUEST_INTERVAL_MS = 60 * 1000;

const hashOf = (token: string) => createHash('sha256').update(token).digest();

/** A new reset token for the user; earlier unused ones stop working. */
export async function issueResetToken(db: Db, userId: number, now: number): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.tx((tx) => replaceResetToken(tx, { user_id: userId, token_hash: hashOf(token), created_at: now, expires_at: now + RESET_TOKEN_TTL_MS }, now));
  return token;
}

/** Is the token usable now? (a cheap look-up: no password is hashed for a token that cannot work) */
export async function isResetTokenUsable(db: Db, token: string, now: number): Promise<boolean> {
  return (await findUsableResetToken(db, hashOf(token), now)) !== undefined;
}

/**
 * Spends the token: returns its user when it is known, unused and not expired, and marks it used. Run inside the
 * transaction that sets the password, so a failed write leaves the token usable.
 */
export async function spendResetToken(db: Db, token: string, now: number): Promise<number | undefined> {
  const row = await findUsableResetToken(db, hashOf(token), now);
  if (!row) return undefined;
  await useResetTokensOf(db, row.user_id, now);
  return row.user_id;
}

export function resetLink(publicUrl: string, token: string): string {
  // In the fragment: browsers never send it to a server, so it stays out of access logs and Referer headers.
  return `${publicUrl}/reset-password#token=${token}`;
}

/**
 * Records a forgot-password request for the address and the client address; 429 when either asked less than a minute
 * ago (nothing recorded then). Known and unknown addresses are counted alike.
 */
export async function recordResetRequest(db: Db, email: string, ip: string, now: number): Promise<void> {
  await db.tx(async (tx) => {
    const subjects: ResetSubject[] = [{ scope: 'email', subject: email.toLowerCase() }, { scope: 'ip', subject: ip }];
    let last = -Infinity;
    for (const s of subjects) {
      const at = await lastResetRequest(tx, s, now - RESET_REQUEST_INTERVAL_MS);
      if (at !== undefined) last = Math.max(last, at);
    }
    if (last > -Infinity) {
      const retryAfter = Math.max(1, Math.ceil((last + RESET_REQUEST_INTERVAL_MS - now) / 1000));
      throw new ApiError('TOO_MANY_RESET_REQUESTS', `a password reset was asked for less than a minute ago: try again in ${retryAfter} s`, {
        extra: { retryAfter }, headers: { 'Retry-After': String(retryAfter) },
      });
    }
    await insertResetRequests(tx, subjects, now, now - RESET_REQUEST_INTERVAL_MS);
  });
}
