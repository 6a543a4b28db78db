// The one bounded cache of the program: a Map kept in recency order. Past `max` entries (or, with a weight, past
// `weight.max` in total) the least recently used ones go (and onEvict hears of them), so a cache neither grows without
// bound nor forgets everything at once when full. An entry heavier than the whole budget is not kept at all.
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  private weighed = 0;

  constructor(
    readonly max: number,
    private readonly onEvict?: (key: K, value: V) => void,
    private readonly weight?: { of: (value: V) => number; max: number },
  ) {
    if (!(max >= 1)) throw new RangeError('an LruCache holds at least one entry');
  }

  /** the total weight of the entries held (0 without a weight) */
  get weightHeld(): number {
    return this.weighed;
  }

  get size(): number {
    return this.map.size;
  }

  /** The value, now the most recently used. */
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  /** The value, leaving the order alone. */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.delete(key);
    if (this.weight) {
      const w = this.weight.of(value);
      if (w > this.weight.max) return this;
      this.weighed += w;
    }
    this.map.set(key, value);
    while (this.map.size > this.max || (this.weight && this.weighed > this.weight.max)) {
      const [oldest, evicted] = this.map.entries().next().value as [K, V];
      this.delete(oldest);
      this.onEvict?.(oldest, evicted);
    }
    return this;
  }

  delete(key: K): boolean {
    if (this.weight && this.map.has(key)) this.weighed -= this.weight.of(this.map.get(key)!);
    return this.map.delete(key);
  }

  /** Deletes every entry for which `drop` holds (a sweep, O(n)). */
  deleteWhere(drop: (value: V, key: K) => boolean): void {
    // deleting the current entry while iterating a Map is safe: iteration goes on with the next one
    for (const [key, value] of this.map) if (drop(value, key)) this.delete(key);
  }

  /** Evicts the least recently used entries until at most `size` are left. */
  trimTo(size: number): void {
    for (const [key, value] of this.map) {
      if (this.map.size <= size) break;
      this.delete(key);
      this.onEvict?.(key, value);
    }
  }

  clear(): void {
    this.map.clear();
    this.weighed = 0;
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }
}
