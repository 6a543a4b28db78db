// SELECTs with functions: windows (GROUP BY time, or the whole range), aggregates and selectors per window,
// transformations over their rows, arithmetic between columns, and fill(). count/sum/mean without a point filter are
// reduced by SQLite per window (the Grafana shape); everything else from the merged point stream.
import type { Dimension, Expr, Field, SelectStatement } from './ast.ts';
import { StatementError } from './errors.ts';
import { evaluate } from './condition.ts';
import {
  AGGREGATES, integralWindows, MULTI_SELECTORS, reduce, reduceMany, SELECTORS, TRANSFORMATIONS, transform, windowRange,
  type Points, type Row,
} from './functions.ts';
import { windowStart } from './time.ts';
import type { PlannedSource, SelectPlan } from './plan.ts';
import type { Group, OutRow, Stream } from './rows.ts';
import type { PointValue } from '../telemetry/query/reads-types.ts';
import { IntegerOverflow } from '../telemetry/query/stats.ts';
import type { FieldInfo, MeasurementInfo } from '../telemetry/catalogue-types.ts';
import type { TelemetryReads } from '../telemetry/query/reads-types.ts';
import { FLOAT, INTEGER, UNSIGNED } from '../telemetry/line-protocol/line-scanner.ts';

const MAX_WINDOWS = 1_000_000;

/** count / sum / mean of a numeric field: SQLite can reduce those per window without the points leaving it. */
export function isSimpleSum(e: Expr, m: MeasurementInfo): boolean {
  if (e.kind !== 'call' || !['count', 'sum', 'mean'].includes(e.name) || e.args.length !== 1 || e.args[0].kind !== 'var') return false;
  const f = m.fields.get(e.args[0].name);
  return f !== undefined && e.args[0].cast !== 'tag' && (f.kind === FLOAT || f.kind === INTEGER || f.kind === UNSIGNED);
}

/** The rows of count/sum/mean selects from per-window sums computed by SQLite; undefined when a sum overflows. */
export function sqlAggregateRows(reads: TelemetryReads, plan: SelectPlan, src: PlannedSource, g: Group, fields: Field[], fieldInfos: FieldInfo[],
  timeDim: Extract<Dimension, { kind: 'time' }> | undefined): OutRow[] | undefined {
  const intervalMs = timeDim ? timeDim.intervalNs / 1e6 : 0;
  const firstMs = timeDim ? windowStart(plan.explicitFromMs!, intervalMs, timeDim.offsetNs / 1e6) : src.fromMs;
  const sums = new Map<string, { count: number[]; sum: number[] }>();
  try {
    for (const f of fieldInfos) {
      const acc = { count: [] as number[], sum: [] as number[] };
      for (const s of g.series) {
        if (timeDim === undefined) {
          // one window: the telemetry layer's block statistics answer whole blocks without reading their rows
          const st = reads.rangeStats(src.shards, s.id, f, src.fromMs, src.toMs);
          acc.count[0] = (acc.count[0] ?? 0) + st.count;
          acc.sum[0] = (acc.sum[0] ?? 0) + Number(st.sum);
        } else {
          reads.addWindowSums(src.shards, s.id, f, src.fromMs, src.toMs, firstMs, intervalMs, acc.count, acc.sum);
        }
      }
      sums.set(f.name, acc);
    }
  } catch (err) {
    if (err instanceof IntegerOverflow || /integer overflow/i.test((err as Error).message)) return undefined;
    throw err;
  }
  if (![...sums.values()].some((a) => a.count.some((n) => n > 0))) return [];
  const empty: Stream = { ms: [], sub: [], values: fieldInfos.map(() => []), fieldNames: fieldInfos.map((f) => f.name), tags: [] };
  return aggregateRows(plan, src, fields, empty, fieldInfos, timeDim, (name, fn, windowIndex) => {
    const acc = sums.get(name)!;
    const n = acc.count[windowIndex] ?? 0;
    if (n === 0) return null;
    return fn === 'count' ? n : fn === 'sum' ? acc.sum[windowIndex] : acc.sum[windowIndex] / n;
  });
}

interface Column {
  /** aligned with the windows (one value per window) or free rows (transformations, top/bottom) */
  windowed: boolean;
  values: Array<number | null>;
  /** selectors: the selected point's time per window */
  times?: Array<[number, number] | undefined>;
  rows?: Row[];
  /** whether the column is an integer count (fill(null) gives 0) */
  isCount?: boolean;
  /** integer values (linear fill interpolates in integers) */
  integer?: boolean;
  /** integral(): answered at time 0 without GROUP BY time, windows without points left out */
  integral?: boolean;
}

type Reducer = (field: string, fn: string, windowIndex: number) => number | null;

