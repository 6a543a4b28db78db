// InfluxQL functions: aggregates and selectors reduce the points of one window; transformations map a series of
// (time, value) rows to another. Semantics follow InfluxDB 1.x (tie rules included, noted where they matter).
import { StatementError } from './errors.ts';

export type Value = number | string | boolean;

/** Points of one window (or a whole stream), time order; `idx`: each point's row in the merged stream. */
export interface Points<V extends Value = Value> {
  ms: number[];
  sub: number[];
  v: V[];
  idx: number[];
}

export const AGGREGATES = new Set(['count', 'sum', 'mean', 'median', 'mode', 'spread', 'stddev', 'integral', 'distinct']);
export const SELECTORS = new Set(['first', 'last', 'min', 'max', 'percentile', 'top', 'bottom', 'sample']);
export const TRANSFORMATIONS = new Set([
  'derivative', 'non_negative_derivative', 'difference', 'non_negative_difference', 'cumulative_sum', 'moving_average', 'elapsed',
]);
/** Selectors that answer several points per window. */
export const MULTI_SELECTORS = new Set(['top', 'bottom', 'sample', 'distinct']);

/** Functions that take fields of every type; min() and max() take booleans as well; the rest numbers only. */
const ANY_TYPE = new Set(['count', 'first', 'last', 'distinct', 'mode', 'sample', 'elapsed']);
const BOOLEAN_TOO = new Set(['min', 'max']);

/** Whether a function takes a field of this type (InfluxDB 1.x's iterator types per function). */
export function takesType(fn: string, type: 'float' | 'integer' | 'unsigned' | 'string' | 'boolean'): boolean {
  if (type === 'float' || type === 'integer' || type === 'unsigned') return true;
  if (ANY_TYPE.has(fn)) return true;
  return type === 'boolean' && BOOLEAN_TOO.has(fn);
}

/** InfluxDB's error for a function over a field type it does not take. */
export function unsupportedType(fn: string, type: string): StatementError {
  return new StatementError(`unsupported ${fn} iterator type: *query.${type}InterruptIterator`);
}

/** One reduced value; a selector also gives the selected point's time and its row in the stream. */
export interface Reduced {
  value: Value | null;
  ms?: number;
  sub?: number;
  idx?: number;
}

/** Index range [from, to) of points inside [startMs, endMs). */
export function windowRange(p: Points, startMs: number, endMs: number, hint = 0): [number, number] {
  let a = hint;
  while (a < p.ms.length && p.ms[a] < startMs) a++;
  let b = a;
  while (b < p.ms.length && p.ms[b] < endMs) b++;
  return [a, b];
}

export function reduce(name: string, p: Points, a: number, b: number, arg: number | undefined): Reduced {
  const n = b - a;
  if (n <= 0) return { value: null };
  const v = p.v;
  const num = v as number[];
  switch (name) {
    case 'count': return { value: n };
    case 'sum': { let s = 0; for (let i = a; i < b; i++) s += num[i]; return { value: s }; }
    case 'mean': {
      // Kahan-free running mean like InfluxDB's reducer: sum then divide
      let s = 0;
      for (let i = a; i < b; i++) s += num[i];
      return { value: s / n };
    }
    case 'median': {
      const sorted = num.slice(a, b).sort((x, y) => x - y);
      const mid = Math.floor(n / 2);
      return { value: n % 2 === 1 ? sorted[mid] : sorted[mid - 1] + (sorted[mid] - sorted[mid - 1]) / 2 };
    }
    case 'mode': {
      if (typeof v[a] === 'boolean') {
        // booleans: true unless false is strictly more frequent
        let t = 0;
        for (let i = a; i < b; i++) if (v[i] === true) t++;
        return { value: t >= n - t };
      }
      // InfluxDB's rule: values in order (equal values in time order), runs counted; a later run of the same length
      // wins unless it started after the time last recorded for the leader (ties depend on the points' times).
      const idx = Array.from({ length: n }, (_, k) => a + k).sort((x, y) => compare(v[x], v[y]) || x - y);
      let mostFreq = 0;
      let currFreq = 0;
      let currMode = v[idx[0]];
      let mostMode = currMode;
      let mostTime = p.ms[idx[0]];
      let currTime = mostTime;
      for (const i of idx) {
        if (v[i] !== currMode) {
          currFreq = 1;
          currMode = v[i];
          currTime = p.ms[i];
          continue;
        }
        currFreq++;
        if (mostFreq > currFreq || (mostFreq === currFreq && currTime > mostTime)) continue;
        mostFreq = currFreq;
        mostMode = v[i];
        mostTime = p.ms[i];
      }
      return { value: mostMode };
    }
    case 'spread': {
      let lo = Infinity;
      let hi = -Infinity;
      for (let i = a; i < b; i++) { lo = Math.min(lo, num[i]); hi = Math.max(hi, num[i]); }
      return { value: hi - lo };
    }
    case 'stddev': {
      if (n < 2) return { value: null };
      let mean = 0;
      for (let i = a; i < b; i++) mean += num[i];
      mean /= n;
      let variance = 0;
      for (let i = a; i < b; i++) variance += (num[i] - mean) ** 2;
      return { value: Math.sqrt(variance / (n - 1)) };
    }
    case 'first': case 'last': {
      // the earliest (latest) time; among points at that time the larger value (booleans: first takes false, last true)
      let best = name === 'first' ? a : b - 1;
      const t = p.ms[best];
      const sub = p.sub[best];
      const better = name === 'first' && typeof v[best] === 'boolean' ? (x: Value, y: Value) => compare(x, y) < 0 : (x: Value, y: Value) => compare(x, y) > 0;
      for (let i = a; i < b; i++) if (p.ms[i] === t && p.sub[i] === sub && better(v[i], v[best])) best = i;
      return pick(p, best);
    }
    case 'min': case 'max': {
      // ties: the earliest point
      let best = a;
      for (let i = a + 1; i < b; i++) {
        const c = compare(v[i], v[best]);
        if (name === 'min' ? c < 0 : c > 0) best = i;
      }
      return pick(p, best);
    }
    case 'percentile': {
      const idx = Array.from({ length: n }, (_, k) => a + k).sort((x, y) => num[x] - num[y] || x - y);
      const i = Math.floor(n * (arg ?? 50) / 100 + 0.5) - 1;
      if (i < 0 || i >= n) return { value: null };
      return pick(p, idx[i]);
    }
    default: return { value: null };
  }
}

