// Chunked answers of GET|POST /query (`chunked=true`, `chunk_size=N`), cut as InfluxDB 1.6 cuts them: one JSON
// object a line, `{"results":[one result]}`.
// - SELECT, SHOW FIELD KEYS and SHOW SERIES pass through its row emitter: one line per series, a series of more than
//   N rows split into lines of N, each but its last marked `"partial": true`; the result is marked partial on every
//   line of the statement but its last.
// - SHOW TAG KEYS and SHOW TAG VALUES: one line per series (measurement), never split, never marked.
// - Other SHOWs, errors and empty results: one line.
// The engine's answer is re-cut without parsing its values (raw-json.ts), keys in the order Go writes them.
import type { Statement } from '../influxql/ast.ts';
import { elements, indentJson, members, wholeSpan, type Span } from './raw-json.ts';

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
 * time as they are asked for. The results are delimited first: text malformed there throws here, before any line;
 * deeper, at the line it would spoil.
 */
export function answerLines(text: string, cuts: readonly Cut[], size: number, pretty = false): Iterator<string> {
  const root = members(text, wholeSpan(text));
  const results = root.get('results');
  const list = results === undefined ? [] : [...elements(text, results)];
  const finish = (line: string) => `${goEscape(pretty ? indentJson(line) : line)}\n`;
  function* lines(): Generator<string> {
    if (results === undefined) {
      yield finish(text.trim());
      return;
    }
    for (const r of list) for (const line of resultLines(text, members(text, r), cuts, size)) yield finish(line);
  }
  return lines();
}

function* resultLines(text: string, result: Map<string, Span>, cuts: readonly Cut[], size: number): Generator<string> {
  const raw = (s: Span | undefined) => (s === undefined ? undefined : text.slice(s.start, s.end));
  const id = raw(result.get('statement_id')) ?? '0';
  const error = raw(result.get('error'));
  const seriesSpan = result.get('series');
  const series = seriesSpan === undefined ? [] : [...elements(text, seriesSpan)].map((s) => members(text, s));
  // messages (none today) go with the statement's first line
  let messages = raw(result.get('messages'));
  const cut = cuts[Number(id)] ?? 'whole';
  if (error !== undefined || series.length === 0 || cut === 'whole') {
    yield resultJson(id, series.map((s) => seriesJson(text, s, raw(s.get('values')), false)), messages, false, error);
    return;
  }
  if (cut === 'series') {
    for (const s of series) {
      yield resultJson(id, [seriesJson(text, s, raw(s.get('values')), false)], messages, false, undefined);
      messages = undefined;
    }
    return;
  }
  for (let k = 0; k < series.length; k++) {
    const s = series[k];
    const values = s.get('values');
    // rows are copied as runs of the text: a chunk of N rows is one slice, whatever the rows hold
    let run: Span | undefined;
    let count = 0;
    if (values !== undefined) {
      for (const row of elements(text, values)) {
        if (count === size) {
          yield resultJson(id, [seriesJson(text, s, `[${raw(run)}]`, true)], messages, true, undefined);
          messages = undefined;
          run = undefined;
          count = 0;
        }
        run = { start: run?.start ?? row.start, end: row.end };
        count++;
      }
    }
    yield resultJson(id, [seriesJson(text, s, run === undefined ? undefined : `[${raw(run)}]`, false)], messages, k < series.length - 1, undefined);
    messages = undefined;
  }
}

/** A series as Go writes models.Row: name, tags (keys sorted), columns, values, partial, each left out when empty. */
function seriesJson(text: string, s: Map<string, Span>, values: string | undefined, partial: boolean): string {
  const raw = (key: string) => {
    const span = s.get(key);
    return span === undefined ? undefined : text.slice(span.start, span.end);
  };
  const parts: string[] = [];
  const name = raw('name');
  if (name !== undefined && name !== '""') parts.push(`"name":${name}`);
  const tags = raw('tags');
  const sorted = tags === undefined ? '{}' : sortedTags(tags);
  if (sorted !== '{}') parts.push(`"tags":${sorted}`);
  const columns = raw('columns');
  if (columns !== undefined && columns !== '[]') parts.push(`"columns":${columns}`);
  if (values !== undefined && values !== '[]') parts.push(`"values":${values}`);
  if (partial) parts.push('"partial":true');
  return `{${parts.join(',')}}`;
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
