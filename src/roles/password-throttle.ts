// Throttle on wrong role join passwords (childRolePassword): 5 failures for one role within 15 minutes -> 429
// TOO_MANY_PASSWORD_CHECKS with retryAfter. Same sliding-window and reservation rules as src/auth/throttle.ts: an attempt
// is counted BEFORE the (slow, async) scrypt check, in the same synchronous step as the limit test, and released when the
// password was right, so parallel guesses cannot all slip through while their hashes are computed.
//
// Kept in memory, not in auth_failures: that table's scope CHECK admits only the authentication scopes, and widening it
// is a migration of the auth schema. What memory costs: a restart forgets the counts (an attacker gains at most 5 more
// guesses per restart, which he does not control). The map cannot be flooded into evicting a victim's counter — nothing
// is evicted before its window ends — and each entry costs the attacker a scrypt hash of server time.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';

export const ROLE_PASSWORD_LIMIT = 5;
export const ROLE_PASSWORD_WINDOW_MS = 15 * 60 * 1000;

interface Failures { byRole: Map<number, number[]>; lastSweep: number }
const perDb = new WeakMap<Db, Failures>();

export interface RolePasswordAttempt { roleId: number; at: number }

function failuresOf(db: Db): Failures {
  let f = perDb.get(db);
  if (!f) perDb.set(db, f = { byRole: new Map(), lastSweep: -Infinity });
  return f;
}

function live(list: number[] | undefined, now: number): number[] {
  return (list ?? []).filter((at) => at > now - ROLE_PASSWORD_WINDOW_MS);
}

/** Milliseconds until role `roleId` accepts another password attempt; 0 = now. */
export function rolePasswordWaitMs(db: Db, roleId: number, now: number): number {
  const list = live(failuresOf(db).byRole.get(roleId), now);
  if (list.length < ROLE_PASSWORD_LIMIT) return 0;
  return list[list.length - ROLE_PASSWORD_LIMIT] + ROLE_PASSWORD_WINDOW_MS - now;
}

/** Counts one failure for the role, or throws 429 (recording nothing, so a refused attempt does not extend the lockout). */
export function reserveRolePasswordAttempt(db: Db, roleId: number, now: number): RolePasswordAttempt {
  const f = failuresOf(db);
  const wait = rolePasswordWaitMs(db, roleId, now);
  if (wait > 0) {
    const retryAfter = Math.max(1, Math.ceil(wait / 1000));
    throw new ApiError('TOO_MANY_PASSWORD_CHECKS', `too many wrong passwords for role ${roleId}: try again in ${retryAfter} s`, {
      extra: { retryAfter }, headers: { 'Retry-After': String(retryAfter) },
    });
  }
  sweep(f, now);
  f.byRole.set(roleId, [...live(f.byRole.get(roleId), now), now].sort((a, b) => a - b));
  return { roleId, at: now };
}

/** The password was right: the reserved failure was none. */
export function releaseRolePasswordAttempt(db: Db, attempt: RolePasswordAttempt): void {
  const f = failuresOf(db);
  const list = f.byRole.get(attempt.roleId);
  if (!list) return;
  const i = list.indexOf(attempt.at);
  if (i >= 0) list.splice(i, 1);
  if (list.length === 0) f.byRole.delete(attempt.roleId);
}

/** Drops roles whose failures all aged out, at most once a minute. */
function sweep(f: Failures, now: number): void {
  if (now - f.lastSweep < 60_000 && now >= f.lastSweep) return;
  f.lastSweep = now;
  for (const [roleId, list] of f.byRole) if (live(list, now).length === 0) f.byRole.delete(roleId);
}