export function aggregateRows(plan: SelectPlan, src: PlannedSource, fields: Field[], st: Stream, fieldInfos: FieldInfo[], timeDim: Extract<Dimension, { kind: 'time' }> | undefined,
  reduced?: Reducer): OutRow[] {
  const stmt = plan.stmt;
  const intervalMs = timeDim ? timeDim.intervalNs / 1e6 : 0;
  const offsetMs = timeDim ? timeDim.offsetNs / 1e6 : 0;
  // windows: [start, end) in order
  const windows: Array<[number, number]> = [];
  if (timeDim) {
    const first = windowStart(plan.explicitFromMs ?? st.ms[0], intervalMs, offsetMs, stmt.tz);
    for (let w = first; w < src.toMs; ) {
      let next = windowStart(w + intervalMs, intervalMs, offsetMs, stmt.tz);
      if (next <= w) next = w + intervalMs;
      windows.push([w, next]);
      if (windows.length > MAX_WINDOWS) throw new StatementError(`too many GROUP BY time windows (more than ${MAX_WINDOWS}): narrow the time range or widen the interval`);
      w = next;
    }
  } else {
    windows.push([src.fromMs, src.toMs]);
  }
  const windowOf = timeDim ? (ms: number): [number, number] => {
    const s = windowStart(ms, intervalMs, offsetMs, stmt.tz);
    return [s, windowStart(s + intervalMs, intervalMs, offsetMs, stmt.tz)];
  } : undefined;

  const pointsOf = (name: string): Points => {
    const fi = fieldInfos.findIndex((f) => f.name === name);
    if (fi < 0) return { ms: [], sub: [], v: [] };
    const kind = fieldInfos[fi].kind;
    if (kind !== FLOAT && kind !== INTEGER && kind !== UNSIGNED) throw new StatementError(`unsupported ${fieldInfos[fi].name} type: functions need a numeric field`);
    const p: Points = { ms: [], sub: [], v: [] };
    const vals = st.values[fi];
    for (let i = 0; i < st.ms.length; i++) {
      const v = vals[i];
      if (typeof v === 'number') { p.ms.push(st.ms[i]); p.sub.push(st.sub[i]); p.v.push(v); }
    }
    return p;
  };

  const isIntegerField = (name: string) => {
    const kind = fieldInfos.find((f) => f.name === name)?.kind;
    return kind === INTEGER || kind === UNSIGNED;
  };

  const numArg = (e: Expr | undefined, what: string): number | undefined => {
    if (e === undefined) return undefined;
    if (e.kind === 'integer' || e.kind === 'number') return e.value;
    if (e.kind === 'duration') return e.ns / 1e6;
    throw new StatementError(`expected a number as the second argument of ${what}()`);
  };

  const multi = fields.map((f) => f.expr).filter((e) => e.kind === 'call' && MULTI_SELECTORS.has(e.name));
  if (multi.length > 0 && fields.length > 1) throw new StatementError('top(), bottom(), sample() and distinct() cannot be combined with other fields here');

  const evalColumn = (e: Expr): Column | number => {
    switch (e.kind) {
      case 'paren': return evalColumn(e.expr);
      case 'integer': case 'number': return e.value;
      case 'binary': {
        const l = evalColumn(e.lhs);
        const r = evalColumn(e.rhs);
        return combine(e.op, l, r);
      }
      case 'call': return callColumn(e);
      case 'var': throw new StatementError('mixing aggregate and non-aggregate queries is not supported');
      default: throw new StatementError('unsupported expression in a select with functions');
    }
  };

  const callColumn = (e: Extract<Expr, { kind: 'call' }>): Column => {
    const name = e.name;
    const inner = e.args[0];
    if (AGGREGATES.has(name) || SELECTORS.has(name)) {
      if (inner === undefined || inner.kind !== 'var') {
        if (inner?.kind === 'call') throw new StatementError(`${name}() of a function is not supported`);
        throw new StatementError(`expected field argument in ${name}()`);
      }
      if (reduced !== undefined) {
        const values = windows.map((_, i) => reduced(inner.name, name, i));
        return { windowed: true, values, ...(name === 'count' ? { isCount: true, integer: true } : {}), ...(name === 'sum' && isIntegerField(inner.name) ? { integer: true } : {}) };
      }
      const p = pointsOf(inner.name);
      if (name === 'integral') {
        const unit = numArg(e.args[1], name) ?? 1000;
        const sums = integralWindows(p, windowOf, unit);
        return {
          windowed: true, integral: true,
          values: windows.map(([s]) => (timeDim ? sums.get(s) ?? null : (p.ms.length > 0 ? sums.get(Number.NaN) ?? null : null))),
        };
      }
      if (MULTI_SELECTORS.has(name)) {
        const n = name === 'distinct' ? 0 : numArg(e.args[e.args.length - 1], name);
        if (name !== 'distinct' && (n === undefined || n <= 0 || !Number.isInteger(n))) throw new StatementError(`${name}() needs a positive integer count as its last argument`);
        const rows: Row[] = [];
        let hint = 0;
        for (const [s, end] of windows) {
          const [a, b] = windowRange(p, s, end, hint);
          hint = b;
          for (const r of reduceMany(name, p, a, b, n ?? 0)) {
            rows.push(name === 'distinct' || timeDim ? { ms: timeDim || name === 'distinct' ? s : r.ms!, sub: 0, v: r.value } : { ms: r.ms!, sub: r.sub!, v: r.value });
          }
        }
        return { windowed: false, values: [], rows };
      }
      const arg = name === 'percentile' ? numArg(e.args[1], name) : undefined;
      if (name === 'percentile' && arg === undefined) throw new StatementError('percentile() needs a percentile as its second argument');
      const values: Array<number | null> = [];
      const times: Array<[number, number] | undefined> = [];
      let hint = 0;
      for (const [s, end] of windows) {
        const [a, b] = windowRange(p, s, end, hint);
        hint = b;
        const r = reduce(name, p, a, b, arg);
        values.push(r.value);
        times.push(r.ms === undefined ? undefined : [r.ms, r.sub ?? 0]);
      }
      const integer = name === 'count' || (isIntegerField(inner.name) && !['mean', 'median', 'stddev'].includes(name));
      return { windowed: true, values, ...(SELECTORS.has(name) ? { times } : {}), ...(name === 'count' ? { isCount: true } : {}), ...(integer ? { integer } : {}) };
    }
    if (TRANSFORMATIONS.has(name)) {
      if (inner === undefined) throw new StatementError(`expected field argument in ${name}()`);
      const unitArg = name === 'moving_average' ? undefined : numArg(e.args[1], name);
      const arg = name === 'moving_average' ? numArg(e.args[1], name) : undefined;
      if (name === 'moving_average' && (arg === undefined || !Number.isInteger(arg))) throw new StatementError('moving_average() needs an integer window as its second argument');
      if (name === 'moving_average' && arg! <= 1) throw new StatementError(`moving_average window must be greater than 1, got ${arg}`);
      let rows: Row[];
      if (inner.kind === 'var') {
        if (timeDim) throw new StatementError(`aggregate function required inside the call to ${name}`);
        const p = pointsOf(inner.name);
        rows = p.ms.map((ms, i) => ({ ms, sub: p.sub[i], v: p.v[i] }));
      } else {
        const col = evalColumn(inner);
        if (typeof col === 'number') throw new StatementError(`expected field argument in ${name}()`);
        rows = rowsOf(col, windows, true);
      }
      // over GROUP BY time, a derivative's unit defaults to the interval (InfluxDB); over raw points to 1 s
      const unit = unitArg ?? (name === 'elapsed' ? 1e-6 : inner.kind !== 'var' && timeDim ? intervalMs : 1000);
      return { windowed: false, values: [], rows: transform(name, rows, arg, unit) };
    }
    throw new StatementError(`undefined function ${name}()`);
  };

  const cols = fields.map((f) => {
    const c = evalColumn(f.expr);
    if (typeof c === 'number') throw new StatementError('a select with functions needs a function in every field');
    return c;
  });

  // a single selector without GROUP BY time answers with the selected point's time
  const selectorTime = !timeDim && cols.length === 1 && cols[0].times !== undefined;
  if (cols.every((c) => c.windowed)) {
    const nonEmpty = windows.map((w, i) => {
      const [a, b] = windowRange({ ms: st.ms, sub: st.sub, v: [] }, w[0], w[1]);
      return b > a || cols.some((c) => c.values[i] !== null) ? true : (void i, false);
    });
    if (!nonEmpty.some(Boolean)) return [];
    const allIntegral = cols.every((c) => c.integral);
    // fill(previous) follows the answer's order: with ORDER BY time DESC the "previous" window is the later one
    const fillIn = (c: Column): PointValue[] => {
      if (!stmt.desc) return fillColumn(c, nonEmpty, stmt.fill, windows);
      const rev = fillColumn({ ...c, values: c.values.slice().reverse() }, nonEmpty.slice().reverse(), stmt.fill, windows.slice().reverse());
      return rev.reverse();
    };
    const filled = cols.map((c) => (c.integral ? c.values : fillIn(c)));
    const rows: OutRow[] = [];
    windows.forEach(([s], i) => {
      if (!nonEmpty[i] && stmt.fill.mode === 'none') return;
      const values = filled.map((c) => c[i]);
      if (!timeDim && values.every((v) => v === null)) return;
      if (allIntegral && values.every((v) => v === null)) return;
      const t = selectorTime ? cols[0].times![i] : undefined;
      const at: [number, number] = t ?? (timeDim ? [s, 0] : allIntegral ? [0, 0] : plan.explicitFrom ?? [0, 0]);
      rows.push({ ms: at[0], sub: at[1], values });
    });
    return rows;
  }
  // free rows: joined by time
  const byTime = new Map<string, { ms: number; sub: number; values: PointValue[] }>();
  cols.forEach((c, k) => {
    for (const r of rowsOf(c, windows, false)) {
      const key = `${r.ms}:${r.sub}`;
      let row = byTime.get(key);
      if (row === undefined) byTime.set(key, (row = { ms: r.ms, sub: r.sub, values: cols.map(() => null) }));
      if (row.values[k] === null) row.values[k] = r.v;
      else {
        // several rows at one time in one column (top of several series): keep them apart
        const extra = { ms: r.ms, sub: r.sub, values: cols.map(() => null as PointValue) };
        extra.values[k] = r.v;
        byTime.set(`${key}:${byTime.size}`, extra);
      }
    }
  });
  return [...byTime.values()].filter((r) => r.values.some((v) => v !== null)).sort((a, b) => a.ms - b.ms || a.sub - b.sub);
}

