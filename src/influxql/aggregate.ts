// SELECTs with functions: windows (GROUP BY time, or the whole range), aggregates and selectors per window,
// transformations over their rows, arithmetic between columns, and fill(). count/sum/mean without a point filter are
// reduced by SQLite per window (the Grafana shape); everything else from the merged point stream.
import { callsIn, distinctCalls, hasVar, type Dimension, type Expr, type Field, type SelectStatement } from './ast.ts';
import { StatementError } from './errors.ts';
import { evaluate } from './condition.ts';
import {
  AGGREGATES, integralAreas, integralWindows, MULTI_SELECTORS, reduce, reduceMany, SELECTORS, TRANSFORMATIONS, transform, windowRange,
  type Points, type Row,
} from './functions.ts';
import { selectorRows } from './selector.ts';
import { answerKind, castFill, fieldKindOf, fieldPoints, fillColumn, numArg, type ValueKind } from './columns.ts';
import { windowStart } from './time.ts';
import type { PlannedSource, SelectPlan } from './plan.ts';
import type { Group, OutRow, Stream } from './rows.ts';
import type { PointValue, WindowAcc } from '../telemetry/query/reads-types.ts';
import { IntegerOverflow } from '../telemetry/query/stats.ts';
import type { FieldInfo, MeasurementInfo } from '../telemetry/catalogue-types.ts';
import type { TelemetryReads } from '../telemetry/query/reads-types.ts';
import { FLOAT, INTEGER, UNSIGNED } from '../telemetry/line-protocol/line-scanner.ts';

const MAX_WINDOWS = 1_000_000;

/** How InfluxDB names a transformation in its errors. */
const ITERATOR_NAMES: Record<string, string> = {
  derivative: 'derivative', non_negative_derivative: 'derivative', difference: 'difference', non_negative_difference: 'difference',
  cumulative_sum: 'cumulative sum', moving_average: 'moving average',
};

const SUMS = new Set(['count', 'sum', 'mean']);
const EXTREMES = new Set(['min', 'max', 'spread']);

/**
 * count / sum / mean of a numeric field, and (`grouped`: per GROUP BY time window, whose start is the row's time) its
 * min, max and spread: the telemetry layer reduces those per window from block statistics and edge scans, without the
 * points reaching the engine.
 */
export function isSimpleSum(e: Expr, m: MeasurementInfo, grouped = false): boolean {
  if (e.kind !== 'call' || e.args.length !== 1 || e.args[0].kind !== 'var' || e.args[0].cast === 'tag') return false;
  const f = m.fields.get(e.args[0].name);
  if (f === undefined) return false;
  if (SUMS.has(e.name)) return f.kind === FLOAT || f.kind === INTEGER || f.kind === UNSIGNED;
  return grouped && EXTREMES.has(e.name) && (f.kind === FLOAT || f.kind === INTEGER || f.kind === UNSIGNED);
}

/**
 * The rows of count/sum/mean selects, and of min/max/spread per GROUP BY time window, from per-window reductions the
 * telemetry layer computes; undefined when an integer sum overflows or an integer extreme is beyond 2^53 (the points'
 * path answers those).
 */
