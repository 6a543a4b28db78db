// In-memory limiter state in the one bounded cache (lib/lru-cache.ts), so it cannot grow without bound.
//
// Lazy sweep: at most once per `sweepIntervalMs` (checked on each use) every idle entry is deleted — O(n), amortised
// over the calls of that interval. Size cap: adding a key to a full cache sweeps first; if it is still full, the least
// recently used entries go until it is down to 90% (a low-water mark, so a full cache is not swept on every insert).
// Evicting a live entry forgives it (a fresh bucket, a forgotten strike); that only happens past the cap, which the
// callers size far above the number of users / offending addresses a real appliance has.
import { LruCache } from '../lib/lru-cache.ts';

export interface IdleEntriesOptions<V> {
  maxEntries: number;
  sweepIntervalMs: number;
  /** true when the entry carries no state worth keeping at `now` (it would behave exactly like a missing one) */
  isIdle(value: V, now: number): boolean;
}

export class IdleEntries<K, V> {
  private readonly entries: LruCache<K, V>;
  private lastSweep = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: IdleEntriesOptions<V>) {
    this.entries = new LruCache<K, V>(options.maxEntries);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Adds a new key (callers mutate existing values in place). */
  add(key: K, value: V, now: number): void {
    if (this.entries.size >= this.options.maxEntries) {
      this.sweep(now);
      if (this.entries.size >= this.options.maxEntries) this.entries.trimTo(Math.floor(this.options.maxEntries * 0.9));
    }
    this.entries.set(key, value);
  }

  /** Runs the periodic sweep when it is due. Cheap when it is not: one comparison. */
  maybeSweep(now: number): void {
    // A clock that stepped back (now < lastSweep) also triggers a sweep, so it cannot postpone sweeps forever.
    if (now - this.lastSweep >= this.options.sweepIntervalMs || now < this.lastSweep) this.sweep(now);
  }

  sweep(now: number): void {
    this.lastSweep = now;
    this.entries.deleteWhere((value) => this.options.isIdle(value, now));
  }
}
