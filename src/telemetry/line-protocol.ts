// InfluxDB line protocol (contract §7.2): `measurement[,tag=v...] field=v[,field=v...] [timestamp]`, one point per line.
// One index-based scanner over the whole body: lines are found with indexOf, tokens with charCodeAt, and substrings
// are only unescaped when a backslash was seen — ingest of a million points must not allocate per character.
//
// Decisions (ours):
// - Time is `timeMs` (floor of the instant in ms, also for negative times) plus `subMsNs` (0..999_999 ns past it), so ns
//   timestamps round-trip exactly without a bigint per point; `pointTimeNs()` rebuilds the exact bigint when needed.
// - A duplicate tag key or field key on one line is an error: the series identity or the value would be ambiguous.
// - Integers (`12i`, `12u`) are bigint (int64/uint64 do not fit a double); floats must be finite (no NaN/Inf).
// - String field values may not contain a raw newline (InfluxDB documents the same); escapes are `\"` and `\\`.
// - Escapes: measurement `\,` `\ `; tag keys, tag values and field keys also `\=`. Any other backslash is literal.
// For big bodies prefer scanLineProtocol (streaming into the write transaction): holding every point of a body in one
// array roughly doubles the parse time in garbage collection.

export type Precision = 'ns' | 'us' | 'ms' | 's';

export type FieldValue =
  | { type: 'float'; value: number }
  | { type: 'integer'; value: bigint }
  | { type: 'unsigned'; value: bigint }
  | { type: 'string'; value: string }
  | { type: 'boolean'; value: boolean };

export interface ParsedPoint {
  measurement: string;
  /** In line order (not sorted: the series key is the store's business); no inherited keys. Always holds `nodeId`. */
  tags: Record<string, string>;
  /** In line order, at least one; no inherited keys. */
  fields: Record<string, FieldValue>;
  /** floor(timestamp / 1 ms), also for negative timestamps. */
  timeMs: number;
  /** Nanoseconds past timeMs, 0..999_999 (always 0 for ms and s precision and for points without a timestamp). */
  subMsNs: number;
}

export interface ParseOptions {
  precision: Precision;
  /** Time of points that carry no timestamp. */
  nowMs: number;
}

export class LineProtocolError extends Error {
  readonly line: number;
  constructor(line: number, reason: string) {
    super(`line ${line}: ${reason}`);
    this.name = 'LineProtocolError';
    this.line = line;
  }
}

/** The exact timestamp of a point in nanoseconds. */
export function pointTimeNs(point: ParsedPoint): bigint {
  return BigInt(point.timeMs) * 1_000_000n + BigInt(point.subMsNs);
}

const CR = 13, SPACE = 32, TAB = 9, HASH = 35, COMMA = 44, EQ = 61, QUOTE = 34, BACKSLASH = 92, MINUS = 45;
const D0 = 48, D9 = 57;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

// InfluxDB's valid time range is ±(2^63 - 2) ns. Per precision: how many trailing digits are sub-ms, the most digits a
// timestamp can have, and the largest magnitude split as (ms part, sub-ms part).
const MAX_MS = 9223372036854;
const TIME_RULES: Record<Precision, { subDigits: number; maxDigits: number; maxHi: number; maxLo: number }> = {
  ns: { subDigits: 6, maxDigits: 19, maxHi: MAX_MS, maxLo: 775806 },
  us: { subDigits: 3, maxDigits: 16, maxHi: MAX_MS, maxLo: 775 },
  ms: { subDigits: 0, maxDigits: 13, maxHi: MAX_MS, maxLo: 0 },
  s: { subDigits: 0, maxDigits: 10, maxHi: 9223372036, maxLo: 0 },
};

const BOOLEANS = new Map<string, boolean>([
  ['t', true], ['T', true], ['true', true], ['True', true], ['TRUE', true],
  ['f', false], ['F', false], ['false', false], ['False', false], ['FALSE', false],
]);

/**
 * Parses a whole request body. Blank lines and `#` comments are skipped but counted; CRLF is accepted.
 * Throws LineProtocolError for the first malformed line (all-or-nothing, contract §7.2).
 */
export function parseLineProtocol(body: string, opts: ParseOptions): ParsedPoint[] {
  const points: ParsedPoint[] = [];
  scanLineProtocol(body, opts, (point) => { points.push(point); });
  return points;
}

/**
 * The streaming form: hands each point to `onPoint` as soon as its line is parsed and returns the number of points.
 * A caller that stores points one by one (inside a transaction it rolls back on LineProtocolError, to keep the
 * request all-or-nothing) lets each point die young instead of holding the whole body's points at once.
 */
