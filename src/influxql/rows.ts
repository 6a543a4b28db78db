// The shapes a SELECT's parts hand each other: output series and rows, grouped series, merged point streams.
import type { PointValue, SeriesRef } from '../telemetry/query/reads-types.ts';
import type { RowBytes } from '../telemetry/query/row-bytes.ts';

/** One output series: rows hold [ms, sub, ...values]. */
export interface OutSeries {
  name: string;
  tags?: Record<string, string>;
  columns: string[];
  rows: Array<{ ms: number; sub: number; values: PointValue[] }>;
  /** the rows already as JSON text (times as the answer writes them), or as its bytes; then `rows` is empty */
  rowsJson?: string[] | RowBytes;
}

/** A measurement's series after rights and the tag filter, grouped by the GROUP BY tags. */
export interface Group {
  key: string;
  tags: Record<string, string>;
  series: SeriesRef[];
}

/** The points of a group's series merged in time order (ties: series order), with their tags, filtered. */
export interface Stream {
  ms: number[];
  sub: number[];
  /** per field (fieldNames order) */
  values: PointValue[][];
  fieldNames: string[];
  tags: Array<Record<string, string>>;
}

export type OutRow = OutSeries['rows'][number];

/** A value as the answer's JSON writes it (a number that is not finite as null). */
export function valueJson(v: PointValue): string {
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  return JSON.stringify(v);
}
