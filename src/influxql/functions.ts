// InfluxQL functions: aggregates and selectors reduce the points of one window; transformations map a series of
// (time, value) rows to another. Semantics follow InfluxDB 1.8 (tie rules included, noted where they matter).

/** Points of one window (or a whole stream), time order. */
export interface Points {
  ms: number[];
  sub: number[];
  v: number[];
}

export const AGGREGATES = new Set(['count', 'sum', 'mean', 'median', 'mode', 'spread', 'stddev', 'integral', 'distinct']);
export const SELECTORS = new Set(['first', 'last', 'min', 'max', 'percentile', 'top', 'bottom', 'sample']);
export const TRANSFORMATIONS = new Set([
  'derivative', 'non_negative_derivative', 'difference', 'non_negative_difference', 'cumulative_sum', 'moving_average', 'elapsed',
]);
/** Selectors that answer several points per window. */
export const MULTI_SELECTORS = new Set(['top', 'bottom', 'sample', 'distinct']);

/** One reduced value; a selector also gives the selected point's time. */
export interface Reduced {
  value: number | null;
  ms?: number;
  sub?: number;
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
  switch (name) {
    case 'count': return { value: n };
    case 'sum': { let s = 0; for (let i = a; i < b; i++) s += p.v[i]; return { value: s }; }
    case 'mean': {
      // Kahan-free running mean like InfluxDB's reducer: sum then divide
      let s = 0;
      for (let i = a; i < b; i++) s += p.v[i];
      return { value: s / n };
    }
    case 'median': {
      const sorted = p.v.slice(a, b).sort((x, y) => x - y);
      const mid = Math.floor(n / 2);
      return { value: n % 2 === 1 ? sorted[mid] : sorted[mid - 1] + (sorted[mid] - sorted[mid - 1]) / 2 };
    }
    case 'mode': {
      // InfluxDB's rule: values in order (equal values in time order), runs counted; a later run of the same length
      // wins unless it started after the time last recorded for the leader (ties depend on the points' times).
      const idx = Array.from({ length: n }, (_, k) => a + k).sort((x, y) => p.v[x] - p.v[y] || x - y);
      let mostFreq = 0;
      let currFreq = 0;
      let currMode = p.v[idx[0]];
      let mostMode = currMode;
      let mostTime = p.ms[idx[0]];
      let currTime = mostTime;
      for (const i of idx) {
        if (p.v[i] !== currMode) {
          currFreq = 1;
          currMode = p.v[i];
          currTime = p.ms[i];
          continue;
        }
        currFreq++;
        if (mostFreq > currFreq || (mostFreq === currFreq && currTime > mostTime)) continue;
        mostFreq = currFreq;
        mostMode = p.v[i];
        mostTime = p.ms[i];
      }
      return { value: mostMode };
    }
    case 'spread': {
      let lo = Infinity;
      let hi = -Infinity;
      for (let i = a; i < b; i++) { lo = Math.min(lo, p.v[i]); hi = Math.max(hi, p.v[i]); }
      return { value: hi - lo };
    }
    case 'stddev': {
      if (n < 2) return { value: null };
      let mean = 0;
      for (let i = a; i < b; i++) mean += p.v[i];
      mean /= n;
      let variance = 0;
      for (let i = a; i < b; i++) variance += (p.v[i] - mean) ** 2;
      return { value: Math.sqrt(variance / (n - 1)) };
    }
    case 'first': case 'last': {
      // the earliest (latest) time; among points at that time, the largest value (InfluxDB's tie rule)
      let best = name === 'first' ? a : b - 1;
      const t = p.ms[best];
      const sub = p.sub[best];
      for (let i = a; i < b; i++) if (p.ms[i] === t && p.sub[i] === sub && p.v[i] > p.v[best]) best = i;
      return pick(p, best);
    }
    case 'min': case 'max': {
      let best = a;
      for (let i = a + 1; i < b; i++) if (name === 'min' ? p.v[i] < p.v[best] : p.v[i] > p.v[best]) best = i;
      return pick(p, best);
    }
    case 'percentile': {
      const idx = Array.from({ length: n }, (_, k) => a + k).sort((x, y) => p.v[x] - p.v[y] || x - y);
      const i = Math.floor(n * (arg ?? 50) / 100 + 0.5) - 1;
      if (i < 0 || i >= n) return { value: null };
      return pick(p, idx[i]);
    }
    default: return { value: null };
  }
}

function pick(p: Points, i: number): Reduced {
  return { value: p.v[i], ms: p.ms[i], sub: p.sub[i] };
}

/** top / bottom / sample / distinct: several points of a window, in time order. */
export function reduceMany(name: string, p: Points, a: number, b: number, n: number): Reduced[] {
  if (b <= a) return [];
  const idx = Array.from({ length: b - a }, (_, k) => a + k);
  let chosen: number[];
  switch (name) {
    case 'top': chosen = idx.sort((x, y) => p.v[y] - p.v[x] || x - y).slice(0, n); break;
    case 'bottom': chosen = idx.sort((x, y) => p.v[x] - p.v[y] || x - y).slice(0, n); break;
    case 'sample': chosen = idx.length <= n ? idx : sampleOf(idx, n); break;
    case 'distinct': {
      const seen = new Set<number>();
      const out: Reduced[] = [];
      for (const i of idx) if (!seen.has(p.v[i])) { seen.add(p.v[i]); out.push({ value: p.v[i] }); }
      return out;
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
export function integralWindows(p: Points, windowOf: ((ms: number) => [number, number]) | undefined, unitMs: number): Map<number, number> {
  const out = new Map<number, number>();
  if (p.ms.length === 0) return out;
  let prevT = p.ms[0];
  let prevV = p.v[0];
  let win = windowOf?.(prevT);
  let sum = 0;
  for (let i = 1; i < p.ms.length; i++) {
    const t = p.ms[i];
    const v = p.v[i];
    if (t === prevT) { prevV = v; continue; }
    if (win !== undefined && t >= win[1]) {
      if (prevT !== win[1]) {
        const value = prevV + (v - prevV) * (win[1] - prevT) / (t - prevT);
        sum += 0.5 * (value + prevV) * ((win[1] - prevT) / unitMs);
        prevV = value;
        prevT = win[1];
      }
      out.set(win[0], sum);
      sum = 0;
      win = windowOf!(t);
    }
    sum += 0.5 * (v + prevV) * ((t - prevT) / unitMs);
    prevT = t;
    prevV = v;
  }
  out.set(win === undefined ? Number.NaN : win[0], sum);
  return out;
}

/** A (time, value) row of a column; null values are skipped by transformations. */
export interface Row {
  ms: number;
  sub: number;
  v: number | null;
}

export function transform(name: string, rows: Row[], arg: number | undefined, unitMs: number): Row[] {
  const live = rows.filter((r) => r.v !== null) as Array<Row & { v: number }>;
  const out: Row[] = [];
  switch (name) {
    case 'derivative': case 'non_negative_derivative':
      for (let i = 1; i < live.length; i++) {
        const dt = (live[i].ms - live[i - 1].ms) + (live[i].sub - live[i - 1].sub) / 1e6;
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
        s += live[i].v;
        if (i >= n) s -= live[i - n].v;
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