export function scanLineProtocol(body: string, opts: ParseOptions, onPoint: (point: ParsedPoint, line: number) => void): number {
  const rule = TIME_RULES[opts.precision];
  if (rule === undefined) throw new Error(`unknown precision ${String(opts.precision)}`);
  const scanner = new Scanner(body, rule, opts.nowMs);
  let count = 0;
  const len = body.length;
  let pos = 0;
  let line = 0;
  while (pos < len) {
    line++;
    const nl = body.indexOf('\n', pos);
    const lineEnd = nl === -1 ? len : nl;
    let end = lineEnd;
    if (end > pos && body.charCodeAt(end - 1) === CR) end--;
    let i = pos;
    while (i < end && isBlank(body.charCodeAt(i))) i++;
    if (i < end && body.charCodeAt(i) !== HASH) {
      onPoint(scanner.parseLine(i, end, line), line);
      count++;
    }
    pos = lineEnd + 1;
  }
  return count;
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

function isDigit(c: number): boolean {
  return c >= D0 && c <= D9;
}

/**
 * Records without inherited keys (`constructor`, `toString` and `__proto__` are plain tag names here) that, unlike
 * Object.create(null), keep V8's fast property layout: a million points share one hidden class per key order.
 */
const EmptyRecord = function EmptyRecord() {} as unknown as { new <T>(): Record<string, T>; prototype: object };
EmptyRecord.prototype = Object.create(null);

type TimeRule = (typeof TIME_RULES)[Precision];

/** Scanner state for one body: the position after the last token, and the strings of the previous line. */
class Scanner {
  private cursor = 0;
  private escaped = false;
  private ms = 0;
  private subNs = 0;
  // Consecutive lines mostly repeat the previous line's measurement, keys and tag values: reusing those strings
  // (compared in place, no slice) saves an allocation per token and lets the engine skip re-hashing property keys.
  private readonly measurements: string[] = [];
  private readonly tagKeys: string[] = [];
  private readonly tagValues: string[] = [];
  private readonly fieldKeys: string[] = [];

  constructor(private readonly s: string, private readonly rule: TimeRule, private readonly nowMs: number) {}

  parseLine(start: number, end: number, line: number): ParsedPoint {
    const s = this.s;
    // Measurement: ends at an unescaped comma (tags follow) or space (fields follow).
    this.scanToken(start, end, false);
    if (this.cursor === start) throw new LineProtocolError(line, 'missing measurement');
    const measurement = this.text(this.measurements, 0, start, this.cursor, false);
    let i = this.cursor;

    const tags = new EmptyRecord<string>();
    for (let k = 0; i < end && s.charCodeAt(i) === COMMA; k++) {
      const keyStart = i + 1;
      this.scanToken(keyStart, end, true);
      if (this.cursor === keyStart) throw new LineProtocolError(line, 'empty tag key');
      if (this.cursor >= end || s.charCodeAt(this.cursor) !== EQ) throw new LineProtocolError(line, 'tag without "=" (expected key=value)');
      const key = this.text(this.tagKeys, k, keyStart, this.cursor, true);
      const valueStart = this.cursor + 1;
      this.scanToken(valueStart, end, true);
      if (this.cursor === valueStart) throw new LineProtocolError(line, `empty value for tag "${key}"`);
      if (this.cursor < end && s.charCodeAt(this.cursor) === EQ) throw new LineProtocolError(line, `unescaped "=" in the value of tag "${key}"`);
      if (key in tags) throw new LineProtocolError(line, `duplicate tag "${key}"`);
      tags[key] = this.text(this.tagValues, k, valueStart, this.cursor, true);
      i = this.cursor;
    }
    if (i >= end) throw new LineProtocolError(line, 'no fields');
    if (tags.nodeId === undefined) throw new LineProtocolError(line, 'missing nodeId tag');

    // Fields: at least one `key=value`, comma-separated.
    while (i < end && s.charCodeAt(i) === SPACE) i++;
    if (i >= end) throw new LineProtocolError(line, 'no fields');
    const fields = new EmptyRecord<FieldValue>();
    for (let k = 0; ; k++) {
      const keyStart = i;
      this.scanToken(keyStart, end, true);
      if (this.cursor === keyStart) throw new LineProtocolError(line, 'empty field key');
      if (this.cursor >= end || s.charCodeAt(this.cursor) !== EQ) throw new LineProtocolError(line, 'field without "=" (expected key=value)');
      const key = this.text(this.fieldKeys, k, keyStart, this.cursor, true);
      if (key in fields) throw new LineProtocolError(line, `duplicate field "${key}"`);
      fields[key] = this.parseFieldValue(this.cursor + 1, end, line, key);
      i = this.cursor;
      if (i < end && s.charCodeAt(i) === COMMA) { i++; continue; }
      break;
    }

    // Optional timestamp, then nothing but blanks.
    while (i < end && isBlank(s.charCodeAt(i))) i++;
    if (i === end) return { measurement, tags, fields, timeMs: this.nowMs, subMsNs: 0 };
    const tsStart = i;
    while (i < end && !isBlank(s.charCodeAt(i))) i++;
    const tsEnd = i;
    while (i < end && isBlank(s.charCodeAt(i))) i++;
    if (i < end) throw new LineProtocolError(line, 'unexpected text after the timestamp');
    this.parseTimestamp(tsStart, tsEnd, line);
    return { measurement, tags, fields, timeMs: this.ms, subMsNs: this.subNs };
  }

  /**
   * Moves the cursor from `start` to the first unescaped comma or space (and, for keys/tag values, `=`), or `end`.
   * A backslash escapes the next character only when that character is special; otherwise it is a literal backslash.
   */
  private scanToken(start: number, end: number, stopAtEq: boolean): void {
    const s = this.s;
    let i = start;
    let escaped = false;
    while (i < end) {
      const c = s.charCodeAt(i);
      if (c === BACKSLASH && i + 1 < end) {
        const n = s.charCodeAt(i + 1);
        if (n === COMMA || n === SPACE || (stopAtEq && n === EQ)) { escaped = true; i += 2; continue; }
      } else if (c === COMMA || c === SPACE || (stopAtEq && c === EQ)) break;
      i++;
    }
    this.cursor = i;
    this.escaped = escaped;
  }

  /** The token [start, end) just scanned, unescaped; the previous line's string at slot k when it is the same text. */
  private text(previous: string[], k: number, start: number, end: number, eqEscapes: boolean): string {
    if (this.escaped) return unescapeToken(this.s, start, end, eqEscapes);
    const prev = previous[k];
    if (prev !== undefined && prev.length === end - start && sameText(this.s, start, prev)) return prev;
    const fresh = this.s.slice(start, end);
    previous[k] = fresh;
    return fresh;
  }

  private parseFieldValue(start: number, end: number, line: number, key: string): FieldValue {
    const s = this.s;
    if (start < end && s.charCodeAt(start) === QUOTE) return this.parseStringValue(start, end, line, key);
    let i = start;
    while (i < end) {
      const c = s.charCodeAt(i);
      if (c === COMMA || c === SPACE) break;
      i++;
    }
    this.cursor = i;
    if (i === start) throw new LineProtocolError(line, `missing value for field "${key}"`);
    // Numbers never start with a letter, so t/T/f/F decide for a boolean before the i/u suffix is looked at.
    const first = s.charCodeAt(start);
    if (first === 116 || first === 84 || first === 102 || first === 70 /* t T f F */) {
      const b = BOOLEANS.get(s.slice(start, i));
      if (b === undefined) throw new LineProtocolError(line, `bad value for field "${key}": ${s.slice(start, i)}`);
      return { type: 'boolean', value: b };
    }
    const last = s.charCodeAt(i - 1);
    if (last === 105 /* i */) return { type: 'integer', value: parseInteger(s, start, i - 1, true, line, key) };
    if (last === 117 /* u */) return { type: 'unsigned', value: parseInteger(s, start, i - 1, false, line, key) };
    if (!isFloatSyntax(s, start, i)) throw new LineProtocolError(line, `bad value for field "${key}": ${s.slice(start, i)}`);
    const value = Number(s.slice(start, i));
    if (!Number.isFinite(value)) throw new LineProtocolError(line, `float out of range for field "${key}"`);
    return { type: 'float', value };
  }

  private parseStringValue(start: number, end: number, line: number, key: string): FieldValue {
    const s = this.s;
    let i = start + 1;
    let hasEscape = false;
    for (;;) {
      if (i >= end) throw new LineProtocolError(line, `unterminated string for field "${key}"`);
      const c = s.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH && i + 1 < end) {
        const n = s.charCodeAt(i + 1);
        if (n === QUOTE || n === BACKSLASH) { hasEscape = true; i += 2; continue; }
      }
      i++;
    }
    const close = i;
    this.cursor = close + 1;
    if (this.cursor < end) {
      const n = s.charCodeAt(this.cursor);
      if (n !== COMMA && n !== SPACE) throw new LineProtocolError(line, `unexpected text after the string of field "${key}"`);
    }
    if (!hasEscape) return { type: 'string', value: s.slice(start + 1, close) };
    let out = '';
    let from = start + 1;
    for (let j = start + 1; j < close; j++) {
      if (s.charCodeAt(j) !== BACKSLASH) continue;
      const n = s.charCodeAt(j + 1);
      if (n === QUOTE || n === BACKSLASH) {
        out += s.slice(from, j);
        from = j + 1;
        j++;
      }
    }
    return { type: 'string', value: out + s.slice(from, close) };
  }

  /**
   * `-?digits` in the rule's precision → (ms, subNs). The digits are split into the ms part and the sub-ms part while
   * scanning, so both stay below 2^53 and no bigint is needed.
   */
  private parseTimestamp(start: number, end: number, line: number): void {
    const s = this.s;
    const rule = this.rule;
    let i = start;
    const negative = s.charCodeAt(i) === MINUS;
    if (negative) i++;
    if (i === end) throw new LineProtocolError(line, 'bad timestamp');
    for (let j = i; j < end; j++) {
      if (!isDigit(s.charCodeAt(j))) throw new LineProtocolError(line, `bad timestamp: ${s.slice(start, end)}`);
    }
    while (i < end - 1 && s.charCodeAt(i) === D0) i++; // leading zeros do not count towards the digit limit
    if (end - i > rule.maxDigits) throw new LineProtocolError(line, 'timestamp out of range');
    const split = end - rule.subDigits;
    let hi = 0;
    let lo = 0;
    for (; i < end; i++) {
      const d = s.charCodeAt(i) - D0;
      if (i < split) hi = hi * 10 + d;
      else lo = lo * 10 + d;
    }
    if (hi > rule.maxHi || (hi === rule.maxHi && lo > rule.maxLo)) throw new LineProtocolError(line, 'timestamp out of range');
    const sub = rule.subDigits === 3 ? lo * 1000 : lo;
    const ms = rule === TIME_RULES.s ? hi * 1000 : hi;
    if (!negative) { this.ms = ms; this.subNs = sub; return; }
    // Floor semantics for negative times: -1 ns is 1 ms before 0 plus 999_999 ns. `+ 0` turns -0 into 0.
    this.ms = (sub === 0 ? -ms : -ms - 1) + 0;
    this.subNs = sub === 0 ? 0 : 1_000_000 - sub;
  }
}

