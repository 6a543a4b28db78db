// Chunked answers of GET|POST /query (`chunked=true`, `chunk_size=N`), cut as InfluxDB 1.6 cuts them: one JSON
// object a line, `{"results":[one result]}`.
// - SELECT, SHOW FIELD KEYS and SHOW SERIES pass through its row emitter: one line per series, a series of more than
//   N rows split into lines of N, each but its last marked `"partial": true`; the result is marked partial on every
//   line of the statement but its last.
// - SHOW TAG KEYS and SHOW TAG VALUES: one line per series (measurement), never split, never marked.
// - Other SHOWs, errors and empty results: one line.
// The engine's answer is re-cut without parsing its values (raw-json.ts), keys in the order Go writes them.
import type { Statement } from '../influxql/ast.ts';
import { elements, indentJson, MalformedJson, members, skipSpace, valueEnd, Walk, type Span } from './raw-json.ts';

/** InfluxDB's chunk size when chunk_size is missing or not a positive integer. */
export const DEFAULT_CHUNK_SIZE = 10_000;
const MAX_INT64 = 9223372036854775807n;

/** chunk_size as InfluxDB reads it (strconv.ParseInt, base 10): a positive int64, anything else the default. */
export function chunkSizeOf(value: string | null): number {
  if (value === null || !/^[+-]?\d+$/.test(value)) return DEFAULT_CHUNK_SIZE;
  const n = BigInt(value);
  return n > 0n && n <= MAX_INT64 ? Number(n) : DEFAULT_CHUNK_SIZE;
}

/** How a statement's result is cut into lines (see above). */
export type Cut = 'rows' | 'series' | 'whole';

export function cutOf(stmt: Statement | undefined): Cut {
  if (stmt?.kind === 'select') return 'rows';
  if (stmt?.kind !== 'show') return 'whole';
  if (stmt.what === 'field keys' || stmt.what === 'series') return 'rows';
  return stmt.what === 'tag keys' || stmt.what === 'tag values' ? 'series' : 'whole';
}

/**
 * The lines of the answer `text` (`{"results":[…]}` as the engine writes it), each with its newline, made one at a
 * time as they are asked for, in one pass over the text. Malformed text throws at the line it would spoil.
 */
export function* answerLines(text: string, cuts: readonly Cut[], size: number, pretty = false): Generator<string> {
  const finish = (line: string) => `${goEscape(pretty ? indentJson(line) : line)}\n`;
  const start = skipSpace(text, 0);
  const { walk, first } = Walk.object(text, start);
  let results = false;
  for (let i = first; i >= 0;) {
    const { key, value } = walk.key(i);
    let end: number;
    if (key === 'results') {
      results = true;
      const list = Walk.array(text, value);
      for (let j = list.first; j >= 0;) j = list.walk.next(yield* resultLines(text, j, cuts, size, finish));
      end = list.walk.after;
    } else {
      end = valueEnd(text, value);
    }
    i = walk.next(end);
  }
  if (skipSpace(text, walk.after) !== text.length) throw new MalformedJson(walk.after, 'text after the value');
  if (!results) yield finish(text.slice(start, walk.after));
}

/** The lines of the result object at `at`; returns the index past it. */
function* resultLines(text: string, at: number, cuts: readonly Cut[], size: number, finish: (line: string) => string): Generator<string, number> {
  const { walk, first } = Walk.object(text, at);
  let id: string | undefined;
  let error: string | undefined;
  // messages (none today) go with the statement's first line
  let messages: string | undefined;
  let cut: Cut = 'whole';
  let kept: Span | undefined;
  // a line waits for the next: only then is it known not to be the statement's last
  let pending: string | undefined;
  let lines = 0;
  const line = (series: string | undefined, partial: boolean) => {
    const out = finish(resultJson(id!, series === undefined ? [] : [series], messages, partial && cut === 'rows', undefined));
    messages = undefined;
    lines++;
    return out;
  };
  for (let i = first; i >= 0;) {
    const { key, value } = walk.key(i);
    let end: number;
    // the engine writes statement_id first: without it the statement is one line
    if (key === 'series' && id !== undefined && error === undefined && (cut = cuts[Number(id)] ?? 'whole') !== 'whole') {
      const list = Walk.array(text, value);
      for (let j = list.first; j >= 0;) {
        const series = cut === 'rows' ? seriesChunks(text, j, size) : oneSeries(text, j);
        let next = series.next();
        for (; !next.done; next = series.next()) {
          if (pending !== undefined) yield line(pending, true);
          pending = next.value;
        }
        j = list.walk.next(next.value);
      }
      end = list.walk.after;
    } else {
      end = valueEnd(text, value);
      const raw = text.slice(value, end);
      if (key === 'statement_id') id = raw;
      else if (key === 'error') error = raw;
      else if (key === 'messages') messages = raw;
      else if (key === 'series') kept = { start: value, end };
    }
    i = walk.next(end);
  }
  id ??= '0';
  if (cut !== 'whole' && error === undefined && kept === undefined) {
    if (pending !== undefined || lines === 0) yield line(pending, false);
    return walk.after;
  }
  const series = kept === undefined ? [] : [...elements(text, kept)].map((s) => seriesJson(rawMembers(text, s), undefined, false));
  yield finish(resultJson(id, series, messages, false, error));
  return walk.after;
}

