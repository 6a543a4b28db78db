// The leaky bucket as a pure module, on a fake clock: filling, leaking, boundaries, Retry-After, tiers, eviction.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LeakyBuckets } from '../../src/rate-limit/leaky-bucket.ts';
import { effectiveTier, TIERS } from '../../src/rate-limit/tiers.ts';
import { ApiError } from '../../src/http/errors.ts';

const T0 = Date.UTC(2026, 0, 1);
const { free, basic, premium } = TIERS;

describe('leaky bucket: filling and leaking', () => {
  it('fills by the cost and reports integer remaining/used that sum to the capacity', () => {
    const b = new LeakyBuckets();
    assert.deepEqual(b.peek('u', basic, T0), { remaining: 6000, used: 0, secondsUntilEmpty: 0 });
    assert.deepEqual(b.charge('u', basic, 40, T0), { ok: true, reading: { remaining: 5960, used: 40, secondsUntilEmpty: 1 } });
    assert.deepEqual(b.charge('u', basic, 2, T0), { ok: true, reading: { remaining: 5958, used: 42, secondsUntilEmpty: 1 } });
    // basic leaks 6000/min = 100/s = 1 unit per 10 ms
    assert.deepEqual(b.peek('u', basic, T0 + 10), { remaining: 5959, used: 41, secondsUntilEmpty: 1 });
    assert.deepEqual(b.peek('u', basic, T0 + 419), { remaining: 5999, used: 1, secondsUntilEmpty: 1 });
    assert.deepEqual(b.peek('u', basic, T0 + 420), { remaining: 6000, used: 0, secondsUntilEmpty: 0 });
    assert.deepEqual(b.peek('u', basic, T0 + 86_400_000), { remaining: 6000, used: 0, secondsUntilEmpty: 0 });
  });

  it('leaks continuously: free leaks one unit per 600 ms, and a partial unit still counts as used', () => {
    const b = new LeakyBuckets();
    assert.equal(b.charge('u', free, 100, T0).ok, true);
    assert.deepEqual(b.peek('u', free, T0), { remaining: 0, used: 100, secondsUntilEmpty: 60 });
    assert.deepEqual(b.peek('u', free, T0 + 599), { remaining: 0, used: 100, secondsUntilEmpty: 60 });
    assert.deepEqual(b.peek('u', free, T0 + 600), { remaining: 1, used: 99, secondsUntilEmpty: 60 });
    assert.deepEqual(b.peek('u', free, T0 + 1000), { remaining: 1, used: 99, secondsUntilEmpty: 59 });
    assert.deepEqual(b.peek('u', free, T0 + 30_000), { remaining: 50, used: 50, secondsUntilEmpty: 30 });
    assert.deepEqual(b.peek('u', free, T0 + 59_999), { remaining: 99, used: 1, secondsUntilEmpty: 1 });
    assert.deepEqual(b.peek('u', free, T0 + 60_000), { remaining: 100, used: 0, secondsUntilEmpty: 0 });
  });

  it('does not drift: a million 1 ms steps leak exactly what one step of the same length does', () => {
    const stepped = new LeakyBuckets();
    const once = new LeakyBuckets();
    stepped.charge('u', premium, 60_000, T0);
    once.charge('u', premium, 60_000, T0);
    // charge 1 every ms for 1e6 ms on one bucket (premium leaks exactly 1 per ms): it stays exactly full
    for (let t = 1; t <= 1_000_000; t++) {
      const r = stepped.charge('u', premium, 1, T0 + t);
      if (!r.ok || r.reading.remaining !== 0) assert.fail(`drifted at ${t}: ${JSON.stringify(r)}`);
    }
    assert.deepEqual(once.peek('u', premium, T0 + 1_000_000), { remaining: 60_000, used: 0, secondsUntilEmpty: 0 });
    assert.deepEqual(stepped.peek('u', premium, T0 + 1_060_000), once.peek('u', premium, T0 + 1_000_000));
  });

  it('matches a rational-arithmetic model on random charge sequences', () => {
    // Model: level in exact rationals (BigInt numerator over 60 000), charged when level + cost <= capacity.
    fc.assert(fc.property(
      fc.constantFrom(free, basic, premium),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 700 })), { maxLength: 60 }),
      (policy, steps) => {
        const b = new LeakyBuckets();
        const C = BigInt(policy.capacity);
        const W = 60_000n;
        let level = 0n; // in 1/W units
        let t = T0;
        for (const [dt, rawCost] of steps) {
          const cost = rawCost * Math.max(1, policy.capacity / 100);
          level = level - C * BigInt(dt) > 0n ? level - C * BigInt(dt) : 0n;
          t += dt;
          const r = b.charge('k', policy, cost, t);
          const fits = level + BigInt(cost) * W <= C * W;
          if (BigInt(cost) > C) assert.equal(r.ok || r.reason, 'cost_exceeds_capacity');
          else assert.equal(r.ok, fits);
          if (r.ok) level += BigInt(cost) * W;
          const used = Number((level + W - 1n) / W);
          assert.deepEqual([r.reading.used, r.reading.remaining], [used, policy.capacity - used]);
          if (!r.ok && r.reason === 'rate_limited') {
            const excess = level + BigInt(cost) * W - C * W;
            assert.equal(r.retryAfter, Number((excess + C * 1000n - 1n) / (C * 1000n)));
          }
        }
      },
    ), { seed: 8, numRuns: 500 });
  });
});