/** s[start...] begins with `text` — a plain loop, measurably faster than startsWith for these short tokens. */
function sameText(s: string, start: number, text: string): boolean {
  for (let j = 0; j < text.length; j++) if (s.charCodeAt(start + j) !== text.charCodeAt(j)) return false;
  return true;
}

/** Removes the backslash of `\,` `\ ` and, outside measurement names, `\=`; any other backslash is literal. */
function unescapeToken(s: string, start: number, end: number, eqEscapes: boolean): string {
  let out = '';
  let from = start;
  for (let i = start; i < end - 1; i++) {
    if (s.charCodeAt(i) !== BACKSLASH) continue;
    const n = s.charCodeAt(i + 1);
    if (n === COMMA || n === SPACE || (eqEscapes && n === EQ)) {
      out += s.slice(from, i);
      from = i + 1;
      i++;
    }
  }
  return out + s.slice(from, end);
}

/** `-?digits` (signed) or `digits` (unsigned) in [start, end), checked against int64 / uint64. */
function parseInteger(s: string, start: number, end: number, signed: boolean, line: number, key: string): bigint {
  let i = start;
  if (signed && i < end && s.charCodeAt(i) === MINUS) i++;
  if (i === end) throw new LineProtocolError(line, `bad integer for field "${key}"`);
  for (let j = i; j < end; j++) {
    if (!isDigit(s.charCodeAt(j))) throw new LineProtocolError(line, `bad integer for field "${key}": ${s.slice(start, end + 1)}`);
  }
  const value = BigInt(s.slice(start, end));
  if (signed ? value < INT64_MIN || value > INT64_MAX : value > UINT64_MAX) {
    throw new LineProtocolError(line, `integer out of range for field "${key}"`);
  }
  return value;
}

/** `-?(digits)(.digits)?([eE][+-]?digits)?` with at least one mantissa digit — what InfluxDB accepts as a float. */
function isFloatSyntax(s: string, start: number, end: number): boolean {
  let i = start;
  if (s.charCodeAt(i) === MINUS) i++;
  let digits = 0;
  while (i < end && isDigit(s.charCodeAt(i))) { i++; digits++; }
  if (i < end && s.charCodeAt(i) === 46 /* . */) {
    i++;
    while (i < end && isDigit(s.charCodeAt(i))) { i++; digits++; }
  }
  if (digits === 0) return false;
  if (i < end && (s.charCodeAt(i) === 101 || s.charCodeAt(i) === 69) /* e E */) {
    i++;
    if (i < end && (s.charCodeAt(i) === 43 || s.charCodeAt(i) === MINUS)) i++;
    const expStart = i;
    while (i < end && isDigit(s.charCodeAt(i))) i++;
    if (i === expStart) return false;
  }
  return i === end;
}