/** A series of SHOW TAG KEYS | TAG VALUES: one line, whole. Returns the index past it. */
function* oneSeries(text: string, at: number): Generator<string, number> {
  const end = valueEnd(text, at);
  yield seriesJson(rawMembers(text, { start: at, end }), undefined, false);
  return end;
}

/**
 * A series in chunks of `size` rows, all but the last marked partial. The rows are read as they come when the
 * engine's order holds (values after columns); else the values are read once more. Returns the index past it.
 */
function* seriesChunks(text: string, at: number, size: number): Generator<string, number> {
  const { walk, first } = Walk.object(text, at);
  const raw = new Map<string, string>();
  let last: string | undefined;
  let valuesAt = -1;
  for (let i = first; i >= 0;) {
    const { key, value } = walk.key(i);
    let end: number;
    if (key === 'values' && raw.has('columns')) {
      end = yield* runsOf(text, value, size, (run) => seriesJson(raw, run, true), (run) => { last = run; });
    } else {
      end = valueEnd(text, value);
      if (key === 'values') valuesAt = value;
      else raw.set(key, text.slice(value, end));
    }
    i = walk.next(end);
  }
  if (valuesAt >= 0) yield* runsOf(text, valuesAt, size, (run) => seriesJson(raw, run, true), (run) => { last = run; });
  yield seriesJson(raw, last, false);
  return walk.after;
}

/**
 * The rows of the array at `at` in runs of `size`, each copied as one slice of the text: every run but the last is
 * yielded as `partial(run)`, the last handed to `keep`. Returns the index past the array.
 */
function* runsOf(text: string, at: number, size: number, partial: (run: string) => string, keep: (run: string | undefined) => void): Generator<string, number> {
  const { walk, first } = Walk.array(text, at);
  let start = -1;
  let end = -1;
  let count = 0;
  for (let j = first; j >= 0;) {
    const rowEnd = valueEnd(text, j);
    if (count === size) {
      yield partial(`[${text.slice(start, end)}]`);
      count = 0;
    }
    if (count === 0) start = j;
    end = rowEnd;
    count++;
    j = walk.next(rowEnd);
  }
  keep(count === 0 ? undefined : `[${text.slice(start, end)}]`);
  return walk.after;
}

/** The members of the object `span` as raw text. */
function rawMembers(text: string, span: Span): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, s] of members(text, span)) out.set(key, text.slice(s.start, s.end));
  return out;
}

/**
 * A series as Go writes models.Row: name, tags (keys sorted), columns, values, partial, each left out when empty.
 * `values`: this line's rows (an array's text), or undefined for the series' own.
 */
function seriesJson(raw: Map<string, string>, values: string | undefined, partial: boolean): string {
  const head = seriesHead(raw);
  const parts = head === '' ? [] : [head];
  const rows = values ?? raw.get('values');
  if (rows !== undefined && rows !== '[]') parts.push(`"values":${rows}`);
  if (partial) parts.push('"partial":true');
  return `{${parts.join(',')}}`;
}

/** name, tags and columns of a series, made once per series (its lines repeat them). */
const heads = new WeakMap<Map<string, string>, string>();
function seriesHead(raw: Map<string, string>): string {
  const known = heads.get(raw);
  if (known !== undefined) return known;
  const parts: string[] = [];
  const name = raw.get('name');
  if (name !== undefined && name !== '""') parts.push(`"name":${name}`);
  const tags = raw.get('tags');
  const sorted = tags === undefined ? '{}' : sortedTags(tags);
  if (sorted !== '{}') parts.push(`"tags":${sorted}`);
  const columns = raw.get('columns');
  if (columns !== undefined && columns !== '[]') parts.push(`"columns":${columns}`);
  const head = parts.join(',');
  heads.set(raw, head);
  return head;
}

/** A tag set with its keys in Go's map order (sorted); tags are strings, so parsing loses nothing. */
function sortedTags(tags: string): string {
  const parsed = JSON.parse(tags) as Record<string, unknown>;
  const keys = Object.keys(parsed).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(parsed[k])}`).join(',')}}`;
}

/** One line's object, keys in the order of Go's query.Result: statement_id, series, messages, partial, error. */
function resultJson(id: string, series: string[], messages: string | undefined, partial: boolean, error: string | undefined): string {
  let out = `{"statement_id":${id}`;
  if (series.length > 0) out += `,"series":[${series.join(',')}]`;
  if (messages !== undefined && messages !== '[]') out += `,"messages":${messages}`;
  if (partial) out += ',"partial":true';
  if (error !== undefined && error !== '""') out += `,"error":${error}`;
  return `{"results":[${out}}]}`;
}

const HTML_UNSAFE = /[<>&\u2028\u2029]/;
const HTML_UNSAFE_ALL = /[<>&\u2028\u2029]/g;

/**
 * Go's encoding/json writes <, >, & and U+2028/U+2029 as \u escapes. They can stand only inside strings in JSON text,
 * so the whole line is rewritten.
 */
export function goEscape(line: string): string {
  if (!HTML_UNSAFE.test(line)) return line;
  return line.replace(HTML_UNSAFE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
