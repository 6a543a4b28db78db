// Throttle on wrong role join passwords (childRolePassword), in the database (table join_failures).
//
// Counted per (user, client address) AND per user across addresses, never per role: a member who guesses slows only
// himself, so nobody can lock a role's password for the others (guessing against a per-role counter could). Within a
// day's failures, the first FREE_PER_ADDRESS (per address) / FREE_PER_USER (per user) cost nothing; each one after
// waits twice as long as the one before it — 1 s, 2 s, 4 s, … — up to MAX_DELAY_MS after the latest failure.
//
// What that leaves an attacker: one account gets at most ~124 guesses a day, however many addresses it comes from
// (20 free, ~10 to ramp up to the cap in ~17 minutes, then one every 15 minutes: (24 h - 17 min) / 15 min ≈ 94).
// Accounts are not free: only a role's user managers create them, and each guess costs the attacker a scrypt hash of
// server time. Join passwords have at least 10 characters: even 100 accounts guessing for a year (~4.5 million
// guesses) cover a negligible part of that space, unless the password is a dictionary word, which no throttle fixes.
//
// An attempt is reserved before the (slow, async) scrypt check — counted as a failure in the same unit of work as the
// wait check — and released when the password was right, so parallel guesses cannot all slip through.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { deleteJoinFailure, insertJoinFailure, joinFailures, type Failures } from './password-throttle.store.ts';

export const FREE_PER_ADDRESS = 5;
export const FREE_PER_USER = 20;
export const FIRST_DELAY_MS = 1000;
export const MAX_DELAY_MS = 15 * 60 * 1000;
/** failures older than this count for nothing */
export const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;

export interface JoinAttempt { id: number }

/** How long after the latest of `failures` failures the next attempt may come, given `free` free ones. */
export function delayAfter(failures: number, free: number): number {
  if (failures < free) return 0;
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(30, failures - free));
}

/** Milliseconds until `userId` may try a join password again from `ipKey`; 0 = now. */
export async function joinWaitMs(db: Db, userId: number, ipKey: string, now: number): Promise<number> {
  const { user, address } = await joinFailures(db, userId, ipKey, now - FORGET_AFTER_MS);
  const wait = (k: Failures, free: number) => (k.last === null ? 0 : k.last + delayAfter(k.n, free) - now);
  return Math.max(0, wait(user, FREE_PER_USER), wait(address, FREE_PER_ADDRESS));
}

/**
 * Checks the wait and, when there is none, counts one failure (the reservation), committed before this resolves.
 * Rejects with 429 TOO_MANY_PASSWORD_CHECKS and retryAfter otherwise, counting nothing (a refused attempt does not
 * extend the wait).
 */
export function reserveJoinAttempt(db: Db, userId: number, ipKey: string, now: number): Promise<JoinAttempt> {
  return db.write(async (tx) => {
    const wait = await joinWaitMs(tx, userId, ipKey, now);
    if (wait > 0) {
      const retryAfter = Math.max(1, Math.ceil(wait / 1000));
      throw new ApiError('TOO_MANY_PASSWORD_CHECKS', `too many wrong join passwords: try again in ${retryAfter} s`, {
        extra: { retryAfter }, headers: { 'Retry-After': String(retryAfter) },
      });
    }
    return { id: await insertJoinFailure(tx, userId, ipKey, now, now - FORGET_AFTER_MS) };
  });
}

/** The password was right: the reserved failure was none. Inside a unit of work (pass its transaction handle). */
export async function releaseJoinAttempt(tx: Db, attempt: JoinAttempt): Promise<void> {
  await deleteJoinFailure(tx, attempt.id);
}