export function sqlAggregateRows(reads: TelemetryReads, plan: SelectPlan, src: PlannedSource, g: Group, fields: Field[], fieldInfos: FieldInfo[],
  timeDim: Extract<Dimension, { kind: 'time' }> | undefined): OutRow[] | undefined {
  const intervalMs = timeDim ? timeDim.intervalNs / 1e6 : 0;
  const firstMs = timeDim ? windowStart(plan.explicitFromMs!, intervalMs, timeDim.offsetNs / 1e6) : src.fromMs;
  // the fields min(), max() or spread() name (only per window: isSimpleSum)
  const extremes = new Set<string>();
  for (const f of fields) if (f.expr.kind === 'call' && EXTREMES.has(f.expr.name) && f.expr.args[0].kind === 'var') extremes.add(f.expr.args[0].name);
  const accs = new Map<string, Required<WindowAcc>>();
  try {
    for (const f of fieldInfos) {
      const acc: Required<WindowAcc> = { count: [], sum: [], min: [], max: [] };
      const reduced: WindowAcc = extremes.has(f.name) ? acc : { count: acc.count, sum: acc.sum };
      for (const s of g.series) {
        if (timeDim === undefined) {
          // one window: the telemetry layer's block statistics answer whole blocks without reading their rows
          const st = reads.rangeStats(src.shards, s.id, f, src.fromMs, src.toMs);
          acc.count[0] = (acc.count[0] ?? 0) + st.count;
          acc.sum[0] = (acc.sum[0] ?? 0) + Number(st.sum);
        } else {
          reads.addWindowStats(src.shards, s.id, f, src.fromMs, src.toMs, firstMs, intervalMs, reduced);
        }
      }
      accs.set(f.name, acc);
    }
  } catch (err) {
    if (err instanceof IntegerOverflow || /integer overflow/i.test((err as Error).message)) return undefined;
    throw err;
  }
  if (![...accs.values()].some((a) => a.count.some((n) => n > 0))) return [];
  const empty: Stream = { ms: [], sub: [], values: fieldInfos.map(() => []), fieldNames: fieldInfos.map((f) => f.name), tags: [] };
  return aggregateRows(plan, src, fields, empty, fieldInfos, timeDim, (name, fn, windowIndex) => {
    const acc = accs.get(name)!;
    if (EXTREMES.has(fn)) {
      const lo = acc.min[windowIndex];
      const hi = acc.max[windowIndex];
      if (lo === undefined || hi === undefined) return null;
      return fn === 'min' ? lo : fn === 'max' ? hi : hi - lo;
    }
    const n = acc.count[windowIndex] ?? 0;
    if (n === 0) return null;
    return fn === 'count' ? n : fn === 'sum' ? acc.sum[windowIndex] : acc.sum[windowIndex] / n;
  });
}

/** A column of a select with functions: one value per window, or free rows. */
interface Column {
  /** aligned with the windows (one value per window) or free rows (transformations, distinct) */
  windowed: boolean;
  values: PointValue[];
  /** selectors: the selected point's time per window */
  times?: Array<[number, number] | undefined>;
  rows?: Row[];
  /** whether the column is an integer count (fill(null) gives 0) */
  isCount?: boolean;
  kind: ValueKind;
  /** integral(): answered at time 0 without GROUP BY time, windows without points left out */
  integral?: boolean;
  /** per window: whether the column's field had points there (else fill() decides the value) */
  present?: boolean[];
}

/** The rows of a select with functions; `limited`: LIMIT and OFFSET were applied per column already. */
export type AggregateRows = OutRow[] & { limited?: boolean };

type Reducer = (field: string, fn: string, windowIndex: number) => number | null;

/** The windows [start, end) of a select: GROUP BY time's from the lower bound (or the first point), else one. */
export function windowsOf(plan: SelectPlan, src: PlannedSource, st: Stream, timeDim: Extract<Dimension, { kind: 'time' }> | undefined): Array<[number, number]> {
  const stmt = plan.stmt;
  const windows: Array<[number, number]> = [];
  if (timeDim === undefined) return [[src.fromMs, src.toMs]];
  const intervalMs = timeDim.intervalNs / 1e6;
  const offsetMs = timeDim.offsetNs / 1e6;
  const first = windowStart(plan.explicitFromMs ?? st.ms[0], intervalMs, offsetMs, stmt.tz);
  for (let w = first; w < src.toMs; ) {
    let next = windowStart(w + intervalMs, intervalMs, offsetMs, stmt.tz);
    if (next <= w) next = w + intervalMs;
    windows.push([w, next]);
    if (windows.length > MAX_WINDOWS) throw new StatementError(`too many GROUP BY time windows (more than ${MAX_WINDOWS}): narrow the time range or widen the interval`);
    w = next;
  }
  return windows;
}

