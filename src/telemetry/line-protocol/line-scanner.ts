// The InfluxDB line-protocol scanner (docs/api.md#telemetry-write): `measurement[,tag=v...] field=v[,field=v...] [timestamp]`.
// One reusable scanner per body fills plain arrays instead of building objects, so ingest of a million points allocates
// almost nothing per line. The ingest path (ingest.ts) consumes it directly; parseLineProtocol (line-protocol.ts)
// builds ParsedPoint objects from it for everyone else. Both therefore accept exactly the same language.
//
// A line is scanned in three steps, and the caller decides how far to go:
// - nextLine(): finds the next line that is not blank or a comment, and its *series section* (measurement and tags,
//   up to the first unescaped space). The same section text always parses to the same series, so a caller that has
//   seen this exact text before may skip the next step;
// - parseSeries(): measurement and tags, validated (nodeId present, no duplicates, no empty keys or values);
// - parseFields(): fields and timestamp, validated.
//
// Decisions (ours):
// - Time is `timeMs` (floor of the instant in ms, also for negative times) plus `subMsNs` (0..999_999 ns past it), so
//   ns timestamps round-trip exactly without a bigint per point.
// - A duplicate tag key or field key on one line is an error: the series identity or the value would be ambiguous.
// - Integers (`12i`, `12u`) must fit int64 / uint64; up to 15 digits they are kept as numbers (exact), longer ones as
//   bigint. Floats must be finite (no NaN/Inf).
// - String field values may not contain a raw newline (InfluxDB documents the same); escapes are `\"` and `\\`.
// - Escapes: measurement `\,` `\ `; tag keys, tag values and field keys also `\=`. Any other backslash is literal.

import {
  BACKSLASH, COMMA, CR, D0, DOT, EQ, HASH, MINUS, POW10, QUOTE, SAFE_DIGITS, SPACE,
  hasBackslash, isBlank, isDigit, parseFloatToken, sameText, unescapeToken,
} from './line-text.ts';

export { parseFloatToken } from './line-text.ts';

/** m and h only reach the scanner through the InfluxDB 1.x door (POST /write). */
export type Precision = 'ns' | 'us' | 'ms' | 's' | 'm' | 'h';

