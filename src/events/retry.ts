// When a failed delivery is tried again: the schedule of the Standard Webhooks specification (immediately, then 5 s,
// 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h: ten attempts over about three days), each delay with ±20 %
// jitter so that a receiver that came back is not hit by every retry at the same moment. A Retry-After answer
// postpones the next attempt to no earlier than it asks (at most a day).
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];
/** attempts a delivery gets in all */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const MAX_RETRY_AFTER_MS = 24 * HOUR;
const JITTER = 0.2;

/**
 * When to try again after `attempts` failed attempts (1 after the first), or undefined when the delivery has had all
 * its attempts. `random` in [0, 1).
 */
export function nextAttemptAt(attempts: number, now: number, random: number, retryAfterMs?: number): number | undefined {
  if (attempts >= MAX_ATTEMPTS) return undefined;
  const delay = RETRY_DELAYS_MS[Math.max(attempts, 1) - 1] * (1 - JITTER + 2 * JITTER * random);
  const asked = retryAfterMs === undefined ? 0 : Math.min(Math.max(retryAfterMs, 0), MAX_RETRY_AFTER_MS);
  return now + Math.round(Math.max(delay, asked));
}

/** A Retry-After value (seconds, or an HTTP-date) in milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) || !/[a-z]/i.test(text) ? undefined : Math.max(at - now, 0);
}