export function aggregateRows(plan: SelectPlan, src: PlannedSource, fields: Field[], st: Stream, fieldInfos: FieldInfo[], timeDim: Extract<Dimension, { kind: 'time' }> | undefined,
  reduced?: Reducer): AggregateRows {
  const stmt = plan.stmt;
  const windows = windowsOf(plan, src, st, timeDim);
  // one selector beside fields or tags, inside arithmetic, named more than once (`last(x) + last(x)`: InfluxDB reads
  // equal calls once), or one that answers several points: rows of selected points
  const calls = fields.flatMap((f) => callsIn(f.expr));
  const distinct = distinctCalls(calls);
  if (distinct.length === 1 && SELECTORS.has(distinct[0].name)
    && (calls.length > 1 || fields.some((f) => hasVar(f.expr) || f.expr.kind !== 'call') || MULTI_SELECTORS.has(distinct[0].name))) {
    return selectorRows(plan, fields, distinct[0], st, fieldInfos, windows, timeDim);
  }
  const intervalMs = timeDim ? timeDim.intervalNs / 1e6 : 0;
  const offsetMs = timeDim ? timeDim.offsetNs / 1e6 : 0;
  const windowOf = timeDim ? (ms: number): [number, number] => {
    const s = windowStart(ms, intervalMs, offsetMs, stmt.tz);
    return [s, windowStart(s + intervalMs, intervalMs, offsetMs, stmt.tz)];
  } : undefined;
  const pointsOf = (name: string, fn: string) => fieldPoints(st, fieldInfos, name, fn);

  // the window read before the answer's start feeds transformations only: a plain aggregate beside them starts
  // at the answer's start (InfluxDB reads each call with its own range)
  const lookBack = plan.answerFromMs !== undefined && plan.explicitFromMs !== undefined && plan.explicitFromMs < plan.answerFromMs;
  let inTransform = false;
  // fill(previous) follows the answer's order: with ORDER BY time DESC the "previous" window is the later one
  const fillIn = (c: Column): PointValue[] => {
    const present = c.present ?? c.values.map((v) => v !== null);
    if (!stmt.desc) return fillColumn(c, present, stmt.fill, windows, timeDim?.intervalNs ?? 0);
    const rev = fillColumn({ ...c, values: c.values.slice().reverse() }, present.slice().reverse(), stmt.fill, windows.slice().reverse(), timeDim?.intervalNs ?? 0);
    return rev.reverse();
  };
  const evalColumn = (e: Expr): Column | Constant => {
    switch (e.kind) {
      case 'paren': return evalColumn(e.expr);
      case 'integer': case 'number': return e.value;
      case 'bool': return e.value;
      case 'binary': {
        const l = evalColumn(e.lhs);
        const r = evalColumn(e.rhs);
        return combine(e.op, l, r);
      }
      case 'call': {
        // each call is filled before arithmetic combines it (InfluxDB fills each call's iterator)
        const c = callColumn(e);
        if (timeDim && c.windowed && !c.integral && e !== fields.find((f) => f.expr === e)?.expr) return { ...c, values: fillIn(c), present: c.present ?? c.values.map((v) => v !== null) };
        return c;
      }
      case 'var': throw new StatementError('mixing aggregate and non-aggregate queries is not supported');
      default: throw new StatementError('unsupported expression in a select with functions');
    }
  };

  const callColumn = (e: Extract<Expr, { kind: 'call' }>): Column => {
    const name = e.name;
    const inner = e.args[0];
    if (name === 'count' && inner?.kind === 'call' && inner.name === 'distinct' && inner.args[0]?.kind === 'var') {
      // count(distinct(x)): the number of distinct values per window
      const p = pointsOf(inner.args[0].name, 'distinct');
      const values: PointValue[] = [];
      const present: boolean[] = [];
      let hint = 0;
      for (const [s, end] of windows) {
        const [a, b] = windowRange(p, s, end, hint);
        hint = b;
        values.push(b > a ? new Set(p.v.slice(a, b)).size : null);
        present.push(b > a);
      }
      return { windowed: true, values, present, kind: 'integer', isCount: true };
    }
    if (AGGREGATES.has(name) || SELECTORS.has(name)) {
      if (inner === undefined || inner.kind !== 'var') {
        if (inner?.kind === 'call') throw new StatementError(`${name}() of a function is not supported`);
        throw new StatementError(`expected field argument in ${name}()`);
      }
      const kind = answerKind(name, fieldKindOf(fieldInfos, inner.name));
      if (reduced !== undefined) {
        const values = windows.map((_, i) => reduced(inner.name, name, i));
        return { windowed: true, values, present: values.map((v) => v !== null), kind, ...(name === 'count' ? { isCount: true } : {}) };
      }
      let p = lookBack && !inTransform ? pointsFrom(pointsOf(inner.name, name), plan.answerFromMs!) : pointsOf(inner.name, name);
      if (plan.answerToMs !== undefined && !inTransform) p = pointsBefore(p, plan.answerToMs);
      if (name === 'integral') {
        const unit = numArg(e.args[1], name) ?? 1000;
        const integer = fieldKindOf(fieldInfos, inner.name) !== 'float';
        if (timeDim && stmt.desc) {
          // newest first each window's area is answered at the window's end (InfluxDB): rows of their own, in the
          // walk's order once the select turns them back
          const rows: Row[] = integralAreas(p as Points<number>, windowOf, unit, true, integer).reverse().map(([ms, v]) => ({ ms, sub: 0, v }));
          return { windowed: false, values: [], rows, kind };
        }
        const sums = timeDim ? integralWindows(p as Points<number>, windowOf, unit, integer)
          : new Map(integralAreas(p as Points<number>, undefined, unit, stmt.desc, integer));
        // without GROUP BY time a single instant has no area: no value (InfluxDB answers no row)
        const spans = p.ms.length > 1 && (p.ms[0] !== p.ms[p.ms.length - 1] || p.sub[0] !== p.sub[p.sub.length - 1]);
        if (!timeDim && integer) {
          // InfluxDB's integer reducer takes the query's range as its window: it answers at the range's start, newest
          // first at its end (a float one at time 0), and newest first a point on the start closes the range twice
          const start = plan.explicitFrom?.[0] ?? 0;
          const areas = spans ? integralAreas(p as Points<number>, () => [start, src.toMs], unit, stmt.desc, true) : [];
          const rows: Row[] = areas.reverse().map(([ms, v]) => ({ ms, sub: ms === start ? plan.explicitFrom?.[1] ?? 0 : 0, v }));
          return { windowed: false, values: [], rows: stmt.desc ? rows : rows.reverse(), kind };
        }
        const values = windows.map(([s]) => (timeDim ? sums.get(s) ?? null : (spans ? sums.get(Number.NaN) ?? null : null)));
        return { windowed: true, integral: true, kind, values, present: values.map((v) => v !== null) };
      }
      if (name === 'distinct') {
        const rows: Row[] = [];
        let hint = 0;
        for (const [s, end] of windows) {
          const [a, b] = windowRange(p, s, end, hint);
          hint = b;
          const at = timeDim ? [s, 0] : plan.explicitFrom ?? [0, 0];
          // newest first each window's values stay in time order (InfluxDB): pushed backwards, as the select turns
          // every row around
          const many = reduceMany(name, p, a, b, 0, undefined, stmt.desc);
          for (const r of stmt.desc ? many.reverse() : many) rows.push({ ms: at[0], sub: at[1], v: r.value });
        }
        return { windowed: false, values: [], rows, kind };
      }
      const arg = name === 'percentile' ? numArg(e.args[1], name) : undefined;
      const values: PointValue[] = [];
      const present: boolean[] = [];
      const times: Array<[number, number] | undefined> = [];
      let hint = 0;
      for (const [s, end] of windows) {
        const [a, b] = windowRange(p, s, end, hint);
        hint = b;
        const r = reduce(name, p, a, b, arg);
        values.push(r.value);
        present.push(b > a);
        times.push(r.ms === undefined ? undefined : [r.ms, r.sub ?? 0]);
      }
      return { windowed: true, values, present, kind, ...(SELECTORS.has(name) ? { times } : {}), ...(name === 'count' ? { isCount: true } : {}) };
    }
    if (TRANSFORMATIONS.has(name)) {
      if (inner === undefined) throw new StatementError(`expected field argument in ${name}()`);
      const unitArg = name === 'moving_average' ? undefined : numArg(e.args[1], name);
      const arg = name === 'moving_average' ? numArg(e.args[1], name) : undefined;
      let rows: Row[];
      let kind: ValueKind;
      if (inner.kind === 'var') {
        if (timeDim) throw new StatementError(`aggregate function required inside the call to ${name}`);
        const p = pointsOf(inner.name, name);
        rows = p.ms.map((ms, i) => ({ ms, sub: p.sub[i], v: p.v[i] }));
        kind = answerKind(name, fieldKindOf(fieldInfos, inner.name));
      } else {
        inTransform = true;
        const col = evalColumn(inner);
        inTransform = false;
        if (isConstant(col)) throw new StatementError(`expected field argument in ${name}()`);
        // the aggregate is filled first: the transformation sees the filled windows (InfluxDB)
        if ((col.kind === 'string' || col.kind === 'boolean') && name !== 'elapsed') {
          // InfluxDB names the iterator it cannot transform
          throw new StatementError(`unsupported ${ITERATOR_NAMES[name] ?? name} iterator type: *query.${col.kind}InterruptIterator`);
        }
        rows = col.windowed ? filledRows({ ...col, values: fillIn(col) }, windows) : col.rows ?? [];
        kind = answerKind(name, col.kind);
      }
      // over GROUP BY time, a derivative's unit defaults to the interval (InfluxDB); over raw points to 1 s
      const unit = unitArg ?? (name === 'elapsed' ? 1e-6 : inner.kind !== 'var' && timeDim ? intervalMs : 1000);
      // under ORDER BY time DESC InfluxDB runs the transformation over the rows newest first
      if (!stmt.desc) return { windowed: false, values: [], rows: transform(name, rows, arg, unit), kind };
      return { windowed: false, values: [], rows: transform(name, rows.slice().reverse(), arg, unit).reverse(), kind };
    }
    throw new StatementError(`undefined function ${name}()`);
  };

  const cols = fields.map((f) => {
    const c = evalColumn(f.expr);
    if (isConstant(c)) throw new StatementError('a select with functions needs a function in every field');
    return c;
  });

  // a single selector without GROUP BY time answers with the selected point's time
  const selectorTime = !timeDim && cols.length === 1 && cols[0].times !== undefined;
  if (cols.every((c) => c.windowed)) {
    // each column is filled where its own field had no points (InfluxDB fills each call's iterator); a row is
    // left out under fill(none) when no column had points
    const presence = cols.map((c) => c.present ?? c.values.map((v) => v !== null));
    const nonEmpty = windows.map((_, i) => presence.some((p) => p[i]));
    if (!nonEmpty.some(Boolean)) return [];
    const allIntegral = cols.every((c) => c.integral);
    const filled = cols.map((c) => (c.integral ? c.values : fillIn(c)));
    const rows: OutRow[] = [];
    windows.forEach(([s], i) => {
      if (!nonEmpty[i] && stmt.fill.mode === 'none') return;
      const values = filled.map((c) => c[i]);
      if (!timeDim && values.every((v) => v === null)) return;
      if (allIntegral && values.every((v) => v === null)) return;
      const t = selectorTime ? cols[0].times![i] : undefined;
      if (!timeDim && !allIntegral && cols.some((c) => c.integral)) {
        // without GROUP BY time integral() answers at time 0 and the other calls at the range's start: two rows
        const at = plan.explicitFrom ?? [0, 0];
        const integral = values.map((v, k) => (cols[k].integral ? v : null));
        const others = values.map((v, k) => (cols[k].integral ? null : v));
        if (integral.some((v) => v !== null)) rows.push({ ms: 0, sub: 0, values: integral });
        if (others.some((v) => v !== null)) rows.push({ ms: at[0], sub: at[1], values: others });
        return;
      }
      const at: [number, number] = t ?? (timeDim ? [s, 0] : allIntegral ? [0, 0] : plan.explicitFrom ?? [0, 0]);
      rows.push({ ms: at[0], sub: at[1], values });
    });
    return rows;
  }
  // free rows: joined by time. The window read before the answer's start for a transformation answers nothing
  // itself; LIMIT and OFFSET count each column's rows, in the answer's order (InfluxDB limits each call's iterator)
  const from = timeDim && plan.answerFromMs !== undefined ? windowStart(plan.answerFromMs, intervalMs, offsetMs, stmt.tz) : -Infinity;
  const to = plan.answerToMs ?? Infinity;
  const perColumn = cols.length > 1 && (stmt.limit > 0 || stmt.offset > 0);
  // beside a transformation an aggregate over GROUP BY time still answers every window of the range, filled (InfluxDB
  // keeps those rows even when all their values are null), and fill() also stands for the transformation's missing
  // values in them
  const windowedRows = (c: Column): Row[] => {
    const values = c.integral ? c.values : fillIn(c);
    const present = c.present ?? c.values.map((v) => v !== null);
    const out: Row[] = [];
    windows.forEach(([s], i) => { if (stmt.fill.mode !== 'none' || present[i]) out.push({ ms: s, sub: 0, v: values[i] }); });
    return out;
  };
  const byTime = new Map<string, { ms: number; sub: number; values: PointValue[]; window?: boolean }>();
  cols.forEach((c, k) => {
    const whole = timeDim !== undefined && c.windowed;
    let rows = (whole ? windowedRows(c) : rowsOf(c, windows, false)).filter((r) => r.ms >= from && r.ms < to);
    if (perColumn) {
      if (stmt.desc) rows = rows.slice().reverse();
      rows = stmt.limit > 0 ? rows.slice(stmt.offset, stmt.offset + stmt.limit) : rows.slice(stmt.offset);
    }
    for (const r of rows) {
      const key = `${r.ms}:${r.sub}`;
      let row = byTime.get(key);
      if (row === undefined) byTime.set(key, (row = { ms: r.ms, sub: r.sub, values: cols.map(() => null) }));
      if (whole) row.window = true;
      if (row.values[k] === null) row.values[k] = r.v;
      else {
        // several rows at one time in one column (distinct): keep them apart
        const extra = { ms: r.ms, sub: r.sub, values: cols.map(() => null as PointValue) };
        extra.values[k] = r.v;
        byTime.set(`${key}:${byTime.size}`, extra);
      }
    }
  });
  const out: AggregateRows = [...byTime.values()].filter((r) => r.window === true || r.values.some((v) => v !== null))
    .sort((a, b) => a.ms - b.ms || a.sub - b.sub);
  if (timeDim && cols.some((c) => c.windowed) && (stmt.fill.mode === 'value' || stmt.fill.mode === 'previous')) {
    const fill = stmt.fill;
    // (a column's rows beyond its LIMIT are missing too)
    cols.forEach((c, k) => {
      let last: PointValue = null;
      for (const r of stmt.desc ? out.slice().reverse() : out) {
        if (r.values[k] !== null) last = r.values[k];
        else if (fill.mode === 'value') r.values[k] = castFill(fill.value, c.kind);
        else r.values[k] = last;
      }
    });
  }
  if (perColumn) out.limited = true;
  return out;
}

