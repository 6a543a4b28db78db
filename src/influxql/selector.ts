// One selector (first, last, min, max, percentile, top, bottom, sample) beside fields and tags, or inside arithmetic:
// the answer's rows are the selected points, and the other names read the selected point's values (InfluxDB's
// auxiliary fields). Without GROUP BY time each row has the selected point's time; with it, single-point selectors
// answer one row per window (filled like any aggregate) and top, bottom and sample their points' own times.
import { callsIn, hasVar, type Call, type Dimension, type Expr, type Field } from './ast.ts';
import { StatementError } from './errors.ts';
import { evaluate } from './condition.ts';
import { reduce, reduceMany, windowRange, type Value } from './functions.ts';
import { answerKind, fieldKindOf, fieldPoints, fillColumn, numArg } from './columns.ts';
import type { SelectPlan } from './plan.ts';
import type { OutRow, Stream } from './rows.ts';
import type { PointValue } from '../telemetry/query/reads-types.ts';
import type { FieldInfo } from '../telemetry/catalogue-types.ts';

const SELECTED = '\u0000selected';

function replaceCall(e: Expr): Expr {
  switch (e.kind) {
    case 'call': return { kind: 'var', name: SELECTED };
    case 'binary': return { ...e, lhs: replaceCall(e.lhs), rhs: replaceCall(e.rhs) };
    case 'paren': return { kind: 'paren', expr: replaceCall(e.expr) };
    default: return e;
  }
}

interface Selected {
  ms: number;
  sub: number;
  v: Value | null;
  /** the point's row in the stream; undefined for an empty window */
  idx?: number;
}

/** The last argument of top(), bottom() or sample(): a positive integer. */
function countArg(call: Call): number {
  const last = call.args[call.args.length - 1];
  if (call.name === 'sample') {
    if (call.args.length !== 2) throw new StatementError(`invalid number of arguments for sample, expected 2, got ${call.args.length}`);
    if (last.kind !== 'integer') throw new StatementError(`expected integer argument in sample()`);
    if (last.value <= 0) throw new StatementError(`sample window must be greater than 1, got ${last.value}`);
    return last.value;
  }
  if (call.args.length < 2) throw new StatementError(`invalid number of arguments for ${call.name}, expected at least 2, got ${call.args.length}`);
  if (last.kind !== 'integer') {
    const found = last.kind === 'var' ? last.name : last.kind === 'number' ? String(last.value) : last.kind;
    throw new StatementError(`expected integer as last argument in ${call.name}(), found ${found}`);
  }
  if (last.value <= 0) throw new StatementError(`limit (${last.value}) in ${call.name} function must be at least 1`);
  for (const a of call.args.slice(1, -1)) {
    if (a.kind !== 'var') throw new StatementError(`only fields or tags are allowed in ${call.name}(), found ${a.kind}`);
  }
  return last.value;
}

