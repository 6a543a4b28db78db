// The rules of one field judged together (src/alarms/field-group.ts) agree with each rule judged alone: several
// above and below rules with holds and hysteresis on one device's field, random batches of points (late ones among
// them) written over HTTP, and the alarms and states afterwards compared with the pure state machine run per rule.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp } from '../support/app.ts';
import { NORMAL, stepThreshold, type AlarmState, type RuleSpec } from '../../src/alarms/evaluate.ts';
import { alarms, createRule, meter, ruleBody, stateRow, write } from './fixtures.ts';

/** a small deterministic generator (the run is reproducible from its seed) */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

describe('alarms: rules of one field judged together', () => {
  it('raise and clear exactly as each rule judged alone, over random batches with late points', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const m = await meter(app);
    const specs: { body: Record<string, unknown>; spec: RuleSpec }[] = [];
    for (const [kind, value, hysteresis, hold] of [
      ['above', 10, 0, 0], ['above', 20, 2, 0], ['above', 20, 0, 3], ['above', 30, 5, 0], ['above', 50, 0, 0],
      ['below', 0, 0, 0], ['below', -10, 3, 2], ['below', 5, 1, 0],
    ] as const) {
      specs.push({
        body: { condition: { type: kind, value, hysteresis }, holdSeconds: hold },
        spec: { kind, threshold: value, hysteresis, holdMs: hold * 1000, clearHoldMs: 0, noDataMs: null },
      });
    }
    const rules = [];
    for (const [i, s] of specs.entries()) rules.push(await createRule(app, ruleBody({ name: `r${i}`, deviceIds: [m.id], ...s.body })));
    const next = random(41);
    const t0 = app.clock.now();
    // the meter's first point (p=1, an hour ago) was still queued when the rules came: it is judged first
    const model: AlarmState[] = specs.map((s) => stepThreshold(s.spec, NORMAL, t0 - 3_600_000, 1).state);
    const raised = model.map((s) => (s.phase === 'active' ? 1 : 0));
    let time = t0;
    for (let batch = 0; batch < 60; batch++) {
      const points: [number, number][] = [];
      const n = 1 + Math.floor(next() * 4);
      for (let i = 0; i < n; i++) {
        // mostly calm values with excursions beyond the limits, and now and then a late point
        const late = next() < 0.15;
        const at = late ? time - Math.floor(next() * 5000) : (time += 1000);
        const calm = next() < 0.7;
        const v = calm ? 6 + Math.floor(next() * 4) : Math.round(next() * 80 - 20);
        points.push([at, v]);
      }
      await write(app, points.map(([at, v]) => `power,nodeId=${m.nodeId} p=${v} ${at}`).join('\n'));
      await app.deps.alarms.drain();
      // the model: each rule alone, the batch's points in time order (the evaluator's order)
      const ordered = [...points].sort((a, b) => a[0] - b[0]);
      for (const [i, s] of specs.entries()) {
        for (const [at, v] of ordered) {
          const step = stepThreshold(s.spec, model[i], at, v);
          model[i] = step.state;
          if (step.transition?.kind === 'raise') raised[i]++;
        }
      }
    }
    const all = await alarms(app);
    for (const [i, rule] of rules.entries()) {
      const mine = all.filter((a: any) => a.ruleId === rule.id);
      assert.equal(mine.length, raised[i], `rule ${i}: alarms raised`);
      const open = mine.filter((a: any) => a.state.startsWith('active')).length;
      assert.equal(open, model[i].phase === 'active' || model[i].phase === 'clearing' ? 1 : 0, `rule ${i}: open alarm`);
    }
    assert.ok(raised.some((n) => n > 0) && raised.some((n, i) => n !== raised[(i + 1) % raised.length]), 'the series exercises the rules unevenly');
    // the newest point judged reaches the stored state of every rule (held once for the calm ones, written on drain)
    for (const [i, rule] of rules.entries()) {
      const row = await stateRow(app, rule.id, m.id);
      assert.equal(row?.last_at ?? null, model[i].lastAt, `rule ${i}: last_at`);
      assert.equal(row?.phase ?? 'normal', model[i].phase, `rule ${i}: phase`);
    }
  });
});
