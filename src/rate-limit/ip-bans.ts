// IP bans (docs/api.md#ip-bans): a client address that sends 10 telemetry queries within 60 s while a Retry-After it was
// given has not elapsed is banned for 300 s.
//
// State exists only for addresses that were refused with 429 RATE_LIMITED (an address never throttled costs nothing),
// and an entry is dropped once its Retry-After, its strikes and its ban have all expired. The deadline is per address,
// not per user: the ban is about the address, and a throttled user cannot dodge it by switching accounts.
import { IdleEntries } from './idle-entries.ts';

export const BAN_RULE = { strikes: 10, strikeWindowMs: 60_000, banMs: 300_000 } as const;

export interface IpEntry {
  /** ms; requests before this ignore the latest Retry-After given to the address */
  retryUntil: number;
  /** ms timestamps of requests sent before `retryUntil`, oldest first, at most BAN_RULE.strikes */
  strikes: number[];
  /** ms; 0 when not banned */
  bannedUntil: number;
}

export interface Ban {
  msLeft: number;
  started: boolean;
}

export interface IpBanOptions {
  maxEntries?: number;
  sweepIntervalMs?: number;
}

export class IpBans {
  private readonly entries: IdleEntries<string, IpEntry>;

  constructor(options: IpBanOptions = {}) {
    this.entries = new IdleEntries<string, IpEntry>({
      maxEntries: options.maxEntries ?? 100_000,
      sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
      isIdle: entryIdle,
    });
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Counts one request from `ip`: undefined when it may go on, else the ban in force (`started`: this very request
   * began it). A request sent while the address's Retry-After has not elapsed is a strike; the strike that makes 10
   * within 60 s starts the ban and is itself refused.
   */
  admit(ip: string, now: number): Ban | undefined {
    this.entries.maybeSweep(now);
    const entry = this.entries.get(ip);
    return entry === undefined ? undefined : admitEntry(entry, now);
  }

  /** `ip` was told to retry after `retryAfterSeconds` (as sent in the Retry-After header). */
  noteRetryAfter(ip: string, retryAfterSeconds: number, now: number): void {
    const entry = this.entries.get(ip);
    if (entry === undefined) this.entries.add(ip, retryEntry(undefined, retryAfterSeconds, now), now);
    else retryEntry(entry, retryAfterSeconds, now);
  }

  sweep(now: number): void {
    this.entries.sweep(now);
  }
}

/**
 * The rule of admit() on an address's entry, which it updates: undefined when the request may go on, else the ban in
 * force. Pure, so the store shared by several nodes (shared-limits.ts) applies exactly the same rule.
 */
export function admitEntry(entry: IpEntry, now: number): Ban | undefined {
  if (entry.bannedUntil > now) return { msLeft: entry.bannedUntil - now, started: false };
  entry.bannedUntil = 0; // a ban that ended leaves nothing behind: its strikes were cleared when it began
  if (now >= entry.retryUntil) return undefined;
  const strikes = entry.strikes;
  while (strikes.length > 0 && strikes[0] <= now - BAN_RULE.strikeWindowMs) strikes.shift();
  strikes.push(now);
  if (strikes.length < BAN_RULE.strikes) return undefined;
  entry.bannedUntil = now + BAN_RULE.banMs;
  entry.retryUntil = 0;
  strikes.length = 0;
  return { msLeft: BAN_RULE.banMs, started: true };
}

/** The rule of noteRetryAfter() on an address's entry (undefined: none yet): the entry, updated or new. */
export function retryEntry(entry: IpEntry | undefined, retryAfterSeconds: number, now: number): IpEntry {
  const until = now + retryAfterSeconds * 1000;
  if (entry === undefined) return { retryUntil: until, strikes: [], bannedUntil: 0 };
  entry.retryUntil = Math.max(entry.retryUntil, until);
  return entry;
}

/** Whether an entry holds nothing any more: no ban, no Retry-After pending, no strike within the window. */
export function entryIdle(e: IpEntry, now: number): boolean {
  return e.bannedUntil <= now && e.retryUntil <= now
    && (e.strikes.length === 0 || e.strikes[e.strikes.length - 1] <= now - BAN_RULE.strikeWindowMs);
}
