// IP bans (docs/api.md#ip-bans): a client address that sends 10 telemetry queries within 60 s while a Retry-After it was
// given has not elapsed is banned for 300 s.
//
// State exists only for addresses that were refused with 429 RATE_LIMITED (an address never throttled costs nothing),
// and an entry is dropped once its Retry-After, its strikes and its ban have all expired. The deadline is per address,
// not per user: the ban is about the address, and a throttled user cannot dodge it by switching accounts.
import { BoundedMap } from './bounded-map.ts';

export const BAN_RULE = { strikes: 10, strikeWindowMs: 60_000, banMs: 300_000 } as const;

interface IpEntry {
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
  private readonly entries: BoundedMap<string, IpEntry>;

  constructor(options: IpBanOptions = {}) {
    this.entries = new BoundedMap<string, IpEntry>({
      maxEntries: options.maxEntries ?? 100_000,
      sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
      isIdle: (e, now) => e.bannedUntil <= now && e.retryUntil <= now
        && (e.strikes.length === 0 || e.strikes[e.strikes.length - 1] <= now - BAN_RULE.strikeWindowMs),
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
    if (entry === undefined) return undefined;
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

  /** `ip` was told to retry after `retryAfterSeconds` (as sent in the Retry-After header). */
  noteRetryAfter(ip: string, retryAfterSeconds: number, now: number): void {
    const until = now + retryAfterSeconds * 1000;
    const entry = this.entries.get(ip);
    if (entry === undefined) this.entries.add(ip, { retryUntil: until, strikes: [], bannedUntil: 0 }, now);
    else entry.retryUntil = Math.max(entry.retryUntil, until);
  }

  sweep(now: number): void {
    this.entries.sweep(now);
  }
}
