// The Influx-style answer of a query (docs/api.md#telemetry-query) and its JSON text. Rows are written as JSON text while they are
// read (no array per row, no Date per row: a 1,000-row answer allocated more for its rows than SQLite spent reading
// them). Integers keep every digit, like InfluxDB's answers: JSON.stringify could not write an int64 exactly.
import { BOOLEAN, FLOAT, STRING, type FieldKind } from '../line-protocol/line-scanner.ts';
import { PAD3, secondsText } from '../../lib/time-text.ts';
import type { Column } from './columns.ts';
import type { Stats } from './stats.ts';
import type { PlannedQuery } from './types.ts';

export interface SeriesResult {
  name: string;
  tags: Record<string, string>;
  columns: string[];
  /** the JSON text of the rows, comma-separated, without the enclosing brackets */
  valuesJson: string;
}

export type StatementResult =
  | { statement_id: number; series?: SeriesResult[] }
  | { statement_id: number; error: string };

/** The response body: one object for a single query, else an array in request order. */
export function resultsJson(results: readonly StatementResult[], single: boolean): string {
  const parts = results.map(statementJson);
  return single ? parts[0] : `[${parts.join(',')}]`;
}

function statementJson(r: StatementResult): string {
  if ('error' in r) return `{"statement_id":${r.statement_id},"error":${JSON.stringify(r.error)}}`;
  if (r.series === undefined) return `{"statement_id":${r.statement_id}}`;
  return `{"statement_id":${r.statement_id},"series":[${r.series.map(seriesJson).join(',')}]}`;
}

function seriesJson(s: SeriesResult): string {
  return `{"name":${JSON.stringify(s.name)},"tags":${JSON.stringify(s.tags)},"columns":${JSON.stringify(s.columns)},"values":[${s.valuesJson}]}`;
}

/**
 * JSON of a stored value of a field of this kind: floats as numbers, integers with every digit (a number, a bigint, or
 * the decimal text SQLite gives for values beyond 2^53), booleans from 0/1, strings quoted. NULL is null.
 */
export function valueJson(kind: FieldKind, v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (kind) {
    case FLOAT: return Number.isFinite(v) ? String(v) : 'null';
    case BOOLEAN: return v === 0 || v === 0n ? 'false' : 'true';
    case STRING: return JSON.stringify(v);
    default: return String(v);
  }
}

/** The fraction digits of InfluxDB's RFC3339 text, trailing zeros dropped: `.5`, `.000001`; '' for whole seconds. */
const FRACTION_MS = PAD3.map((p) => (p === '000' ? '' : `.${p.replace(/0+$/, '')}`));

/** InfluxDB's RFC3339 text of a time, quoted: the fraction without trailing zeros (none when whole seconds). ms >= 0. */
export function rfc3339NanoJson(ms: number, subNs: number): string {
  if (subNs !== 0) return isoTimeJson(ms, subNs).replace(/0+Z"$/, 'Z"');
  const milli = ms - Math.floor(ms / 1000) * 1000;
  return `"${secondsText(ms)}${FRACTION_MS[milli]}Z"`;
}

/**
 * `"2026-01-02T03:04:05.678Z"` (quoted: JSON) for unix ms; with nanoseconds (9 fraction digits) when the point has a
 * sub-millisecond part. Consecutive rows mostly share their day, whose text is computed once.
 */
export function isoTimeJson(ms: number, subNs: number): string {
  const frac = PAD3[ms - Math.floor(ms / 1000) * 1000];
  const sub = subNs === 0 ? '' : String(subNs).padStart(6, '0');
  return `"${secondsText(ms)}.${frac}${sub}Z"`;
}

/** The row of a query with functions from each column's stats over the range; '' when none has a value. */
export function aggregateRowJson(q: PlannedQuery, columns: readonly Column[], stats: readonly Stats[]): string {
  if (stats.every((s) => s.count === 0)) return '';
  let row = `[${isoTimeJson(q.rowMs, 0)}`;
  columns.forEach((c, i) => {
    const s = stats[i];
    let v: number | bigint | undefined;
    if (s.count > 0) v = c.fn === 'min' ? s.min : c.fn === 'max' ? s.max : c.fn === 'sum' ? s.sum : Number(s.sum) / s.count;
    row += `,${v === undefined ? 'null' : valueJson(c.fn === 'mean' ? FLOAT : c.field.kind, v)}`;
  });
  return `${row}]`;
}
