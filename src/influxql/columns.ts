// The values of a select with functions: the type of each column (fill(N) is cast to it), a field's points for a
// function (refusing a type the function does not take, as InfluxDB does), function arguments, and fill().
import type { Expr, SelectStatement } from './ast.ts';
import { StatementError } from './errors.ts';
import { takesType, unsupportedType, type Points } from './functions.ts';
import type { Stream } from './rows.ts';
import type { PointValue } from '../telemetry/query/reads-types.ts';
import type { FieldInfo } from '../telemetry/catalogue-types.ts';
import { FIELD_TYPES, FLOAT, INTEGER, UNSIGNED } from '../telemetry/line-protocol/line-scanner.ts';

/** The type of a column's values: fill(N) is cast to it; linear fill interpolates integers in integers. */
export type ValueKind = 'float' | 'integer' | 'string' | 'boolean';

/** Functions whose answer is a float whatever the field's type. */
const FLOAT_ANSWER = new Set(['mean', 'median', 'stddev', 'integral', 'derivative', 'non_negative_derivative', 'moving_average']);

/** The kind of a function's answer over a field of `field` kind. */
export function answerKind(fn: string, field: ValueKind): ValueKind {
  if (fn === 'count' || fn === 'elapsed') return 'integer';
  return FLOAT_ANSWER.has(fn) ? 'float' : field;
}

/** A number argument of a function (a count, a percentile, a unit). */
export function numArg(e: Expr | undefined, what: string): number | undefined {
  if (e === undefined) return undefined;
  if (e.kind === 'integer' || e.kind === 'number') return e.value;
  if (e.kind === 'duration') return e.ns / 1e6;
  throw new StatementError(`expected a number as the second argument of ${what}()`);
}

/** Reads a field's non-null points out of the stream for `fn`, refusing a type the function does not take. */
export function fieldPoints(st: Stream, fieldInfos: FieldInfo[], name: string, fn: string): Points {
  const fi = fieldInfos.findIndex((f) => f.name === name);
  const p: Points = { ms: [], sub: [], v: [], idx: [] };
  if (fi < 0) return p;
  const type = FIELD_TYPES[fieldInfos[fi].kind];
  if (!takesType(fn, type)) throw unsupportedType(fn, type);
  const vals = st.values[fi];
  for (let i = 0; i < st.ms.length; i++) {
    const v = vals[i];
    if (v !== null) { p.ms.push(st.ms[i]); p.sub.push(st.sub[i]); p.v.push(v); p.idx.push(i); }
  }
  return p;
}

export function fieldKindOf(fieldInfos: FieldInfo[], name: string): ValueKind {
  const kind = fieldInfos.find((f) => f.name === name)?.kind;
  if (kind === undefined || kind === FLOAT) return 'float';
  return kind === INTEGER || kind === UNSIGNED ? 'integer' : FIELD_TYPES[kind] as ValueKind;
}

/** fill(N) in the column's type: integers truncated, a number in a string column is "", in a boolean one false. */
export function castFill(value: number, kind: ValueKind): PointValue {
  switch (kind) {
    case 'integer': return Math.trunc(value);
    case 'string': return '';
    case 'boolean': return false;
    default: return value;
  }
}

/**
 * A window's number for fill(linear): its start divided by the interval, truncated, as InfluxDB counts them
 * (exact in BigInt: a start in nanoseconds passes 2^53).
 */
function windowNumber(startMs: number, intervalNs: number): number {
  if (!(intervalNs > 0)) return 0;
  const ns = Number.isInteger(startMs) ? BigInt(startMs) * 1_000_000n : BigInt(Math.round(startMs * 1e6));
  return Number(ns / BigInt(Math.round(intervalNs)));
}

/** `intervalNs`: GROUP BY time's interval (fill(linear) counts windows in it). */
export function fillColumn(c: { values: PointValue[]; kind: ValueKind; isCount?: boolean }, nonEmpty: boolean[], fill: SelectStatement['fill'], windows: Array<[number, number]>,
  intervalNs: number): PointValue[] {
  const out: PointValue[] = c.values.slice();
  switch (fill.mode) {
    case 'none': return out;
    case 'null':
      // count() answers 0 for an empty window, in a series where its field has points at all
      if (c.isCount && nonEmpty.some(Boolean)) out.forEach((v, i) => { if (v === null && !nonEmpty[i]) out[i] = 0; });
      return out;
    case 'value': {
      const v = castFill(fill.value, c.kind);
      out.forEach((x, i) => { if (x === null && !nonEmpty[i]) out[i] = v; });
      return out;
    }
    case 'previous': {
      let prev: PointValue = null;
      out.forEach((v, i) => { if (v === null && !nonEmpty[i]) out[i] = prev; else prev = v; });
      return out;
    }
    case 'linear': {
      if (c.kind !== 'float' && c.kind !== 'integer') return out;
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
        // InfluxDB's arithmetic, in windows (not nanoseconds, which rounds differently: 43.99… for 44): slope per
        // window, then slope * windows elapsed + start (integers: truncated)
        const na = windowNumber(windows[a][0], intervalNs);
        const m = (vb - va) / (windowNumber(windows[b][0], intervalNs) - na);
        const y = m * (windowNumber(windows[i][0], intervalNs) - na) + va;
        out[i] = c.kind === 'integer' ? Math.trunc(y) : y;
      }
      return out;
    }
  }
}
