import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LruCache } from '../src/lru-cache.ts';

test('LruCache: the least recently used entry goes first, get refreshes, peek does not', () => {
  const evicted: string[] = [];
  const c = new LruCache<string, number>(3, (k) => evicted.push(k));
  c.set('a', 1).set('b', 2).set('c', 3);
  assert.equal(c.get('a'), 1); // a is now the most recent
  assert.equal(c.peek('b'), 2); // b stays the oldest
  c.set('d', 4);
  assert.deepEqual(evicted, ['b']);
  assert.equal(c.has('b'), false);
  assert.deepEqual([...c.values()], [3, 1, 4]);
  c.set('c', 30); // overwriting refreshes without evicting
  assert.equal(c.size, 3);
  c.set('e', 5);
  assert.deepEqual(evicted, ['b', 'a']);
  assert.equal(c.delete('e'), true);
  c.clear();
  assert.equal(c.size, 0);
  assert.throws(() => new LruCache(0), RangeError);
});