describe('leaky bucket: boundaries and refusals', () => {
  it('cost == remaining is admitted, cost == remaining + 1 is not (also with a partly leaked unit)', () => {
    const b = new LeakyBuckets();
    b.charge('u', free, 70, T0);
    assert.equal(b.peek('u', free, T0).remaining, 30);
    const refused = b.charge('u', free, 31, T0);
    assert.deepEqual(refused, { ok: false, reason: 'rate_limited', reading: { remaining: 30, used: 70, secondsUntilEmpty: 42 }, retryAfter: 1 });
    assert.deepEqual(b.charge('u', free, 30, T0), { ok: true, reading: { remaining: 0, used: 100, secondsUntilEmpty: 60 } });
    // 900 ms later 1.5 units leaked: remaining says 1 (the half unit is still used), and exactly 1 fits
    assert.equal(b.peek('u', free, T0 + 900).remaining, 1);
    assert.equal(b.charge('u', free, 2, T0 + 900).ok, false);
    assert.equal(b.charge('u', free, 1, T0 + 900).ok, true);
    assert.equal(b.peek('u', free, T0 + 900).remaining, 0);
  });

  it('Retry-After is the exact wait until the cost fits, rounded up to whole seconds', () => {
    const b = new LeakyBuckets();
    b.charge('u', free, 100, T0);
    const retry = (cost: number, at: number) => { const r = b.charge('u', free, cost, at); return r.ok ? 0 : r.reason === 'rate_limited' ? r.retryAfter : -1; };
    assert.equal(retry(1, T0), 1); // 600 ms → 1 s
    assert.equal(retry(2, T0), 2); // 1200 ms → 2 s
    assert.equal(retry(5, T0), 3); // 3000 ms → exactly 3 s
    assert.equal(retry(6, T0), 4); // 3600 ms → 4 s
    assert.equal(retry(100, T0), 60);
    assert.equal(retry(100, T0 + 59_001), 1);
    assert.equal(retry(100, T0 + 60_000), 0); // admitted
    // and waiting exactly the advertised time is enough
    const c = new LeakyBuckets();
    c.charge('u', basic, 6000, T0);
    const r = c.charge('u', basic, 1234, T0);
    assert.ok(!r.ok && r.reason === 'rate_limited');
    assert.equal(r.retryAfter, 13); // 12.34 s
    assert.equal(c.charge('u', basic, 1234, T0 + 12_339).ok, false);
    assert.equal(c.charge('u', basic, 1234, T0 + 12_340).ok, true);
  });

  it('a cost above the capacity is refused as such and charges nothing; a refused charge charges nothing', () => {
    const b = new LeakyBuckets();
    b.charge('u', free, 10, T0);
    assert.deepEqual(b.charge('u', free, 101, T0), { ok: false, reason: 'cost_exceeds_capacity', reading: { remaining: 90, used: 10, secondsUntilEmpty: 6 } });
    assert.equal(b.charge('u', free, 91, T0).ok, false);
    assert.equal(b.peek('u', free, T0).used, 10);
    assert.equal(b.charge('u', free, 100, T0 + 6000).ok, true); // a full capacity fits an empty bucket
    assert.equal(b.charge('b', basic, 6001, T0).ok, false);
    assert.equal(b.charge('p', premium, 60_000, T0).ok, true);
  });

  it('keys are independent: (user, tier) pairs do not share a level', () => {
    const b = new LeakyBuckets();
    b.charge('1:free', free, 100, T0);
    assert.equal(b.peek('1:basic', basic, T0).remaining, 6000);
    assert.equal(b.peek('2:free', free, T0).remaining, 100);
  });

  it('a clock that steps back leaks nothing and never un-charges', () => {
    const b = new LeakyBuckets();
    b.charge('u', free, 50, T0);
    assert.equal(b.peek('u', free, T0 - 10_000).used, 50);
    assert.equal(b.charge('u', free, 10, T0 - 10_000).ok, true);
    assert.equal(b.peek('u', free, T0).used, 60);
    assert.equal(b.peek('u', free, T0 + 600).used, 59);
  });
});