/** Field kinds as small integers (the scanner's arrays hold these); FIELD_TYPES names them. */
export const FLOAT = 0;
export const INTEGER = 1;
export const UNSIGNED = 2;
export const STRING = 3;
export const BOOLEAN = 4;
export type FieldKind = 0 | 1 | 2 | 3 | 4;
export const FIELD_TYPES = ['float', 'integer', 'unsigned', 'string', 'boolean'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

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


export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

// InfluxDB's valid time range is ±(2^63 - 2) ns. Per precision: how many trailing digits are sub-ms, the most digits a
// timestamp can have, and the largest magnitude split as (ms part, sub-ms part).
const MAX_MS = 9223372036854;
interface TimeRule { subDigits: number; maxDigits: number; maxHi: number; maxLo: number; unitMs: number }
const TIME_RULES: Record<Precision, TimeRule> = {
  ns: { subDigits: 6, maxDigits: 19, maxHi: MAX_MS, maxLo: 775806, unitMs: 1 },
  us: { subDigits: 3, maxDigits: 16, maxHi: MAX_MS, maxLo: 775, unitMs: 1 },
  ms: { subDigits: 0, maxDigits: 13, maxHi: MAX_MS, maxLo: 0, unitMs: 1 },
  s: { subDigits: 0, maxDigits: 10, maxHi: 9223372036, maxLo: 0, unitMs: 1000 },
  m: { subDigits: 0, maxDigits: 9, maxHi: 153722867, maxLo: 0, unitMs: 60_000 },
  h: { subDigits: 0, maxDigits: 7, maxHi: 2562047, maxLo: 0, unitMs: 3_600_000 },
};

const BOOLEANS = new Map<string, boolean>([
  ['t', true], ['T', true], ['true', true], ['True', true], ['TRUE', true],
  ['f', false], ['F', false], ['false', false], ['False', false], ['FALSE', false],
]);

/**
 * InfluxDB's limit on a series key (measurement and tags as written), and on a series key with `#!~#` and a field name
 * (docs/api.md#telemetry-limits). Both backends store what fits, and refuse the rest alike.
 */
export const MAX_KEY_BYTES = 65_535;
/** tags on one line beyond which duplicates are found through a set */
const MANY_TAGS = 32;
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;

export class LineScanner {
  /** 1-based number of the current line (blank lines and comments count). */
  line = 0;
  /** The current line is s[start, end) without its line break; its series section is s[start, seriesEnd). */
  start = 0;
  end = 0;
  seriesEnd = 0;
  /** 30-bit hash of the series section's text (a small integer: cheap as a Map key) */
  seriesHash = 0;

  measurement = '';
  tagCount = 0;
  readonly tagKeys: string[] = [];
  readonly tagValues: string[] = [];

  fieldCount = 0;
  readonly fieldKeys: string[] = [];
  readonly fieldKinds: FieldKind[] = [];
  /** float value; integer/unsigned value when it has at most 15 digits; boolean as 1/0 */
  readonly fieldNumbers: number[] = [];
  /** string value; integer/unsigned value as bigint when longer than 15 digits; otherwise undefined */
  readonly fieldValues: Array<string | bigint | undefined> = [];

  timeMs = 0;
  subMsNs = 0;

  private pos = 0;
  private cursor = 0;
  private escaped = false;
  private readonly rule: TimeRule;
  private readonly nowMs: number;
  // Consecutive lines mostly repeat the previous line's measurement and keys: reusing those strings (compared in place,
  // no slice) saves an allocation per token and lets the engine skip re-hashing them as map keys.
  private readonly prevMeasurement: string[] = [];
  /** whether fieldKeys[k] was read from text without backslashes (then the key fast path may compare against it) */
  private readonly plainFieldKey: boolean[] = [];

  /** the piece of the body being scanned (the current line lies in it), and the pieces after it */
  private s: string;
  private readonly pieces: readonly string[];
  private piece = 0;

  /**
   * `body` is the text, whole or in pieces that each end at a line break (decodeUtf8Lines): lines are numbered across
   * pieces as in their concatenation.
   */
  constructor(body: string | readonly string[], opts: ParseOptions) {
    this.pieces = typeof body === 'string' ? [body] : body;
    this.s = this.pieces[0] ?? '';
    const rule = TIME_RULES[opts.precision];
    if (rule === undefined) throw new Error(`unknown precision ${String(opts.precision)}`);
    this.rule = rule;
    this.nowMs = opts.nowMs;
  }

  /** Moves to the next line holding a point; false at the end of the body. Blank lines and `#` comments are skipped. */
  nextLine(): boolean {
    for (;;) {
      if (this.scanLine()) return true;
      if (this.piece + 1 >= this.pieces.length) return false;
      this.s = this.pieces[++this.piece];
      this.pos = 0;
    }
  }

  /** nextLine within the current piece. */
  private scanLine(): boolean {
    const s = this.s;
    const len = s.length;
    while (this.pos < len) {
      this.line++;
      const nl = s.indexOf('\n', this.pos);
      const lineEnd = nl === -1 ? len : nl;
      let end = lineEnd;
      if (end > this.pos && s.charCodeAt(end - 1) === CR) end--;
      let i = this.pos;
      while (i < end && isBlank(s.charCodeAt(i))) i++;
      this.pos = lineEnd + 1;
      if (i === end || s.charCodeAt(i) === HASH) continue;
      this.start = i;
      this.end = end;
      // The series section ends at the first space not escaped by a backslash (see scanToken for the escape rule).
      // Its text is hashed on the way (FNV-1a), so callers can look it up without slicing it out.
      let h = FNV_OFFSET;
      while (i < end) {
        const c = s.charCodeAt(i);
        if (c === SPACE) break;
        h = Math.imul(h ^ c, FNV_PRIME);
        if (c === BACKSLASH && i + 1 < end && s.charCodeAt(i + 1) === SPACE) { h = Math.imul(h ^ SPACE, FNV_PRIME); i += 2; } else i++;
      }
      this.seriesEnd = i;
      this.seriesHash = h & 0x3fffffff;
      return true;
    }
    return false;
  }

  /** The series section of the current line as text: equal text means the same measurement and tags. */
  seriesText(): string {
    return this.s.slice(this.start, this.seriesEnd);
  }

  /** Whether the series section of the current line is exactly `text` (compared in place). */
  seriesTextIs(text: string): boolean {
    return text.length === this.seriesEnd - this.start && sameText(this.s, this.start, text);
  }

  /** Measurement and tags of the current line; throws LineProtocolError. */
  parseSeries(): void {
    const s = this.s;
    const { start, end, line } = this;
    const stop = this.seriesEnd;
    const keyBytes = this.seriesKeyBytes();
    if (keyBytes > MAX_KEY_BYTES) throw new LineProtocolError(line, `max key length exceeded: ${keyBytes} > ${MAX_KEY_BYTES}`);
    // duplicate tag keys: compared pairwise while few, through a set beyond that (a line may carry thousands)
    let seenKeys: Set<string> | undefined;
    // Measurement: ends at an unescaped comma (tags follow) or the end of the section.
    this.scanToken(start, stop, false);
    if (this.cursor === start) throw new LineProtocolError(line, 'missing measurement');
    this.measurement = this.text(this.prevMeasurement, 0, start, this.cursor, false);
    let i = this.cursor;
    let k = 0;
    while (i < stop && s.charCodeAt(i) === COMMA) {
      const keyStart = i + 1;
      this.scanToken(keyStart, stop, true);
      if (this.cursor === keyStart) throw new LineProtocolError(line, 'empty tag key');
      if (this.cursor >= stop || s.charCodeAt(this.cursor) !== EQ) throw new LineProtocolError(line, 'tag without "=" (expected key=value)');
      const key = this.text(this.tagKeys, k, keyStart, this.cursor, true);
      const valueStart = this.cursor + 1;
      this.scanToken(valueStart, stop, true);
      if (this.cursor === valueStart) throw new LineProtocolError(line, `empty value for tag "${key}"`);
      if (this.cursor < stop && s.charCodeAt(this.cursor) === EQ) throw new LineProtocolError(line, `unescaped "=" in the value of tag "${key}"`);
      if (k === MANY_TAGS) seenKeys = new Set(this.tagKeys.slice(0, k));
      if (seenKeys === undefined) {
        for (let j = 0; j < k; j++) if (this.tagKeys[j] === key) throw new LineProtocolError(line, `duplicate tag "${key}"`);
      } else {
        if (seenKeys.has(key)) throw new LineProtocolError(line, `duplicate tag "${key}"`);
        seenKeys.add(key);
      }
      this.text(this.tagValues, k, valueStart, this.cursor, true);
      k++;
      i = this.cursor;
    }
    this.tagCount = k;
    if (stop >= end) throw new LineProtocolError(line, 'no fields');
    let hasNodeId = false;
    for (let j = 0; j < k; j++) if (this.tagKeys[j] === 'nodeId') { hasNodeId = true; break; }
    if (!hasNodeId) throw new LineProtocolError(line, 'missing nodeId tag');
  }

  /** UTF-8 bytes of the current line's series section (measurement and tags as written). */
  seriesKeyBytes(): number {
    const chars = this.seriesEnd - this.start;
    // at most 3 bytes per UTF-16 unit: only a long section needs counting
    return chars * 3 <= MAX_KEY_BYTES ? chars : Buffer.byteLength(this.seriesText());
  }

  /** The value of tag `key` on the current line (after parseSeries), or undefined. */
  tag(key: string): string | undefined {
    for (let j = 0; j < this.tagCount; j++) if (this.tagKeys[j] === key) return this.tagValues[j];
    return undefined;
  }

  /** Fields and timestamp of the current line; throws LineProtocolError. */
  parseFields(): void {
    const s = this.s;
    const { end, line } = this;
    let i = this.seriesEnd;
    while (i < end && s.charCodeAt(i) === SPACE) i++;
    if (i >= end) throw new LineProtocolError(line, 'no fields');
    let k = 0;
    // While every key so far is the previous line's key at the same position, no two can be equal (that line's
    // keys were checked): the duplicate check is only needed once a key is read the long way, or past the previous
    // line's last key (slots beyond it hold older lines' keys).
    const previousCount = this.fieldCount;
    let reused = true;
    for (;;) {
      const keyStart = i;
      let key: string;
      // Fast path: the previous line's key at this position, followed by `=`. Only keys without special characters
      // qualify, so the text matched is exactly what the token scan would have read.
      const prev = this.fieldKeys[k];
      const after = keyStart + (prev === undefined ? 0 : prev.length);
      if (prev !== undefined && this.plainFieldKey[k] && after < end && s.charCodeAt(after) === EQ && sameText(s, keyStart, prev)) {
        key = prev;
        this.cursor = after;
        if (k >= previousCount) reused = false;
      } else {
        this.scanToken(keyStart, end, true);
        if (this.cursor === keyStart) throw new LineProtocolError(line, 'empty field key');
        if (this.cursor >= end || s.charCodeAt(this.cursor) !== EQ) throw new LineProtocolError(line, 'field without "=" (expected key=value)');
        key = this.text(this.fieldKeys, k, keyStart, this.cursor, true);
        this.plainFieldKey[k] = !this.escaped && !hasBackslash(s, keyStart, this.cursor);
        reused = false;
      }
      if (!reused) for (let j = 0; j < k; j++) if (this.fieldKeys[j] === key) throw new LineProtocolError(line, `duplicate field "${key}"`);
      // InfluxDB's storage key is the series key, `#!~#` and the field name: 65,535 bytes at most
      if ((this.seriesEnd - this.start + 4 + key.length) * 3 > MAX_KEY_BYTES) {
        const bytes = this.seriesKeyBytes() + 4 + Buffer.byteLength(key);
        if (bytes > MAX_KEY_BYTES) throw new LineProtocolError(line, `max key length exceeded: ${bytes} > ${MAX_KEY_BYTES} (field "${key.length > 64 ? `${key.slice(0, 64)}…` : key}")`);
      }
      if (!this.parseNumberFast(this.cursor + 1, k)) this.parseFieldValue(this.cursor + 1, k, key);
      k++;
      i = this.cursor;
      if (i < end && s.charCodeAt(i) === COMMA) { i++; continue; }
      break;
    }
    this.fieldCount = k;

    // Optional timestamp, then nothing but blanks.
    while (i < end && isBlank(s.charCodeAt(i))) i++;
    if (i === end) { this.timeMs = this.nowMs; this.subMsNs = 0; return; }
    const tsStart = i;
    while (i < end && !isBlank(s.charCodeAt(i))) i++;
    const tsEnd = i;
    while (i < end && isBlank(s.charCodeAt(i))) i++;
    if (i < end) throw new LineProtocolError(line, 'unexpected text after the timestamp');
    this.parseTimestamp(tsStart, tsEnd);
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

  /**
   * The token [start, end) just scanned, unescaped, stored in slot k of `slots` and returned. When the slot already
   * holds the same text (the previous line's token) that string is kept. An unescaped token always contains a special
   * character that raw unescaped text cannot, so comparing a slot against raw text never confuses the two.
   */
  private text(slots: string[], k: number, start: number, end: number, eqEscapes: boolean): string {
    if (this.escaped) return (slots[k] = unescapeToken(this.s, start, end, eqEscapes));
    const prev = slots[k];
    if (prev !== undefined && prev.length === end - start && sameText(this.s, start, prev)) return prev;
    return (slots[k] = this.s.slice(start, end));
  }

  /**
   * The common field values in one pass: `-?digits[.digits][e[+-]digits]` (float) or `-?digits` + `i` / `digits` + `u`
   * (integer) followed by `,`, a space or the end of the line. Returns false for anything else, which parseFieldValue
   * then reads (and reports) the general way.
   */
  private parseNumberFast(start: number, k: number): boolean {
    const s = this.s;
    const end = this.end;
    let i = start;
    const negative = i < end && s.charCodeAt(i) === MINUS;
    if (negative) i++;
    let mantissa = 0;
    let digits = 0;
    let fraction = -1;
    for (; i < end; i++) {
      const d = s.charCodeAt(i) - D0;
      if (d >= 0 && d <= 9) { mantissa = mantissa * 10 + d; digits++; if (fraction >= 0) fraction++; continue; }
      if (d === DOT - D0 && fraction < 0) { fraction = 0; continue; }
      break;
    }
    if (digits === 0 || digits > SAFE_DIGITS) return false;
    const c = i < end ? s.charCodeAt(i) : SPACE;
    if (c === COMMA || c === SPACE) {
      const f = fraction < 0 ? 0 : fraction;
      if (f > 22) return false;
      const value = f === 0 ? mantissa : mantissa / POW10[f];
      this.fieldKinds[k] = FLOAT;
      this.fieldNumbers[k] = negative ? -value : value;
      this.fieldValues[k] = undefined;
      this.cursor = i;
      return true;
    }
    if ((c === 105 /* i */ || (c === 117 /* u */ && !negative)) && fraction < 0) {
      const n = i + 1 < end ? s.charCodeAt(i + 1) : SPACE;
      if (n !== COMMA && n !== SPACE) return false;
      this.fieldKinds[k] = c === 105 ? INTEGER : UNSIGNED;
      this.fieldNumbers[k] = (negative ? -mantissa : mantissa) + 0;
      this.fieldValues[k] = undefined;
      this.cursor = i + 1;
      return true;
    }
    return false;
  }

  private parseFieldValue(start: number, k: number, key: string): void {
    const s = this.s;
    const { end, line } = this;
    if (start < end && s.charCodeAt(start) === QUOTE) { this.parseStringValue(start, k, key); return; }
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
      this.fieldKinds[k] = BOOLEAN;
      this.fieldNumbers[k] = b ? 1 : 0;
      this.fieldValues[k] = undefined;
      return;
    }
    const last = s.charCodeAt(i - 1);
    if (last === 105 /* i */ || last === 117 /* u */) { this.parseInteger(start, i - 1, last === 105, k, key); return; }
    const value = parseFloatToken(s, start, i);
    if (Number.isNaN(value)) throw new LineProtocolError(line, `bad value for field "${key}": ${s.slice(start, i)}`);
    if (!Number.isFinite(value)) throw new LineProtocolError(line, `float out of range for field "${key}"`);
    this.fieldKinds[k] = FLOAT;
    this.fieldNumbers[k] = value;
    this.fieldValues[k] = undefined;
  }

  /** `-?digits` (signed) or `digits` (unsigned) in [start, end), checked against int64 / uint64. */
  private parseInteger(start: number, end: number, signed: boolean, k: number, key: string): void {
    const s = this.s;
    let i = start;
    const negative = signed && i < end && s.charCodeAt(i) === MINUS;
    if (negative) i++;
    if (i === end) throw new LineProtocolError(this.line, `bad integer for field "${key}"`);
    let n = 0;
    for (let j = i; j < end; j++) {
      const d = s.charCodeAt(j) - D0;
      if (d < 0 || d > 9) throw new LineProtocolError(this.line, `bad integer for field "${key}": ${s.slice(start, end + 1)}`);
      n = n * 10 + d;
    }
    this.fieldKinds[k] = signed ? INTEGER : UNSIGNED;
    if (end - i <= SAFE_DIGITS) {
      // `+ 0` turns -0 into 0: an integer has no negative zero.
      this.fieldNumbers[k] = (negative ? -n : n) + 0;
      this.fieldValues[k] = undefined;
      return;
    }
    const value = BigInt(s.slice(start, end));
    if (signed ? value < INT64_MIN || value > INT64_MAX : value > UINT64_MAX) {
      throw new LineProtocolError(this.line, `integer out of range for field "${key}"`);
    }
    this.fieldNumbers[k] = 0;
    this.fieldValues[k] = value;
  }

  private parseStringValue(start: number, k: number, key: string): void {
    const s = this.s;
    const { end, line } = this;
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
    this.fieldKinds[k] = STRING;
    this.fieldNumbers[k] = 0;
    if (!hasEscape) { this.fieldValues[k] = s.slice(start + 1, close); return; }
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
    this.fieldValues[k] = out + s.slice(from, close);
  }

  /**
   * `-?digits` in the rule's precision → (timeMs, subMsNs). The digits are split into the ms part and the sub-ms part
   * while scanning, so both stay below 2^53 and no bigint is needed.
   */
  private parseTimestamp(start: number, end: number): void {
    const s = this.s;
    const { rule, line } = this;
    let i = start;
    const negative = s.charCodeAt(i) === MINUS;
    if (negative) i++;
    if (i === end) throw new LineProtocolError(line, 'bad timestamp');
    while (i < end - 1 && s.charCodeAt(i) === D0) i++; // leading zeros do not count towards the digit limit
    if (end - i > rule.maxDigits) {
      for (let j = i; j < end; j++) if (!isDigit(s.charCodeAt(j))) throw new LineProtocolError(line, `bad timestamp: ${s.slice(start, end)}`);
      throw new LineProtocolError(line, 'timestamp out of range');
    }
    const split = end - rule.subDigits;
    let hi = 0;
    let lo = 0;
    for (; i < end; i++) {
      const d = s.charCodeAt(i) - D0;
      if (d < 0 || d > 9) throw new LineProtocolError(line, `bad timestamp: ${s.slice(start, end)}`);
      if (i < split) hi = hi * 10 + d;
      else lo = lo * 10 + d;
    }
    if (hi > rule.maxHi || (hi === rule.maxHi && lo > rule.maxLo)) throw new LineProtocolError(line, 'timestamp out of range');
    const sub = rule.subDigits === 3 ? lo * 1000 : lo;
    const ms = hi * rule.unitMs;
    if (!negative) { this.timeMs = ms; this.subMsNs = sub; return; }
    // Floor semantics for negative times: -1 ns is 1 ms before 0 plus 999_999 ns. `+ 0` turns -0 into 0.
    this.timeMs = (sub === 0 ? -ms : -ms - 1) + 0;
    this.subMsNs = sub === 0 ? 0 : 1_000_000 - sub;
  }
}
