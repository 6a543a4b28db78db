import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LruCache } from '../../src/lib/lru-cache.ts';

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

test('LruCache with a weight: the oldest entries go until the total fits; an entry heavier than the budget is not kept', () => {
  const evicted: string[] = [];
  const c = new LruCache<string, string>(100, (k) => evicted.push(k), { of: (v) => v.length, max: 10 });
  c.set('a', 'xxxx').set('b', 'xxxx');
  assert.equal(c.weightHeld, 8);
  c.get('a'); // b is now the oldest
  c.set('c', 'xxx');
  assert.deepEqual(evicted, ['b']);
  assert.equal(c.weightHeld, 7);
  c.set('a', 'x'); // replacing an entry replaces its weight
  assert.equal(c.weightHeld, 4);
  c.set('big', 'x'.repeat(11));
  assert.equal(c.has('big'), false);
  assert.equal(c.weightHeld, 4);
  c.delete('c');
  assert.equal(c.weightHeld, 1);
  c.clear();
  assert.equal(c.weightHeld, 0);
});