/** The points from `ms` on. */
function pointsFrom(p: Points, ms: number): Points {
  let i = 0;
  while (i < p.ms.length && p.ms[i] < ms) i++;
  return i === 0 ? p : { ms: p.ms.slice(i), sub: p.sub.slice(i), v: p.v.slice(i), idx: p.idx.slice(i) };
}

/** The points before `ms`. */
function pointsBefore(p: Points, ms: number): Points {
  let n = p.ms.length;
  while (n > 0 && p.ms[n - 1] >= ms) n--;
  return n === p.ms.length ? p : { ms: p.ms.slice(0, n), sub: p.sub.slice(0, n), v: p.v.slice(0, n), idx: p.idx.slice(0, n) };
}

/** A windowed column (filled) as rows at the window starts; windows left null are left out. */
function filledRows(c: Column, windows: Array<[number, number]>): Row[] {
  const out: Row[] = [];
  c.values.forEach((v, i) => { if (v !== null) out.push({ ms: windows[i][0], sub: 0, v }); });
  return out;
}

/** A column as rows: windowed columns at their window starts (or selected times), skipping nulls when asked. */
function rowsOf(c: Column, windows: Array<[number, number]>, skipNull: boolean): Row[] {
  if (!c.windowed) return c.rows ?? [];
  const out: Row[] = [];
  c.values.forEach((v, i) => { if (!(skipNull && v === null)) out.push({ ms: windows[i][0], sub: 0, v }); });
  return out;
}

