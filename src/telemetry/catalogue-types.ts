// The shapes of the telemetry catalogue's in-memory mirror (catalogue.ts), apart so that the pieces the catalogue
// owns (block statistics) can name them without importing the catalogue back.
import type { FieldKind } from './line-protocol/line-scanner.ts';
import type { Namespace, NamespaceProfile } from './namespaces.ts';
import type { LruCache } from '../lib/lru-cache.ts';
import type { BlockData, FieldStats } from './blocks/index.ts';

export interface FieldInfo {
  name: string;
  /** shard-table column c<ordinal> */
  ordinal: number;
  kind: FieldKind;
}

export interface MeasurementInfo {
  /** unique within the process: names prepared statements */
  uid: number;
  name: string;
  fields: Map<string, FieldInfo>;
  /** by ordinal */
  list: FieldInfo[];
}

export interface SeriesInfo {
  id: number;
  nodeId: string;
  measurement: MeasurementInfo;
  /** ingest bookkeeping: the last write request that saw this series */
  seenBy: number;
}

/** What the SQLite readers keep of a series' sealed block of a window: its statistics, and its points once decoded. */
export interface SealedBlockEntry {
  rows: number;
  stats: Array<FieldStats | undefined>;
  decoded: BlockData | undefined;
}

/** A series as queries see it: its id and full tag set. */
export interface SeriesTags {
  id: number;
  tags: Record<string, string>;
}

export interface ShardInfo {
  window: number;
  table: string;
  startMs: number;
  endMs: number;
  /** value columns c0 .. c<columns - 1> */
  columns: number;
  /** the shard table exists (sealing drops it once empty; a late write makes it again) */
  head: boolean;
  /** points of the window are in sealed blocks (telemetry_sealed, telemetry_blocks), besides any in the shard table */
  sealed: boolean;
}

export interface NamespaceInfo {
  id: number;
  key: string;
  namespace: Namespace;
  profile: NamespaceProfile;
  createdAt: number;
  measurements: Map<string, MeasurementInfo>;
  /** widest measurement (field count): new shard tables get this many columns */
  maxFields: number;
  shards: Map<number, ShardInfo>;
  /** series by the hash of a line's series section (measurement and tags as written), chained on collisions */
  seriesByText: LruCache<number, SeriesText>;
  /** queries: the series of a (measurement, nodeId), in series-key order; dropped when a series of it is created */
  seriesByNode: LruCache<string, SeriesTags[]>;
}

/** A series section text seen in a line, and its series (several texts may name one series: tag order differs). */
export interface SeriesText {
  text: string;
  series: SeriesInfo;
  next: SeriesText | undefined;
}
