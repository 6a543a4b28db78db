// Walks JSON text without parsing it: where values, object members and array elements begin and end. The InfluxDB
// door re-cuts its answers (chunked.ts) with it, so the numbers keep their digits (epoch=ns times above 2^53 would
// lose their last ones through JSON.parse). The input is JSON this program wrote: its structure is checked (brackets,
// commas, keys), not every literal nested in it.

/** [start, end) of a value in the text. */
export interface Span {
  start: number;
  end: number;
}

export class MalformedJson extends Error {
  constructor(at: number, what: string) {
    super(`malformed JSON at ${at}: ${what}`);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index after the string that opens at `i` (its quote). */
function stringEnd(text: string, i: number): number {
  for (let from = i + 1; ;) {
    const q = text.indexOf('"', from);
    if (q < 0) throw new MalformedJson(i, 'unterminated string');
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The index after the value that starts at `i` (no space before it). */
export function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    // brackets are counted, strings skipped whole; a closing bracket of the other kind is refused
    const open: number[] = [];
    for (let j = i; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === QUOTE) j = stringEnd(text, j) - 1;
      else if (d === OPEN_OBJECT || d === OPEN_ARRAY) open.push(d);
      else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
        if (open.pop() !== (d === CLOSE_OBJECT ? OPEN_OBJECT : OPEN_ARRAY)) throw new MalformedJson(j, 'mismatched bracket');
        if (open.length === 0) return j + 1;
      }
    }
    throw new MalformedJson(i, 'unterminated value');
  }
  // a number, true, false or null: up to the next delimiter
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === COMMA || d === CLOSE_ARRAY || d === CLOSE_OBJECT || d === COLON || isSpace(d)) break;
    j++;
  }
  if (j === i || !/^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/.test(text.slice(i, j))) throw new MalformedJson(i, 'not a value');
  return j;
}

/** The elements of the array `span`, in order. */
export function* elements(text: string, span: Span): Generator<Span> {
  if (text.charCodeAt(span.start) !== OPEN_ARRAY) throw new MalformedJson(span.start, 'expected an array');
  let i = skipSpace(text, span.start + 1);
  if (text.charCodeAt(i) === CLOSE_ARRAY) return;
  for (;;) {
    const end = valueEnd(text, i);
    yield { start: i, end };
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_ARRAY) return;
    if (c !== COMMA) throw new MalformedJson(i, 'expected , or ]');
    i = skipSpace(text, i + 1);
  }
}

/** The members of the object `span`: key -> value span (a repeated key: the last counts, as in JSON.parse). */
export function members(text: string, span: Span): Map<string, Span> {
  if (text.charCodeAt(span.start) !== OPEN_OBJECT) throw new MalformedJson(span.start, 'expected an object');
  const out = new Map<string, Span>();
  let i = skipSpace(text, span.start + 1);
  if (text.charCodeAt(i) === CLOSE_OBJECT) return out;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) throw new MalformedJson(i, 'expected a key');
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) throw new MalformedJson(i, 'expected :');
    const start = skipSpace(text, i + 1);
    const end = valueEnd(text, start);
    out.set(key, { start, end });
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_OBJECT) return out;
    if (c !== COMMA) throw new MalformedJson(i, 'expected , or }');
    i = skipSpace(text, i + 1);
  }
}

/** The whole text as one value's span (space around it allowed). */
export function wholeSpan(text: string): Span {
  const start = skipSpace(text, 0);
  const end = valueEnd(text, start);
  if (skipSpace(text, end) !== text.length) throw new MalformedJson(end, 'text after the value');
  return { start, end };
}

/**
 * The text re-indented as Go's json.MarshalIndent(v, "", indent) writes it: one member or element a line, `": "`
 * after keys, `[]` and `{}` when empty. Strings and numbers are copied as they are.
 */
export function indentJson(text: string, indent = '    '): string {
  const out: string[] = [];
  let depth = 0;
  const newline = () => `\n${indent.repeat(depth)}`;
  for (let i = skipSpace(text, 0); i < text.length; i = skipSpace(text, i)) {
    const c = text.charCodeAt(i);
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const close = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      const next = skipSpace(text, i + 1);
      if (text.charCodeAt(next) === close) {
        out.push(c === OPEN_OBJECT ? '{}' : '[]');
        i = next + 1;
        continue;
      }
      depth++;
      out.push(text[i], newline());
      i = next;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      out.push(newline(), text[i]);
      i++;
    } else if (c === COMMA) {
      out.push(',', newline());
      i++;
    } else if (c === COLON) {
      out.push(': ');
      i++;
    } else {
      const end = valueEnd(text, i);
      out.push(text.slice(i, end));
      i = end;
    }
  }
  return out.join('');
}

/**
 * One pass over a container, for readers that descend as they go (chunked.ts): `open` takes the bracket at `i` and
 * returns where the first member or element starts (-1: the container is empty, `after` then holds the index past
 * it); `next` takes the index past a member's or element's value and returns where the next one starts (-1: that was
 * the last). `key` reads a member's key and returns where its value starts.
 */
export class Walk {
  /** the index past the container once `open` or `next` returned -1 */
  after = -1;

  constructor(private readonly text: string, private readonly close: number) {}

  static object(text: string, i: number): { walk: Walk; first: number } {
    return Walk.begin(text, i, OPEN_OBJECT, CLOSE_OBJECT);
  }

  static array(text: string, i: number): { walk: Walk; first: number } {
    return Walk.begin(text, i, OPEN_ARRAY, CLOSE_ARRAY);
  }

  private static begin(text: string, i: number, open: number, close: number): { walk: Walk; first: number } {
    if (text.charCodeAt(i) !== open) throw new MalformedJson(i, open === OPEN_OBJECT ? 'expected an object' : 'expected an array');
    const walk = new Walk(text, close);
    const first = skipSpace(text, i + 1);
    if (text.charCodeAt(first) !== close) return { walk, first };
    walk.after = first + 1;
    return { walk, first: -1 };
  }

  next(end: number): number {
    const i = skipSpace(this.text, end);
    const c = this.text.charCodeAt(i);
    if (c === this.close) {
      this.after = i + 1;
      return -1;
    }
    if (c !== COMMA) throw new MalformedJson(i, this.close === CLOSE_OBJECT ? 'expected , or }' : 'expected , or ]');
    return skipSpace(this.text, i + 1);
  }

  key(i: number): { key: string; value: number } {
    if (this.text.charCodeAt(i) !== QUOTE) throw new MalformedJson(i, 'expected a key');
    const end = stringEnd(this.text, i);
    const colon = skipSpace(this.text, end);
    if (this.text.charCodeAt(colon) !== COLON) throw new MalformedJson(colon, 'expected :');
    return { key: JSON.parse(this.text.slice(i, end)) as string, value: skipSpace(this.text, colon + 1) };
  }
}