export function selectorRows(plan: SelectPlan, fields: Field[], call: Call, st: Stream, fieldInfos: FieldInfo[], windows: Array<[number, number]>,
  timeDim: Extract<Dimension, { kind: 'time' }> | undefined): OutRow[] {
  const stmt = plan.stmt;
  const name = call.name;
  const inner = call.args[0];
  if (inner === undefined || inner.kind !== 'var') {
    if (name === 'top' || name === 'bottom' || name === 'sample') countArg(call);
    throw new StatementError(`expected field argument in ${name}()`);
  }
  const multi = name === 'top' || name === 'bottom' || name === 'sample';
  const n = multi ? countArg(call) : 0;
  if (name === 'percentile' && call.args.length !== 2) throw new StatementError(`invalid number of arguments for percentile, expected 2, got ${call.args.length}`);
  let p = fieldPoints(st, fieldInfos, inner.name, name);
  const selected: Selected[] = [];
  if ((name === 'top' || name === 'bottom') && call.args.length === 2 && (stmt.limit > 0 || stmt.offset > 0)) {
    // InfluxDB 1.6 reads only the first OFFSET + LIMIT + 1 points of each series for top() and bottom(), in the
    // answer's order, then applies OFFSET and LIMIT to the rows they answer
    const len = p.ms.length;
    const take = stmt.limit > 0 ? Math.min(len, stmt.offset + stmt.limit + 1) : len;
    const [a, b] = stmt.desc ? [len - take, len] : [0, take];
    p = { ms: p.ms.slice(a, b), sub: p.sub.slice(a, b), v: p.v.slice(a, b), idx: p.idx.slice(a, b) };
  }
  if (multi) {
    // top(field, tag…, N): the best point of each tag combination first
    const tagArgs = call.args.slice(1, -1).map((a) => (a as { name: string }).name);
    const groups = tagArgs.length > 0 ? st.tags.map((t) => tagArgs.map((k) => t[k] ?? '').join('\u0000')) : undefined;
    let hint = 0;
    for (const [s, end] of windows) {
      const [a, b] = windowRange(p, s, end, hint);
      hint = b;
      // newest first each window's points stay in time order (InfluxDB): pushed backwards, as the select turns
      // every row around
      const many = reduceMany(name, p, a, b, n, groups);
      for (const r of stmt.desc ? many.reverse() : many) selected.push({ ms: r.ms!, sub: r.sub!, v: r.value, idx: r.idx });
    }
  } else {
    const arg = name === 'percentile' ? numArg(call.args[1], name) : undefined;
    const kind = answerKind(name, fieldKindOf(fieldInfos, inner.name));
    let hint = 0;
    const perWindow: Selected[] = [];
    for (const [s, end] of windows) {
      const [a, b] = windowRange(p, s, end, hint);
      hint = b;
      const r = reduce(name, p, a, b, arg);
      if (timeDim) perWindow.push({ ms: s, sub: 0, v: r.value, ...(r.idx !== undefined ? { idx: r.idx } : {}) });
      else if (r.value !== null) selected.push({ ms: r.ms!, sub: r.sub!, v: r.value, idx: r.idx });
    }
    if (timeDim) {
      if (!perWindow.some((w) => w.v !== null)) return [];
      // filled in the answer's order: with ORDER BY time DESC the "previous" window is the later one (the rows are
      // turned back to time order here, the select reverses them again)
      const order = stmt.desc ? perWindow.slice().reverse() : perWindow;
      const nonEmpty = order.map((w) => w.v !== null);
      const filled = fillColumn({ values: order.map((w) => w.v), kind }, nonEmpty, stmt.fill, stmt.desc ? windows.slice().reverse() : windows, timeDim.intervalNs);
      const rows: Selected[] = [];
      order.forEach((w, i) => {
        if (!nonEmpty[i] && stmt.fill.mode === 'none') return;
        rows.push({ ms: w.ms, sub: w.sub, v: filled[i] as Value | null, ...(w.idx !== undefined ? { idx: w.idx } : {}) });
      });
      selected.push(...(stmt.desc ? rows.reverse() : rows));
    }
  }
  const fieldIndex = new Map(st.fieldNames.map((f, i) => [f, i]));
  const exprs = fields.map((f) => replaceCall(f.expr));
  // InfluxDB's fill(N) over GROUP BY time also stands for every missing value beside the selector, in empty windows
  // and in windows whose selected point lacks the field (an integer field's N truncated, other names' N as given)
  const fillValue = timeDim && stmt.fill.mode === 'value' ? stmt.fill.value : undefined;
  const auxFill = (n: string, fi: number | undefined): PointValue => {
    if (fillValue === undefined) return null;
    return fi !== undefined && fieldKindOf(fieldInfos, n) === 'integer' ? Math.trunc(fillValue) : fillValue;
  };
  const out = selected.map((row) => {
    const get = (n: string, cast?: 'field' | 'tag'): PointValue => {
      if (n === SELECTED) return row.v;
      const fi = cast === 'tag' ? undefined : fieldIndex.get(n);
      if (row.idx === undefined) return auxFill(n, fi);
      const v = fi !== undefined ? st.values[fi][row.idx] : cast === 'field' ? null : st.tags[row.idx][n] ?? null;
      return v === null ? auxFill(n, fi) : v;
    };
    const values = exprs.map((e) => {
      const v = evaluate(e, get);
      return v instanceof RegExp ? null : v;
    });
    return { ms: row.ms, sub: row.sub, values };
  });
  if (timeDim && stmt.fill.mode === 'previous') {
    // fill(previous) also stands for every missing value beside the selector: the previous row's, in the answer's order
    const last: PointValue[] = fields.map(() => null);
    for (const row of stmt.desc ? out.slice().reverse() : out) {
      row.values.forEach((v, k) => {
        if (v === null) row.values[k] = last[k];
        else last[k] = v;
      });
    }
  }
  return out;
}
