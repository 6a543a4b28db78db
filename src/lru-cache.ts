// The one bounded cache of the program: a Map kept in recency order. Past `max` entries the least recently used one
// goes (and onEvict hears of it), so a cache neither grows without bound nor forgets everything at once when full.
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly max: number, private readonly onEvict?: (key: K, value: V) => void) {
    if (!(max >= 1)) throw new RangeError('an LruCache holds at least one entry');
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
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) {
      const [oldest, evicted] = this.map.entries().next().value as [K, V];
      this.map.delete(oldest);
      this.onEvict?.(oldest, evicted);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }
}
