// The threshold rules watching one field of one device, judged together. Most points breach nothing, and judging
// each rule for each of them would cost more than storing the point. Where this node knows every pair's state (the
// SQLite backend: it is the only writer), the group is split by those states: pairs in the normal phase have their
// thresholds sorted, so a batch of points inside every limit costs two comparisons and moves one shared newest point;
// only a value beyond a limit (found by binary search) or a pair in another phase is judged pair by pair.
import type { KnownStates, LastPoints, Watch } from './alarms.service.ts';

export class FieldGroup {
  readonly watches: Watch[] = [];
  /** the epoch of the known states the split was made in; -1: not split */
  private epoch = -1;
  /** normal-phase 'above' pairs by ascending threshold, and their thresholds */
  private above: Watch[] = [];
  private aboveLimits: number[] = [];
  /** normal-phase 'below' pairs by descending threshold, and their thresholds */
  private below: Watch[] = [];
  private belowLimits: number[] = [];
  /** every other pair (no-data rules; pending, active, clearing, suppressed or unknown states): judged one by one */
  private busy: Watch[] = [];
  /** the newest point judged for the normal pairs since it was last spilled: their LastPoints entry, held once */
  private lastAt = -Infinity;
  private lastValue: number | null = null;

  constructor(readonly field: string, readonly key: string) {}

  isSplit(epoch: number): boolean {
    return this.epoch === epoch;
  }

  /** Splits the pairs by their known states (null: no state yet, which is normal); a pair not known is busy. */
  split(epoch: number, known: KnownStates, last: LastPoints): void {
    this.spill(last);
    const above: Watch[] = [];
    const below: Watch[] = [];
    const busy: Watch[] = [];
    for (const w of this.watches) {
      const row = known.get(w.key);
      const normal = row === null || (row !== undefined && row.phase === 'normal');
      if (!normal || w.spec.kind === 'noData' || w.spec.threshold === null) busy.push(w);
      else if (w.spec.kind === 'above') above.push(w);
      else below.push(w);
    }
    above.sort((a, b) => a.spec.threshold! - b.spec.threshold!);
    below.sort((a, b) => b.spec.threshold! - a.spec.threshold!);
    this.above = above;
    this.aboveLimits = above.map((w) => w.spec.threshold!);
    this.below = below;
    this.belowLimits = below.map((w) => w.spec.threshold!);
    this.busy = busy;
    this.epoch = epoch;
  }

  /** Forgets the split (the pairs' states are to be read again), the shared newest point spilled first. */
  unsplit(last: LastPoints): void {
    this.spill(last);
    this.epoch = -1;
  }

  /** Writes the shared newest point into each normal pair's LastPoints entry (where newer). */
  spill(last: LastPoints): void {
    if (this.lastAt === -Infinity) return;
    for (const list of [this.above, this.below]) {
      for (const w of list) {
        const had = last.get(w.key);
        if (had === undefined) last.set(w.key, { ruleId: w.rule.id, deviceId: w.deviceId, lastAt: this.lastAt, lastValue: this.lastValue });
        else if (had.lastAt < this.lastAt) { had.lastAt = this.lastAt; had.lastValue = this.lastValue; }
      }
    }
    this.lastAt = -Infinity;
    this.lastValue = null;
  }

  /**
   * Judges `points` ([time, value] pairs) for the normal pairs of a split group at once. Returns the pairs still to be
   * judged one by one: the busy ones, and any normal pair a value breaches (the group is then unsplit: their phases
   * may move, and the next batch splits it afresh from the states).
   */
  judge(points: readonly number[], last: LastPoints): Watch[] {
    let min = Infinity;
    let max = -Infinity;
    let newest = -Infinity;
    let value: number | null = null;
    for (let i = 0; i < points.length; i += 2) {
      const v = points[i + 1];
      if (Number.isNaN(v)) continue; // no measurement (a string field): judged by no threshold
      if (v < min) min = v;
      if (v > max) max = v;
      if (points[i] > newest) { newest = points[i]; value = v; }
    }
    const overAbove = countBelow(this.aboveLimits, max);
    const underBelow = countAbove(this.belowLimits, min);
    if (overAbove === 0 && underBelow === 0) {
      // a point not newer than a pair's own newest is ignored by that pair; the shared point only ever moves forward
      if (newest > this.lastAt) { this.lastAt = newest; this.lastValue = value; }
      return this.busy;
    }
    const breached = [...this.busy, ...this.above.slice(0, overAbove), ...this.below.slice(0, underBelow)];
    // the others saw only points inside their limits: their newest point moves, through their own entries
    this.unsplit(last);
    if (newest > -Infinity) {
      const calm = [...this.above.slice(overAbove), ...this.below.slice(underBelow)];
      for (const w of calm) {
        const had = last.get(w.key);
        if (had === undefined) last.set(w.key, { ruleId: w.rule.id, deviceId: w.deviceId, lastAt: newest, lastValue: value });
        else if (had.lastAt < newest) { had.lastAt = newest; had.lastValue = value; }
      }
    }
    return breached;
  }
}

/** How many of the ascending `limits` are below `v` (the 'above' thresholds `v` breaches). */
function countBelow(limits: readonly number[], v: number): number {
  if (limits.length === 0 || !(limits[0] < v)) return 0;
  let lo = 1;
  let hi = limits.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (limits[mid] < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/** How many of the descending `limits` are above `v` (the 'below' thresholds `v` breaches). */
function countAbove(limits: readonly number[], v: number): number {
  if (limits.length === 0 || !(limits[0] > v)) return 0;
  let lo = 1;
  let hi = limits.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (limits[mid] > v) lo = mid + 1; else hi = mid;
  }
  return lo;
}