describe('tiers', () => {
  it('capacities and leak rates of docs/api.md#rate-limit', () => {
    assert.deepEqual(Object.values(TIERS).map((p) => [p.name, p.capacity, p.windowMs]),
      [['free', 100, 60_000], ['basic', 6000, 60_000], ['premium', 60_000, 60_000]]);
  });

  it('apiTier may lower the tier, never raise it', () => {
    assert.equal(effectiveTier('basic', undefined), basic);
    assert.equal(effectiveTier('basic', 'free'), free);
    assert.equal(effectiveTier('basic', 'basic'), basic);
    assert.equal(effectiveTier('premium', 'free'), free);
    assert.equal(effectiveTier('free', 'free'), free);
    for (const [user, asked] of [['basic', 'premium'], ['free', 'basic'], ['free', 'premium']] as const) {
      assert.throws(() => effectiveTier(user, asked), (e: unknown) => e instanceof ApiError && e.status === 403 && e.message.includes(asked));
    }
  });
});

describe('leaky bucket: bounded state', () => {
  it('drained buckets are swept lazily and the size goes back down', () => {
    const b = new LeakyBuckets({ sweepIntervalMs: 60_000 });
    for (let u = 0; u < 5000; u++) b.charge(`${u}:free`, free, 1 + (u % 100), T0);
    b.charge('big:premium', premium, 60_000, T0 + 30_000);
    assert.equal(b.size, 5001);
    // 30 s later the sweep is not due yet
    b.peek('x', free, T0 + 30_000);
    assert.equal(b.size, 5001);
    // 60 s: every free bucket (≤ 100 units, leaking 100/min) has drained; the premium one still holds
    b.peek('x', free, T0 + 60_000);
    assert.equal(b.size, 1);
    assert.equal(b.peek('big:premium', premium, T0 + 60_000).used, 30_000);
    b.peek('x', free, T0 + 119_999);
    assert.equal(b.size, 1); // the sweep is not due before 120 s
    b.peek('x', free, T0 + 120_000);
    assert.equal(b.size, 0);
  });

  it('an evicted bucket behaves exactly like the drained bucket it was', () => {
    const b = new LeakyBuckets({ sweepIntervalMs: 1 });
    b.charge('u', free, 100, T0);
    b.peek('other', free, T0 + 60_000);
    assert.equal(b.size, 0);
    assert.deepEqual(b.charge('u', free, 100, T0 + 60_000), { ok: true, reading: { remaining: 0, used: 100, secondsUntilEmpty: 60 } });
  });

  it('the size cap holds even when every bucket is busy (oldest go first, down to 90%)', () => {
    const b = new LeakyBuckets({ maxEntries: 1000 });
    for (let u = 0; u < 5000; u++) {
      b.charge(`${u}`, free, 100, T0);
      assert.ok(b.size <= 1000);
    }
    assert.equal(b.peek('4999', free, T0).used, 100); // the newest survive
    assert.equal(b.peek('0', free, T0).used, 0);
  });
});