/** A number or boolean literal of a field expression. */
type Constant = number | boolean;

function isConstant(c: Column | Constant): c is Constant {
  return typeof c === 'number' || typeof c === 'boolean';
}

function combine(op: string, l: Column | Constant, r: Column | Constant): Column {
  const apply = (a: PointValue, b: PointValue): number | boolean | null => {
    if (typeof a === 'boolean' && b !== null) {
      const v = evaluate({ kind: 'binary', op: op as never, lhs: { kind: 'bool', value: a }, rhs: typeof b === 'boolean' ? { kind: 'bool', value: b } : { kind: 'number', value: Number(b) } }, () => null);
      return typeof v === 'boolean' ? v : null;
    }
    if (typeof a !== 'number' || typeof b !== 'number') return null;
    const v = evaluate({ kind: 'binary', op: op as never, lhs: { kind: 'number', value: a }, rhs: { kind: 'number', value: b } }, () => null);
    return typeof v === 'number' ? v : null;
  };
  if (isConstant(l) && isConstant(r)) return { windowed: true, values: [apply(l, r)], kind: 'float' };
  if (isConstant(l) || isConstant(r)) {
    const col = (isConstant(l) ? r : l) as Column;
    const k = (isConstant(l) ? l : r) as Constant;
    const f = (v: PointValue) => (isConstant(l) ? apply(k, v) : apply(v, k));
    if (col.windowed) {
      return { windowed: true, values: col.values.map(f), kind: col.kind, ...(col.times ? { times: col.times } : {}), ...(col.present ? { present: col.present } : {}), ...(col.integral ? { integral: true } : {}) };
    }
    return { windowed: false, values: [], kind: col.kind, rows: (col.rows ?? []).map((x) => ({ ...x, v: f(x.v) })) };
  }
  if (l.windowed && r.windowed) {
    const present = l.present && r.present ? l.present.map((p, i) => p || r.present![i]) : undefined;
    return { windowed: true, values: l.values.map((v, i) => apply(v, r.values[i] ?? null)), kind: l.kind, ...(present ? { present } : {}) };
  }
  const rightAt = new Map((r.rows ?? []).map((x) => [`${x.ms}:${x.sub}`, x.v]));
  return { windowed: false, values: [], kind: l.kind, rows: (l.rows ?? []).map((x) => ({ ...x, v: apply(x.v, rightAt.get(`${x.ms}:${x.sub}`) ?? null) })) };
}
