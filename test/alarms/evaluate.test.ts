// The alarm state machine, pure: holds, hysteresis, late and out-of-order points (properties over random series),
// no-data checks and manual clears.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkNoData, clearedByHand, NORMAL, stepNoData, stepThreshold, type AlarmState, type RuleSpec, type Transition } from '../../src/alarms/evaluate.ts';

const rule = (over: Partial<RuleSpec> = {}): RuleSpec => ({ kind: 'above', threshold: 10, hysteresis: 0, holdMs: 0, clearHoldMs: 0, noDataMs: null, ...over });

function run(spec: RuleSpec, points: readonly [number, number][], from: AlarmState = NORMAL): { state: AlarmState; transitions: Transition[] } {
  let state = from;
  const transitions: Transition[] = [];
  for (const [t, v] of points) {
    const step = stepThreshold(spec, state, t, v);
    state = step.state;
    if (step.transition) transitions.push(step.transition);
  }
  return { state, transitions };
}

const specs = fc.record({
  kind: fc.constantFrom('above' as const, 'below' as const),
  threshold: fc.integer({ min: -5, max: 5 }),
  hysteresis: fc.integer({ min: 0, max: 3 }),
  holdMs: fc.constantFrom(0, 10, 50),
  clearHoldMs: fc.constantFrom(0, 10, 50),
}).map((r) => rule(r));
/** a series in time order: strictly increasing times, small integer values around the thresholds */
const series = fc.array(fc.tuple(fc.integer({ min: 1, max: 20 }), fc.integer({ min: -10, max: 10 })), { maxLength: 60 })
  .map((steps) => { let t = 0; return steps.map(([dt, v]) => [t += dt, v] as [number, number]); });

describe('alarms: thresholds', () => {
  it('raises after the hold with the first breaching value and its time; clears after the clear hold', () => {
    const spec = rule({ holdMs: 30_000, clearHoldMs: 10_000, hysteresis: 1 });
    const r = run(spec, [[0, 5], [1000, 12], [11_000, 15], [21_000, 11], [31_000, 13], [32_000, 9.5], [40_000, 9], [45_000, 8.9], [56_000, 8]]);
    assert.deepEqual(r.transitions, [{ kind: 'raise', startAt: 1000, value: 12 }, { kind: 'clear', endAt: 40_000, value: 8 }]);
    assert.equal(r.state.phase, 'normal');
    // a breach shorter than the hold raises nothing
    assert.deepEqual(run(spec, [[0, 12], [29_999, 12], [30_000, 5]]).transitions, []);
    // below rules mirror above rules
    assert.deepEqual(run(rule({ kind: 'below', threshold: 0, hysteresis: 2 }), [[1, -1], [2, 1], [3, 2]]).transitions,
      [{ kind: 'raise', startAt: 1, value: -1 }, { kind: 'clear', endAt: 3, value: 2 }]);
  });

  it('transitions alternate raise, clear, raise…; the phase says whether the last one was a raise (property)', () => {
    fc.assert(fc.property(specs, series, (spec, points) => {
      const { state, transitions } = run(spec, points);
      transitions.forEach((tr, i) => assert.equal(tr.kind, i % 2 === 0 ? 'raise' : 'clear'));
      const active = state.phase === 'active' || state.phase === 'clearing';
      assert.equal(active, transitions.length % 2 === 1);
    }), { seed: 41, numRuns: 2000 });
  });

  it('late and repeated points change nothing: the transitions are those of the series in order (property)', () => {
    const late = fc.array(fc.tuple(fc.nat(), fc.nat(30), fc.integer({ min: -10, max: 10 })), { maxLength: 30 });
    fc.assert(fc.property(specs, series, late, (spec, points, extra) => {
      const mixed: [number, number][] = [...points];
      for (const [at, back, v] of extra) {
        if (mixed.length === 0) break;
        const pos = at % mixed.length; // after mixed[pos]: no newer than the newest point seen so far
        const newest = Math.max(...mixed.slice(0, pos + 1).map((p) => p[0]));
        mixed.splice(pos + 1, 0, [newest - back, v]);
      }
      assert.deepEqual(run(spec, mixed).transitions, run(spec, points).transitions);
    }), { seed: 42, numRuns: 2000 });
  });

  it('a value wobbling inside the hysteresis band raises once and never clears (property)', () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 8.01, max: 12, noNaN: true }), { minLength: 1, maxLength: 50 }), (values) => {
      const spec = rule({ hysteresis: 2 });
      const points = [[0, 11] as [number, number], ...values.map((v, i) => [i + 1, v] as [number, number])];
      assert.deepEqual(run(spec, points).transitions, [{ kind: 'raise', startAt: 0, value: 11 }]);
    }), { seed: 43 });
  });

  it('NaN is ignored; a manual clear while breached waits for recovery before raising again', () => {
    const spec = rule();
    let r = run(spec, [[1, 11]]);
    assert.equal(stepThreshold(spec, r.state, 2, Number.NaN).state, r.state);
    const suppressed = clearedByHand(spec, r.state);
    assert.equal(suppressed.phase, 'suppressed');
    r = run(spec, [[2, 12], [3, 13]], suppressed);
    assert.deepEqual(r.transitions, []);
    r = run(spec, [[4, 9], [5, 14]], r.state);
    assert.deepEqual(r.transitions, [{ kind: 'raise', startAt: 5, value: 14 }]);
    assert.equal(clearedByHand(spec, run(spec, [[1, 11], [2, 5]]).state).phase, 'normal');
  });
});

describe('alarms: no data', () => {
  const spec = rule({ kind: 'noData', threshold: null, noDataMs: 60_000 });

  it('raises once the newest point (or the start of watching) is as old as the duration; a fresh point clears', () => {
    assert.equal(checkNoData(spec, NORMAL, 59_999, 0).transition, undefined);
    const raised = checkNoData(spec, NORMAL, 60_000, 0);
    assert.deepEqual(raised.transition, { kind: 'raise', startAt: 0, value: null });
    assert.equal(checkNoData(spec, raised.state, 120_000, 0).transition, undefined, 'raised once');
    // a delayed point (itself overdue) does not clear
    const delayed = stepNoData(spec, raised.state, 10_000, 100_000);
    assert.equal(delayed.transition, undefined);
    assert.equal(delayed.state.phase, 'active');
    const fresh = stepNoData(spec, delayed.state, 95_000, 100_000);
    assert.deepEqual(fresh.transition, { kind: 'clear', endAt: 95_000, value: null });
    // an older point than the newest seen is ignored
    assert.equal(stepNoData(spec, fresh.state, 90_000, 100_000).state, fresh.state);
    const seen = stepNoData(spec, NORMAL, 50_000, 50_000).state;
    assert.equal(checkNoData(spec, seen, 109_999, 0).transition, undefined);
    assert.deepEqual(checkNoData(spec, seen, 110_000, 0).transition, { kind: 'raise', startAt: 50_000, value: null });
  });
});
