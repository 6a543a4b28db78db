// What the query layer (JSON queries and InfluxQL) reads of the stored telemetry, as one synchronous interface with one
// implementation per backend: SQLite answers every call at once from its connection (sqlite-reads.ts); PostgreSQL
// answers from what the request has fetched so far and notes what it lacks (pg/pg-reads.ts). A query request therefore
// runs as attempts (reads.ts): an attempt that lacked something is thrown away, the missing reads are fetched together,
// and the attempt runs again — the query code itself stays synchronous and the same on both backends.
import type { FieldInfo, NamespaceInfo, SeriesTags, ShardInfo } from '../catalogue-types.ts';
import type { Stats } from './stats.ts';
import type { Namespace } from '../namespaces.ts';
import type { Column } from './columns.ts';
import type { PlannedQuery } from './types.ts';
import type { RowSink } from './row-bytes.ts';

export type PointValue = number | string | boolean | null;

export interface SeriesRef {
  id: number;
  nodeId: string;
  /** full tag set, keys sorted */
  tags: Record<string, string>;
}

/** Points of one series in time order: ms, the sub-millisecond nanoseconds, and one value array per field. */
export interface SeriesPoints {
  ms: number[];
  sub: number[];
  values: PointValue[][];
}

/** Only the first (or, `desc`, the last) `limit` points of a range. */
export interface Edge {
  desc: boolean;
  limit: number;
}

export interface TelemetryReads {
  /** changes whenever what the reads know of the catalogue changes (a plan made in an earlier generation is made again) */
  readonly generation: number;
  /** true while this attempt asked for reads not fetched yet (PostgreSQL): nothing it was answered may outlive it */
  readonly lacking: boolean;
  /** The namespace with its measurements, fields and shards; undefined when it was never written. */
  find(namespace: Namespace): NamespaceInfo | undefined;
  /** Every namespace, by key. */
  namespaces(): Namespace[];
  /** The series of a measurement with this nodeId, in series-key order (tags by key, a prefix first). */
  seriesOfNode(ns: NamespaceInfo, measurement: string, nodeId: string): SeriesTags[];
  /** Every series of a measurement, in series-key order. */
  seriesOfMeasurement(ns: NamespaceInfo, measurement: string): SeriesRef[];
  /**
   * The series' points with at least one of `fields` set, over [fromMs, toMs), from the given shards (oldest first), in
   * time order; with `edge`, only the first (or last) `limit` of them.
   */
  readPoints(shards: readonly ShardInfo[], seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number, edge?: Edge): SeriesPoints;
  /**
   * The same points as InfluxQL JSON rows `[<time>,v,...]` (integers with every digit), in time order (`desc`: newest
   * first), at most `take`; the time as `timeJson` writes it (one function per format: rows are kept by it), RFC3339
   * with nanoseconds when not given. Times >= 1970. Appended to `into`.
   */
  readRowsJson(shards: readonly ShardInfo[], seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number, desc: boolean, take: number,
    into: RowSink, timeJson?: (ms: number, ns: number) => string): void;
  /** count, sum, min and max of a field over [fromMs, toMs); throws IntegerOverflow when an integer sum leaves int64. */
  rangeStats(shards: readonly ShardInfo[], seriesId: number, field: FieldInfo, fromMs: number, toMs: number): Stats;
  /**
   * count, sum, min and max of a numeric field per window of `intervalMs` from `firstMs` (0: one window) over
   * [fromMs, toMs), added into the arrays `acc` holds, by window; throws IntegerOverflow when an integer sum leaves
   * int64, or an integer min or max is beyond 2^53 (the caller then reads points).
   */
  addWindowStats(shards: readonly ShardInfo[], seriesId: number, field: FieldInfo, fromMs: number, toMs: number,
    firstMs: number, intervalMs: number, acc: WindowAcc): void;
  /** A JSON query with functions: its one row `["<range start>",agg,...]`, '' when no selected field has a value. */
  aggregateRow(q: PlannedQuery, seriesId: number, columns: Column[]): string;
  /** A JSON query of plain fields: the series' rows as JSON, comma-separated ('' when none). */
  rawRows(q: PlannedQuery, seriesId: number, columns: Column[]): string;
}

/**
 * Per-window reductions of a numeric field, indexed by window: count and sum (integer sums exact up to int64, else
 * IntegerOverflow), min and max (as numbers: an integer beyond 2^53 throws IntegerOverflow, the caller then reads
 * points). A reader fills the arrays that are present.
 */
export interface WindowAcc {
  count?: number[];
  sum?: number[];
  min?: Array<number | undefined>;
  max?: Array<number | undefined>;
}