/** A column as rows: windowed columns at their window starts (or selected times), skipping nulls when asked. */
function rowsOf(c: Column, windows: Array<[number, number]>, skipNull: boolean): Row[] {
  if (!c.windowed) return c.rows ?? [];
  const out: Row[] = [];
  c.values.forEach((v, i) => { if (!(skipNull && v === null)) out.push({ ms: windows[i][0], sub: 0, v }); });
  return out;
}

function combine(op: string, l: Column | number, r: Column | number): Column {
  const apply = (a: number | null, b: number | null): number | null => {
    if (a === null || b === null) return null;
    const v = evaluate({ kind: 'binary', op: op as never, lhs: { kind: 'number', value: a }, rhs: { kind: 'number', value: b } }, () => null);
    return typeof v === 'number' ? v : null;
  };
  if (typeof l === 'number' && typeof r === 'number') return { windowed: true, values: [apply(l, r)] };
  if (typeof l === 'number' || typeof r === 'number') {
    const col = (typeof l === 'number' ? r : l) as Column;
    const k = (typeof l === 'number' ? l : r) as number;
    const f = (v: number | null) => (typeof l === 'number' ? apply(k, v) : apply(v, k));
    if (col.windowed) return { windowed: true, values: col.values.map(f), ...(col.times ? { times: col.times } : {}) };
    return { windowed: false, values: [], rows: (col.rows ?? []).map((x) => ({ ...x, v: f(x.v) })) };
  }
  if (l.windowed && r.windowed) return { windowed: true, values: l.values.map((v, i) => apply(v, r.values[i] ?? null)) };
  const rightAt = new Map((r.rows ?? []).map((x) => [`${x.ms}:${x.sub}`, x.v]));
  return { windowed: false, values: [], rows: (l.rows ?? []).map((x) => ({ ...x, v: apply(x.v, rightAt.get(`${x.ms}:${x.sub}`) ?? null) })) };
}

