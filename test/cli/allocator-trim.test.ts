// When the service gives its allocator's free pages back (src/boot/allocator.ts trimStep): once after work, when the
// process goes idle or when heavy work gives way to lighter work; never while idle, and not twice for one piece of work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_WORK, trimStep, type TrimState } from '../../src/boot/allocator.ts';

/** The intervals (ms of CPU each) after which a trim happens, by index. */
function trimsAfter(intervals: number[], kind?: 'idle' | 'drop'): number[] {
  let state: TrimState = NO_WORK;
  const at: number[] = [];
  intervals.forEach((used, i) => {
    const step = trimStep(state, used);
    if (step.trim !== undefined && (kind === undefined || step.trim === kind)) at.push(i);
    state = step.state;
  });
  return at;
}

test('an idle interval after work trims once; idle intervals after it do not', () => {
  assert.deepEqual(trimsAfter([0, 0, 0]), []);
  assert.deepEqual(trimsAfter([40, 10, 0, 0]), [1]);
  assert.deepEqual(trimsAfter([200, 300, 29, 0, 45, 0]), [2, 5]);
});

test('heavy work followed by lighter work trims when the load falls to a quarter, and again once idle', () => {
  // a bulk load (1.4 s of CPU a second), then queries (200 ms a second), then idle
  assert.deepEqual(trimsAfter([1400, 1500, 1200, 200, 180, 220, 0, 0]), [3, 6]);
  assert.deepEqual(trimsAfter([1400, 1500, 1200, 200, 180, 220, 0, 0], 'drop'), [3]);
  assert.deepEqual(trimsAfter([1400, 1500, 1200, 200, 180, 220, 0, 0], 'idle'), [6]);
  // heavy work that stops at once: the process is idle, and V8 shrinks its heap by itself
  assert.deepEqual(trimsAfter([1400, 0], 'idle'), [1]);
  // the busiest interval counts, not the last one
  assert.deepEqual(trimsAfter([1600, 700, 390, 100]), [2]);
});

test('light or steady work never trims until idle, and a heavy load that goes on does not trim', () => {
  assert.deepEqual(trimsAfter([300, 100, 80, 300, 76, 200]), []);
  assert.deepEqual(trimsAfter([499, 100, 100, 100]), []);
  assert.deepEqual(trimsAfter([900, 800, 600, 950, 400]), []);
  // after a drop's trim, the lighter work is what counts: it must itself be heavy before another drop trims
  assert.deepEqual(trimsAfter([1000, 200, 50, 40, 0]), [1, 4]);
});
