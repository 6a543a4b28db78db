// Character-level helpers of the line-protocol scanner (line-scanner.ts): character codes, token comparison and
// unescaping, and the exact float fast path.

export const CR = 13, SPACE = 32, TAB = 9, HASH = 35, COMMA = 44, EQ = 61, QUOTE = 34, BACKSLASH = 92, MINUS = 45, DOT = 46;
export const D0 = 48, D9 = 57;

/** 10^0 .. 10^22: every one is exact in a double, which makes the float fast path below exact. */
export const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/** Integers of at most this many digits are below 2^53 and kept as exact numbers. */
export const SAFE_DIGITS = 15;

export function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

export function isDigit(c: number): boolean {
  return c >= D0 && c <= D9;
}

/**
 * `-?(digits)(.digits)?([eE][+-]?digits)?` with at least one mantissa digit — what InfluxDB accepts as a float — or
 * NaN when the text is not one. Up to 15 mantissa digits and a decimal exponent within ±22, the value is one exact
 * integer multiplied or divided by one exact power of ten: a single correctly rounded operation, so the result equals
 * Number(text) (Clinger's fast path) without slicing a string. Anything longer goes through Number().
 */
export function parseFloatToken(s: string, start: number, end: number): number {
  let i = start;
  const negative = s.charCodeAt(i) === MINUS;
  if (negative) i++;
  let mantissa = 0;
  let digits = 0;
  let fraction = 0;
  for (; i < end; i++) {
    const d = s.charCodeAt(i) - D0;
    if (d < 0 || d > 9) break;
    mantissa = mantissa * 10 + d;
    digits++;
  }
  if (i < end && s.charCodeAt(i) === DOT) {
    for (i++; i < end; i++) {
      const d = s.charCodeAt(i) - D0;
      if (d < 0 || d > 9) break;
      mantissa = mantissa * 10 + d;
      digits++;
      fraction++;
    }
  }
  if (digits === 0) return NaN;
  let exponent = 0;
  if (i < end && (s.charCodeAt(i) | 32) === 101 /* e E */) {
    i++;
    let expNegative = false;
    const sign = s.charCodeAt(i);
    if (i < end && (sign === 43 /* + */ || sign === MINUS)) { expNegative = sign === MINUS; i++; }
    const expStart = i;
    for (; i < end; i++) {
      const d = s.charCodeAt(i) - D0;
      if (d < 0 || d > 9) break;
      if (exponent < 100_000) exponent = exponent * 10 + d;
    }
    if (i === expStart) return NaN;
    if (expNegative) exponent = -exponent;
  }
  if (i !== end) return NaN;
  if (digits <= SAFE_DIGITS) {
    const p = exponent - fraction;
    let value: number | undefined;
    if (p === 0) value = mantissa;
    else if (p > 0 && p <= 22) value = mantissa * POW10[p];
    else if (p < 0 && p >= -22) value = mantissa / POW10[-p];
    if (value !== undefined) return negative ? -value : value;
  }
  return Number(s.slice(start, end));
}

export function hasBackslash(s: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (s.charCodeAt(i) === BACKSLASH) return true;
  return false;
}

/** s[start...] begins with `text` — a plain loop, measurably faster than startsWith for these short tokens. */
export function sameText(s: string, start: number, text: string): boolean {
  for (let j = 0; j < text.length; j++) if (s.charCodeAt(start + j) !== text.charCodeAt(j)) return false;
  return true;
}

/** Removes the backslash of `\,` `\ ` and, outside measurement names, `\=`; any other backslash is literal. */
export function unescapeToken(s: string, start: number, end: number, eqEscapes: boolean): string {
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
