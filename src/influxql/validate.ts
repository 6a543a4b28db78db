// The checks InfluxDB makes of a SELECT before it reads anything, with its messages: the number of each function's
// arguments, GROUP BY time without a function, several time dimensions, a select of `time` alone, transformations of
// an aggregate without GROUP BY time, moving_average's window, and which calls and names may stand together.
import { callsIn, hasVar, type Expr, type SelectStatement } from './ast.ts';
import { StatementError } from './errors.ts';
import { SELECTORS } from './functions.ts';

/** [min, max] arguments of each function. */
const ARITY: Record<string, [number, number]> = {
  count: [1, 1], sum: [1, 1], mean: [1, 1], median: [1, 1], mode: [1, 1], spread: [1, 1], stddev: [1, 1],
  first: [1, 1], last: [1, 1], min: [1, 1], max: [1, 1], distinct: [1, 1], percentile: [2, 2], sample: [2, 2],
  top: [2, Infinity], bottom: [2, Infinity], integral: [1, 2], derivative: [1, 2], non_negative_derivative: [1, 2],
  elapsed: [1, 2], difference: [1, 1], non_negative_difference: [1, 1], cumulative_sum: [1, 1], moving_average: [2, 2],
};

const TRANSFORMS_OF_AGGREGATES = new Set(['derivative', 'non_negative_derivative', 'difference', 'non_negative_difference', 'cumulative_sum', 'moving_average', 'elapsed']);

function checkCall(e: Extract<Expr, { kind: 'call' }>, grouped: boolean): void {
  const arity = ARITY[e.name];
  if (arity !== undefined) {
    const [lo, hi] = arity;
    const n = e.args.length;
    if (n < lo || n > hi) {
      const expected = lo === hi ? `expected ${lo}` : hi === Infinity ? `expected at least ${lo}` : `expected at least ${lo} but no more than ${hi}`;
      throw new StatementError(`invalid number of arguments for ${e.name}, ${expected}, got ${n}`);
    }
  }
  if (e.name === 'moving_average') {
    const w = e.args[1];
    if (w.kind === 'integer' && w.value <= 1) throw new StatementError(`moving_average window must be greater than 1, got ${w.value}`);
  }
  if (e.name === 'distinct' && e.args[0]?.kind === 'wildcard') throw new StatementError('expected field argument in distinct()');
  if (TRANSFORMS_OF_AGGREGATES.has(e.name) && e.args[0]?.kind === 'call' && !grouped) {
    throw new StatementError(`${e.name} aggregate requires a GROUP BY interval`);
  }
  for (const a of e.args) for (const c of callsIn(a)) checkCall(c, grouped);
}

/** InfluxDB's checks of the calls of a select with functions, with its messages. */
function checkCalls(fields: SelectStatement['fields']): void {
  const calls = fields.flatMap((f) => callsIn(f.expr));
  const vars = fields.some((f) => hasVar(f.expr));
  for (const c of calls) {
    if (c.name === 'distinct' && (calls.length > 1 || vars)) throw new StatementError('aggregate function distinct() cannot be combined with other functions or fields');
  }
  // top, bottom and sample stand alone: not beside other calls, not inside one
  const nested = fields.flatMap((f) => allCalls(f.expr));
  if (nested.length > 1) {
    const multi = nested.find((c) => c.name === 'top' || c.name === 'bottom' || c.name === 'sample');
    if (multi) throw new StatementError(`selector function ${multi.name}() cannot be combined with other functions`);
  }
  if (vars && !(calls.length === 1 && SELECTORS.has(calls[0].name))) {
    // (counted before equal calls are read once: `max(x), max(x), y` is refused too)
    if (calls.every((c) => SELECTORS.has(c.name))) throw new StatementError('mixing multiple selector functions with tags or fields is not supported');
    throw new StatementError('mixing aggregate and non-aggregate queries is not supported');
  }
}

/** Every call of an expression, those inside other calls' arguments too. */
function allCalls(e: Expr): Array<Extract<Expr, { kind: 'call' }>> {
  return callsIn(e).flatMap((c) => [c, ...c.args.flatMap(allCalls)]);
}

export function validateSelect(stmt: SelectStatement): void {
  for (const c of stmt.fields.flatMap((f) => allCalls(f.expr))) {
    const n = c.args[c.args.length - 1];
    if ((c.name === 'top' || c.name === 'bottom') && c.args.length >= 2 && n?.kind === 'integer' && stmt.limit > 0 && n.value > stmt.limit) {
      throw new StatementError(`limit (${n.value}) in ${c.name} function can not be larger than the LIMIT (${stmt.limit}) in the select statement`);
    }
  }
  const times = stmt.dimensions.filter((d) => d.kind === 'time');
  if (times.length > 1) throw new StatementError('multiple time dimensions not allowed');
  const calls = stmt.fields.flatMap((f) => callsIn(f.expr));
  for (const c of calls) checkCall(c, times.length > 0);
  if (stmt.fields.every((f) => f.expr.kind === 'var' && f.expr.name.toLowerCase() === 'time')) {
    throw new StatementError('at least 1 non-time field must be queried');
  }
  if (times.length > 0 && calls.length === 0) throw new StatementError('GROUP BY requires at least one aggregate function');
  if (calls.length > 0) checkCalls(stmt.fields);
}
