// WHERE clauses: the time range is taken out (it decides the shards scanned and the cost), the rest is a filter over
// tags and fields, evaluated per series when it names only tags and per point otherwise.
import type { Expr } from './ast.ts';
import { StatementError } from './errors.ts';
import { parseIsoTime } from '../telemetry/cost.ts';
import type { PointValue } from '../telemetry/query/reads-types.ts';

/** Explicit bounds of a WHERE clause, in ms: [fromMs, toMs). */
export interface TimeRange {
  fromMs?: number;
  toMs?: number;
  /** the lower bound as InfluxDB states it (ms and sub-ms ns): `time > t` starts 1 ns after t */
  fromExact?: [number, number];
}

const isTimeRef = (e: Expr) => e.kind === 'var' && e.name.toLowerCase() === 'time';

function mentionsTime(e: Expr): boolean {
  switch (e.kind) {
    case 'var': return isTimeRef(e);
    case 'binary': return mentionsTime(e.lhs) || mentionsTime(e.rhs);
    case 'paren': return mentionsTime(e.expr);
    case 'call': return e.args.some(mentionsTime);
    default: return false;
  }
}

/** Splits the time conditions (joined by AND at the top) from the rest. */
export function splitCondition(cond: Expr | undefined, nowMs: number): { range: TimeRange; filter: Expr | undefined } {
  const range: TimeRange = {};
  const raise = (v: number) => { range.fromMs = range.fromMs === undefined ? v : Math.max(range.fromMs, v); };
  const lower = (v: number) => { range.toMs = range.toMs === undefined ? v : Math.min(range.toMs, v); };
  const walk = (e: Expr): Expr | undefined => {
    if (e.kind === 'paren') return walk(e.expr);
    if (e.kind === 'binary' && e.op === 'AND') {
      const l = walk(e.lhs);
      const r = walk(e.rhs);
      if (l === undefined) return r;
      if (r === undefined) return l;
      return { kind: 'binary', op: 'AND', lhs: l, rhs: r };
    }
    if (!mentionsTime(e)) return e;
    if (e.kind !== 'binary' || !['=', '<', '<=', '>', '>='].includes(e.op)) {
      throw new StatementError('invalid time condition: time may only be compared with =, <, <=, >, >= and joined by AND');
    }
    let op = e.op;
    let other: Expr;
    if (isTimeRef(e.lhs)) other = e.rhs;
    else if (isTimeRef(e.rhs)) {
      other = e.lhs;
      op = op === '<' ? '>' : op === '<=' ? '>=' : op === '>' ? '<' : op === '>=' ? '<=' : op;
    } else throw new StatementError('invalid time condition');
    const v = timeValueMs(other, nowMs);
    if (op === '>=' || op === '>' || op === '=') {
      const ns = Math.round((v - Math.floor(v)) * 1e6) + (op === '>' ? 1 : 0);
      const exact: [number, number] = [Math.floor(v) + Math.floor(ns / 1e6), ns % 1e6];
      const cur = range.fromExact;
      if (cur === undefined || exact[0] > cur[0] || (exact[0] === cur[0] && exact[1] > cur[1])) range.fromExact = exact;
    }
    switch (op) {
      case '>=': raise(Math.ceil(v)); break;
      case '>': raise(Math.floor(v) + 1); break;
      case '<': lower(Math.ceil(v)); break;
      case '<=': lower(Math.floor(v) + 1); break;
      case '=': raise(Math.ceil(v)); lower(Math.floor(v) + 1); break;
    }
    return undefined;
  };
  const filter = cond === undefined ? undefined : walk(cond);
  return { range, filter };
}

/** A time expression in ms: RFC3339 strings, integers (ns), durations (ns), now(), and + / - of durations. */
export function timeValueMs(e: Expr, nowMs: number): number {
  switch (e.kind) {
    case 'paren': return timeValueMs(e.expr, nowMs);
    case 'string': {
      const text = e.value.trim().replace(' ', 'T');
      const ms = parseIsoTime(text);
      if (ms === undefined) throw new StatementError(`invalid time: ${JSON.stringify(e.value)} (expected RFC3339 like 2026-01-02T03:04:05Z)`);
      const frac = /\.(\d+)/.exec(text)?.[1] ?? '';
      return ms + (frac.length > 3 ? Number(`0.${frac.slice(3)}`) : 0);
    }
    case 'integer': case 'number': return e.value / 1e6;
    case 'duration': return e.ns / 1e6;
    case 'call':
      if (e.name === 'now' && e.args.length === 0) return nowMs;
      break;
    case 'binary':
      if (e.op === '+' || e.op === '-') {
        const l = timeValueMs(e.lhs, nowMs);
        const r = timeValueMs(e.rhs, nowMs);
        return e.op === '+' ? l + r : l - r;
      }
      break;
    default: break;
  }
  throw new StatementError('invalid time condition: expected a time, an epoch integer, a duration or now()');
}