/** Order of values of one type: numbers and strings as such, false before true. */
export function compare(x: Value, y: Value): number {
  if (x === y) return 0;
  if (typeof x === 'boolean') return x ? 1 : -1;
  return x < y ? -1 : 1;
}

function pick(p: Points, i: number): Reduced {
  return { value: p.v[i], ms: p.ms[i], sub: p.sub[i], idx: p.idx[i] };
}

/**
 * top / bottom / sample / distinct: several points of a window, in time order. top and bottom with tags (`groups`:
 * each point's tag values as one key) take the best point of each tag combination first, then the best N of those.
 */
/** `desc`: the points are walked newest first (ORDER BY time DESC), which decides the time distinct() keeps per value. */
export function reduceMany(name: string, p: Points, a: number, b: number, n: number, groups?: string[], desc = false): Reduced[] {
  if (b <= a) return [];
  let idx = Array.from({ length: b - a }, (_, k) => a + k);
  const num = p.v as number[];
  // top: larger values first; bottom: smaller; equal values: the earlier point
  const order = name === 'top' ? (x: number, y: number) => num[y] - num[x] || x - y : (x: number, y: number) => num[x] - num[y] || x - y;
  let chosen: number[];
  switch (name) {
    case 'top': case 'bottom': {
      if (groups !== undefined) {
        const best = new Map<string, number>();
        for (const i of idx) {
          const key = groups[p.idx[i]];
          const cur = best.get(key);
          if (cur === undefined || order(i, cur) < 0) best.set(key, i);
        }
        idx = [...best.values()];
      }
      chosen = idx.sort(order).slice(0, n);
      break;
    }
    case 'sample': chosen = idx.length <= n ? idx : sampleOf(idx, n); break;
    case 'distinct': {
      // each value with the time it first appeared in the walk, ordered by that time, then by value
      const seen = new Map<Value, number>();
      for (const i of desc ? idx.reverse() : idx) if (!seen.has(p.v[i])) seen.set(p.v[i], i);
      return [...seen.values()].sort((x, y) => p.ms[x] - p.ms[y] || p.sub[x] - p.sub[y] || compare(p.v[x], p.v[y])).map((i) => ({ value: p.v[i] }));
    }
    default: chosen = [];
  }
  return chosen.sort((x, y) => x - y).map((i) => pick(p, i));
}

function sampleOf(idx: number[], n: number): number[] {
  const copy = idx.slice();
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, n);
}

/**
 * integral(): trapezoids over each window, `unitMs` per unit. With GROUP BY time, the value at a window's end is
 * interpolated from the next point and the following window starts from it (InfluxDB 1.x); a window without points
 * lends its area to the next window that has some.
 */
/**
 * The trapezoid area per window (keyed by the window's start; NaN without windows). See integralAreas.
 */
export function integralWindows(p: Points<number>, windowOf: ((ms: number) => [number, number]) | undefined, unitMs: number,
  integer = false): Map<number, number> {
  return new Map(integralAreas(p, windowOf, unitMs, false, integer));
}

