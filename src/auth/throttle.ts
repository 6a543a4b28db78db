// Throttles on failed secret checks: sliding 15-minute windows counted from rows in `auth_failures`.
//
// Why the database and not memory: a restart (update, crash, power cut) must not hand an attacker a fresh count, and a
// bounded in-memory map can be flushed by spraying made-up usernames, evicting the victim's counter. Every counted
// attempt already costs a scrypt hash (~tens of ms) or is capped per user, so one small indexed write is noise.
//
// An attempt is *reserved* before the secret is checked — counted as a failure in the same unit of work as the limit
// check, committed before the secret is looked at — and released when the secret turns out correct. So parallel requests cannot all pass the check while
// their hashes are still being computed: the limit holds exactly, whatever the concurrency.
import type { Db } from '../db/open.ts';
import type { AuthFailuresTable } from '../db/schema.ts';
import { ApiError, type ErrorCode } from '../http/errors.ts';
import { deleteFailures, deleteFailuresOf, deleteFailuresUntil, failureTimes, insertFailure } from './throttle.store.ts';

export type ThrottleScope = AuthFailuresTable['scope'];

export interface ThrottleRule {
  scope: ThrottleScope;
  /** the attempt that would make this many failures in the window is refused */
  limit: number;
  windowMs: number;
}

export const WINDOW_MS = 15 * 60 * 1000;

export const RULES = {
  passwordPerUser: { scope: 'password-user', limit: 5, windowMs: WINDOW_MS },
  passwordPerIp: { scope: 'password-ip', limit: 20, windowMs: WINDOW_MS },
  totp: { scope: 'totp', limit: 5, windowMs: WINDOW_MS },
  recoveryCode: { scope: 'recovery-code', limit: 5, windowMs: WINDOW_MS },
} as const satisfies Record<string, ThrottleRule>;

export interface ThrottleKey {
  rule: ThrottleRule;
  subject: string;
}

/** A reservation: the failure rows inserted for one attempt. Release them when the secret was right. */
export interface Attempt {
  ids: number[];
}

/**
 * Milliseconds until `key` accepts another attempt, or 0 when it accepts one now.
 * With n failures in the window (n >= limit), the (n - limit + 1)-th oldest must age out first.
 */
export async function waitMs(db: Db, key: ThrottleKey, now: number): Promise<number> {
  const { scope, limit, windowMs } = key.rule;
  const times = await failureTimes(db, scope, key.subject, now - windowMs);
  if (times.length < limit) return 0;
  return times[times.length - limit] + windowMs - now;
}

/**
 * Checks every key and, when none is exhausted, records one failure under each (the reservation) — atomically, in one
 * unit of work, committed before this resolves. Rejects with 429 `code` and `retryAfter` (seconds, rounded up) when any
 * key is exhausted; nothing is recorded then, so a refused attempt does not extend the lockout.
 */
export async function reserveAttempt(db: Db, keys: readonly ThrottleKey[], code: ErrorCode, now: number): Promise<Attempt> {
  return db.write(async (tx) => {
    let wait = 0;
    for (const k of keys) wait = Math.max(wait, await waitMs(tx, k, now));
    if (wait > 0) throw tooMany(code, wait);
    await pruneExpired(tx, db, now);
    const ids: number[] = [];
    for (const k of keys) ids.push(await insertFailure(tx, k.rule.scope, k.subject, now));
    return { ids };
  });
}

/** Reservations of this process whose secret is still being checked; settle() when the check is over. */
interface Checking {
  keys: readonly ThrottleKey[];
  settled: Promise<void>;
  /** a request deciding again after a 429, whose reservation is not written (yet) */
  waiter: boolean;
}
const checking = new WeakMap<Db, Set<Checking>>();

/** Bounds how long a request waits for other checks of its keys before it is refused. */
const MAX_WAIT_MS = 10_000;

/**
 * reserveAttempt for a request that may wait. A reservation counts as a failure until its check is over, so when a
 * key is at its limit only because of checks still running, a correct password among them would be refused without
 * the failures the throttles require (docs/api.md#throttles; e.g. 20 users logging in at once from one address).
 * Such a request waits for those checks to settle and decides again: parallel correct logins pass, parallel guesses
 * still stop exactly at the limit.
 * The caller must call settle() once the secret was checked (after releaseAttempt when it was right).
 */
export async function reserveAttemptWaiting(db: Db, keys: readonly ThrottleKey[], code: ErrorCode, now: () => number): Promise<Attempt & { settle(): void }> {
  let set = checking.get(db);
  if (!set) checking.set(db, (set = new Set()));
  const waitUntil = performance.now() + MAX_WAIT_MS;
  for (let waiter = false; ; waiter = true) {
    // Registered before the reservation is written, so a request deciding meanwhile waits for this one.
    let done!: () => void;
    const entry: Checking = { keys, settled: new Promise((r) => { done = r; }), waiter };
    const settle = () => { set.delete(entry); done(); };
    set.add(entry);
    try {
      const attempt = await reserveAttempt(db, keys, code, now());
      entry.waiter = false; // it holds a reservation now: others wait for its check
      return { ...attempt, settle };
    } catch (err) {
      settle();
      const same = (a: ThrottleKey, b: ThrottleKey) => a.rule.scope === b.rule.scope && a.subject === b.subject;
      // Only a check that holds (or may still take) a reservation can free a slot. Another waiter deciding again can
      // take a slot only once one was freed, and waiting for each other's decisions, 12 parallel wrong guesses passed
      // the turn between them until MAX_WAIT_MS ran out: each of the 7 refused waited 10 s for its 429.
      const blocking = [...set].filter((e) => !e.waiter && e.keys.some((k) => keys.some((mine) => same(k, mine))));
      const left = waitUntil - performance.now();
      if (!(err instanceof ApiError) || err.status !== 429 || blocking.length === 0 || left <= 0) throw err;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([...blocking.map((e) => e.settled), new Promise<void>((r) => { timer = setTimeout(r, left); })]);
      clearTimeout(timer);
    }
  }
}

/** The secret was right: the reserved rows were not failures. Called inside a unit of work (Db.write), with its handle. */
export async function releaseAttempt(db: Db, attempt: Attempt): Promise<void> {
  if (attempt.ids.length === 0) return;
  await deleteFailures(db, attempt.ids);
}

/** Forgets every failure counted under `key` (a correct second factor resets its counter). Inside a unit of work, with its handle. */
export async function resetThrottle(db: Db, key: ThrottleKey): Promise<void> {
  await deleteFailuresOf(db, key.rule.scope, key.subject);
}

function tooMany(code: ErrorCode, waitMsValue: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil(waitMsValue / 1000));
  return new ApiError(code, `too many failed checks: try again in ${retryAfter} s`, {
    extra: { retryAfter },
    headers: { 'Retry-After': String(retryAfter) },
  });
}

const lastPrune = new WeakMap<Db, number>();
/**
 * Rows older than the longest window count for nothing; drop them at most once a minute (indexed on `at`). Runs with
 * the unit's handle `tx`; remembered per `db`, the database handle the unit was opened on (a transaction handle is new
 * for every transaction).
 */
async function pruneExpired(tx: Db, db: Db, now: number): Promise<void> {
  const last = lastPrune.get(db);
  if (last !== undefined && now - last < 60_000 && now >= last) return;
  lastPrune.set(db, now);
  const longest = Math.max(...Object.values(RULES).map((r) => r.windowMs));
  await deleteFailuresUntil(tx, now - longest);
}