/** How a name of a condition or field list reads in a measurement: a field or a tag. */
export interface Resolver {
  isField(name: string, cast?: 'field' | 'tag'): boolean;
}

/** Whether an expression names only tags (then it is decided once per series). */
export function onlyTags(e: Expr, r: Resolver): boolean {
  switch (e.kind) {
    case 'var': return !r.isField(e.name, e.cast);
    case 'binary': return onlyTags(e.lhs, r) && onlyTags(e.rhs, r);
    case 'paren': return onlyTags(e.expr, r);
    case 'call': return false;
    default: return true;
  }
}

/** Field names an expression reads. */
export function fieldNames(e: Expr | undefined, r: Resolver, out = new Set<string>()): Set<string> {
  if (e === undefined) return out;
  switch (e.kind) {
    case 'var': if (r.isField(e.name, e.cast)) out.add(e.name); break;
    case 'binary': fieldNames(e.lhs, r, out); fieldNames(e.rhs, r, out); break;
    case 'paren': fieldNames(e.expr, r, out); break;
    case 'call': for (const a of e.args) fieldNames(a, r, out); break;
    default: break;
  }
  return out;
}

type Value = PointValue | RegExp;

/** Evaluates a filter or field expression; `get` reads a name (tags as strings, '' when absent; fields, null when absent). */
export function evaluate(e: Expr, get: (name: string, cast?: 'field' | 'tag') => PointValue): Value {
  switch (e.kind) {
    case 'var': return get(e.name, e.cast);
    case 'paren': return evaluate(e.expr, get);
    case 'number': case 'integer': return e.value;
    case 'string': return e.value;
    case 'bool': return e.value;
    case 'duration': return e.ns;
    case 'regex': return e.re;
    case 'binary': return binary(e.op, evaluate(e.lhs, get), evaluate(e.rhs, get));
    default: return null;
  }
}

export function truthy(v: Value): boolean {
  return v === true;
}

const ARITHMETIC_OPS = new Set(['+', '-', '*', '/', '%', '&', '|', '^']);

function binary(op: string, l: Value, r: Value): Value {
  switch (op) {
    case 'AND': return l === true && r === true;
    case 'OR': return l === true || r === true;
    case '=~': return typeof l === 'string' && r instanceof RegExp && r.test(l);
    case '!~': return typeof l === 'string' && r instanceof RegExp && !r.test(l);
    default: break;
  }
  if (l === null || r === null || l instanceof RegExp || r instanceof RegExp) return ARITHMETIC_OPS.has(op) ? null : false;
  switch (op) {
    case '=': return typeof l === typeof r && l === r;
    case '!=': return typeof l === typeof r && l !== r;
    case '<': return typeof l === typeof r && l < r;
    case '<=': return typeof l === typeof r && l <= r;
    case '>': return typeof l === typeof r && l > r;
    case '>=': return typeof l === typeof r && l >= r;
    default: break;
  }
  if (typeof l === 'boolean') {
    // InfluxDB's bitwise operators after a boolean are the logical ones, false when the right operand is no boolean
    const b = typeof r === 'boolean';
    switch (op) {
      case '&': return b && l && r;
      case '|': return b && (l || r);
      case '^': return b && l !== r;
      default: return null;
    }
  }
  if (typeof l !== 'number' || typeof r !== 'number') return null;
  switch (op) {
    case '+': return l + r;
    case '-': return l - r;
    case '*': return l * r;
    case '/': return r === 0 ? 0 : l / r;
    case '%': return r === 0 ? 0 : l % r;
    case '&': return Number(BigInt.asIntN(64, BigInt(Math.trunc(l)) & BigInt(Math.trunc(r))));
    case '|': return Number(BigInt.asIntN(64, BigInt(Math.trunc(l)) | BigInt(Math.trunc(r))));
    case '^': return Number(BigInt.asIntN(64, BigInt(Math.trunc(l)) ^ BigInt(Math.trunc(r))));
    default: return null;
  }
}