/**
 * The trapezoid areas InfluxDB answers, in the order of its walk: [key, area], the key being the window's start (NaN
 * without windows). Under ORDER BY time DESC the walk goes newest first: the time steps are negative, so are the areas,
 * each is keyed by its window's end, and a point on a window's start closes that window twice (the second time with
 * no area). After a window edge a float field's step starts from the value interpolated there; an integer field's
 * (InfluxDB's integer reducer) starts from the point before the edge and ends at the interpolated value. The last window is not answered when its only point
 * lies on the edge the walk entered it by.
 */
export function integralAreas(p: Points<number>, windowOf: ((ms: number) => [number, number]) | undefined, unitMs: number,
  desc: boolean, integer: boolean): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const n = p.ms.length;
  if (n === 0) return out;
  const at = (k: number) => (desc ? n - 1 - k : k);
  let prevT = p.ms[at(0)];
  let prevV = p.v[at(0)];
  // [key of the window's area, the edge the walk leaves it by]
  const edges = (t: number): [number, number] => {
    const [s, e] = windowOf!(t);
    return desc ? [e, s] : [s, e];
  };
  let win = windowOf === undefined ? undefined : edges(prevT);
  let sum = 0;
  for (let k = 1; k < n; k++) {
    const t = p.ms[at(k)];
    const v = p.v[at(k)];
    if (t === prevT) { prevV = v; continue; }
    // the value the step to this point starts from, and the one it ends at
    let from = prevV;
    let to = v;
    if (win !== undefined && (desc ? t <= win[1] : t >= win[1])) {
      if (prevT !== win[1]) {
        const value = prevV + (v - prevV) * (win[1] - prevT) / (t - prevT);
        sum += 0.5 * (value + prevV) * ((win[1] - prevT) / unitMs);
        if (integer) to = value;
        else from = value;
        prevT = win[1];
      }
      out.push([win[0], sum]);
      sum = 0;
      win = edges(t);
    }
    sum += 0.5 * (to + from) * ((t - prevT) / unitMs);
    prevT = t;
    prevV = v;
  }
  if (win === undefined) out.push([Number.NaN, sum]);
  else if (prevT !== win[0]) out.push([win[0], sum]);
  return out;
}

/** A (time, value) row of a column; null values are skipped by transformations. */
export interface Row {
  ms: number;
  sub: number;
  v: Value | null;
  /** the selected point's row in the stream (selectors) */
  idx?: number;
}

export function transform(name: string, rows: Row[], arg: number | undefined, unitMs: number): Row[] {
  const live = rows.filter((r) => r.v !== null) as Array<Row & { v: number }>; // numbers: the types were checked
  const out: Row[] = [];
  switch (name) {
    case 'derivative': case 'non_negative_derivative':
      for (let i = 1; i < live.length; i++) {
        // newest first (ORDER BY time DESC) InfluxDB still divides by a positive time step
        const dt = Math.abs((live[i].ms - live[i - 1].ms) + (live[i].sub - live[i - 1].sub) / 1e6);
        if (dt === 0) continue;
        const d = (live[i].v - live[i - 1].v) / (dt / unitMs);
        if (name === 'non_negative_derivative' && d < 0) continue;
        out.push({ ms: live[i].ms, sub: live[i].sub, v: d });
      }
      return out;
    case 'difference': case 'non_negative_difference':
      for (let i = 1; i < live.length; i++) {
        const d = live[i].v - live[i - 1].v;
        if (name === 'non_negative_difference' && d < 0) continue;
        out.push({ ms: live[i].ms, sub: live[i].sub, v: d });
      }
      return out;
    case 'cumulative_sum': {
      let s = 0;
      for (const r of live) { s += r.v; out.push({ ms: r.ms, sub: r.sub, v: s }); }
      return out;
    }
    case 'moving_average': {
      const n = arg ?? 1;
      let s = 0;
      for (let i = 0; i < live.length; i++) {
        // the oldest value leaves the sum before the new one enters (InfluxDB's order: the same rounding)
        if (i >= n) s -= live[i - n].v;
        s += live[i].v;
        if (i >= n - 1) out.push({ ms: live[i].ms, sub: live[i].sub, v: s / n });
      }
      return out;
    }
    case 'elapsed':
      for (let i = 1; i < live.length; i++) {
        const dns = (live[i].ms - live[i - 1].ms) * 1e6 + (live[i].sub - live[i - 1].sub);
        out.push({ ms: live[i].ms, sub: live[i].sub, v: Math.trunc(dns / (unitMs * 1e6)) });
      }
      return out;
    default:
      return out;
  }
}
