// A Map whose idle entries are dropped, so in-memory limiter state cannot grow without bound.
//
// Lazy sweep: at most once per `sweepIntervalMs` (checked on each use) every idle entry is deleted — O(n), amortised
// over the calls of that interval. Size cap: adding a key to a full map sweeps first; if the map is still full, the
// oldest-created entries go until it is down to 90% (a low-water mark, so a full map is not swept on every insert).
// Evicting a live entry forgives it (a fresh bucket, a forgotten strike); that only happens past the cap, which the
// callers size far above the number of users / offending addresses a real appliance has.
export interface BoundedMapOptions<V> {
  maxEntries: number;
  sweepIntervalMs: number;
  /** true when the entry carries no state worth keeping at `now` (it would behave exactly like a missing one) */
  isIdle(value: V, now: number): boolean;
}

export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();
  private lastSweep = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: BoundedMapOptions<V>) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Adds a new key (callers mutate existing values in place). */
  add(key: K, value: V, now: number): void {
    if (this.entries.size >= this.options.maxEntries) this.shrink(now);
    this.entries.set(key, value);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Runs the periodic sweep when it is due. Cheap when it is not: one comparison. */
  maybeSweep(now: number): void {
    // A clock that stepped back (now < lastSweep) also triggers a sweep, so it cannot postpone sweeps forever.
    if (now - this.lastSweep >= this.options.sweepIntervalMs || now < this.lastSweep) this.sweep(now);
  }

  sweep(now: number): void {
    this.lastSweep = now;
    // Deleting the current entry while iterating a Map is safe: iteration continues with the next one.
    for (const [key, value] of this.entries) {
      if (this.options.isIdle(value, now)) this.entries.delete(key);
    }
  }

  private shrink(now: number): void {
    this.sweep(now);
    const lowWater = Math.floor(this.options.maxEntries * 0.9);
    if (this.entries.size < this.options.maxEntries) return;
    for (const key of this.entries.keys()) {
      if (this.entries.size <= lowWater) break;
      this.entries.delete(key); // insertion order: oldest first
    }
  }
}