function fillColumn(c: Column, nonEmpty: boolean[], fill: SelectStatement['fill'], windows: Array<[number, number]>): PointValue[] {
  const out: PointValue[] = c.values.slice();
  switch (fill.mode) {
    case 'null': case 'none':
      if (c.isCount) out.forEach((v, i) => { if (v === null && !nonEmpty[i]) out[i] = 0; });
      return out;
    case 'value':
      out.forEach((v, i) => { if (v === null && !nonEmpty[i]) out[i] = fill.value; });
      return out;
    case 'previous': {
      let prev: PointValue = null;
      out.forEach((v, i) => { if (v === null && !nonEmpty[i]) out[i] = prev; else prev = v; });
      return out;
    }
    case 'linear': {
      for (let i = 0; i < out.length; i++) {
        if (out[i] !== null || nonEmpty[i]) continue;
        // the nearest windows that answered (a window with points may answer null: stddev of one point)
        const answered = (k: number) => nonEmpty[k] || c.values[k] !== null;
        let a = i - 1;
        while (a >= 0 && !answered(a)) a--;
        let b = i + 1;
        while (b < out.length && !answered(b)) b++;
        if (a < 0 || b >= out.length || c.values[a] === null || c.values[b] === null) continue;
        const va = c.values[a] as number;
        const vb = c.values[b] as number;
        // InfluxDB's arithmetic, in nanoseconds: slope, then slope * elapsed + start (integers: truncated)
        const m = (vb - va) / ((windows[b][0] - windows[a][0]) * 1e6);
        const y = m * ((windows[i][0] - windows[a][0]) * 1e6) + va;
        out[i] = c.integer ? Math.trunc(y) : y;
      }
      return out;
    }
  }
}
