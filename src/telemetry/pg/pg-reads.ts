// The telemetry reads of the PostgreSQL backend (reads-types.ts). A query attempt asks synchronously; what this
// request has not fetched yet is answered empty and noted, the attempt is thrown away, and fetch() then reads
// everything noted in as few statements as it can — one per kind of read and shard table, for every series at once
// (a batch of 1,000 JSON queries costs a handful of round trips, not thousands) — before the attempt runs again.
// Everything fetched is kept for the request (its snapshot). Catalogue rows (namespaces, the series of a node or a
// measurement) are kept across requests too, under the catalogue version of the snapshot that read them
// (sql/pg/0016_telemetry_catalogue_version.sql): another process may add a series or prune a shard at any time, and
// changes the version when it does, in the same transaction; a snapshot uses kept rows only when it sees the version
// they were read under (reads.ts, settledRead: the version comes with the snapshot's first statement). A repeated
// query then reads its points or statistics alone: two round trips fewer.
import { sql, type Compilable, type CompiledQuery } from 'kysely';
import { compileQuery, type Db, type Query } from '../../db/open.ts';
import { compareTagSets } from '../sqlite/catalogue.ts';
import type { FieldInfo, NamespaceInfo, SealedBlockEntry, SeriesTags, ShardInfo } from '../catalogue-types.ts';
import { decodeStats, withColumns, type BlockData } from '../blocks/index.ts';
import { addBlockWindows, addPointWindows, addWindow, appendBlockRowsJson, headValue, mergePoints, pointsOfBlock, statsOfBlock, statsOfValues, windowOf, type EdgeTake, type SealedValue, type WindowPoints } from '../query/sealed.ts';
import { emptyStats, IntegerOverflow, mergeStats, statsFromRow, type Stats } from '../query/stats.ts';
import { BOOLEAN, FLOAT, INT64_MAX, INT64_MIN, INTEGER, STRING, UNSIGNED } from '../line-protocol/line-scanner.ts';
import { namespaceKey, type Namespace } from '../namespaces.ts';
import { aggregateRowJson } from '../query/result.ts';
import { isInteger, StatementError, type Column } from '../query/columns.ts';
import type { PlannedQuery } from '../query/types.ts';
import { bySeriesKey } from '../query/series-key.ts';
import { isoTimeJson, rfc3339NanoJson } from '../query/result.ts';
import type { Edge, PointValue, SeriesPoints, SeriesRef, TelemetryReads, WindowAcc } from '../query/reads-types.ts';
import { rangePieces, readPieces, type ComputedBlock, type PieceGroup } from './pg-block-stats.ts';
import { loadNamespaces } from './pg-catalogue.ts';
import { decodeArray, pgColumnIn } from './pg-shards.ts';
import { unwrapStateRows, withSnapshotState, type SnapshotState } from './pg-staging.ts';
import { LruCache } from '../../lib/lru-cache.ts';
import { flat } from '../../lib/flat-string.ts';
import type { RowSink } from '../query/row-bytes.ts';


/** A point as fetched: t_ms, t_ns, then one raw value per field (floats as numbers, integers as decimal text, text). */
type RawRow = unknown[];

interface Batch {
  items: Set<string | number>;
  run(tx: Db, items: Array<string | number>): Promise<void>;
}

const sep = '\u0000';

/** Catalogue rows read under one catalogue version, by the key PgReads.known has them under. */
interface KeptCatalogue {
  version: number;
  rows: LruCache<string, unknown>;
}

/** Per database (root handle), the rows of the catalogue version last seen; another version's rows are dropped. */
const keptCatalogues = new WeakMap<Db, KeptCatalogue>();

/** Kept rows per database, at most (a namespace, or the series list of one node or measurement, each). */
const MAX_KEPT_ROWS = 20_000;

/**
 * A sealed block kept between requests: its bytes, the columns decoded so far, and the version of its row it was read
 * at (PostgreSQL's xmin: a block rewritten by a late write, on any node, is a new row version with another xmin).
 */
interface KeptBlock {
  version: string;
  bytes: Uint8Array;
  block: BlockData | undefined;
}

/** Per database (root handle), sealed blocks read by earlier requests, by series and window. */
const keptBlocks = new WeakMap<Db, LruCache<string, KeptBlock>>();

/** Blocks kept per database at most, and their weight: bytes / 8 plus decoded cells (~8 bytes each: 16 MB in all). */
const MAX_KEPT_BLOCKS = 20_000;
const MAX_KEPT_BLOCK_CELLS = 2_000_000;

function keptBlocksOf(db: Db): LruCache<string, KeptBlock> {
  let kept = keptBlocks.get(db);
  if (kept === undefined) {
    keptBlocks.set(db, kept = new LruCache(MAX_KEPT_BLOCKS, undefined, {
      of: (b) => 1 + (b.bytes.length >> 3) + (b.block === undefined ? 0 : b.block.ms.length * (1 + b.block.columns.filter((c) => c !== undefined).length)),
      max: MAX_KEPT_BLOCK_CELLS,
    }));
  }
  return kept;
}

/** How many sealed blocks `db` keeps between requests (for tests). */
export function keptBlockCount(db: Db): number {
  return keptBlocks.get(db)?.size ?? 0;
}

// Every PgReads, and every snapshot one begins, is a generation of its own: nothing planned with another is reused.
let generations = 0;

/**
 * Reads of `db` (a root handle) over the catalogue rows it keeps under the version its last read snapshot saw, no
 * version read yet: undefined before any snapshot kept rows. Whoever answers from them checks that version first
 * (PgReads.fetchWithState), or only plans.
 */
export function readsOnKeptCatalogue(db: Db): PgReads | undefined {
  const version = keptCatalogues.get(db)?.version;
  if (version === undefined) return undefined;
  const reads = new PgReads(db);
  reads.catalogueVersion(version);
  return reads;
}

/** A compiled statement as a query the Db seam runs. */
const compiled = (c: CompiledQuery): Compilable<unknown> => ({ compile: () => c });

export class PgReads implements TelemetryReads {
  generation = ++generations;
  private readonly known = new Map<string, unknown>();
  /** sealed blocks read so far, by the key of their bytes in `known`, with the columns asked for decoded */
  private readonly decoded = new Map<string, BlockData>();
  private readonly pending = new Map<string, Batch>();
  private readonly computed: ComputedBlock[] = [];
  /** the shards block statistics were asked of, by table */
  private readonly shards = new Map<string, ShardInfo>();
  /** the field whose statistics were first asked of each column (its kind says how the column's values read) */
  private readonly statsFields = new Map<string, FieldInfo>();
  /** the kept catalogue rows of the snapshot's catalogue version, while it has one */
  private kept: KeptCatalogue | undefined;

  /** `db`: the root handle, whose kept catalogue rows the reads use */
  constructor(private readonly db: Db) {}

  /**
   * The catalogue version the snapshot now read saw (undefined: unknown). Kept rows of that version are used; rows of
   * another (versions are random, not ordered) are dropped.
   */
  catalogueVersion(version: number | undefined): void {
    this.kept = undefined;
    if (version === undefined) return;
    let kept = keptCatalogues.get(this.db);
    if (kept?.version !== version) keptCatalogues.set(this.db, kept = { version, rows: new LruCache(MAX_KEPT_ROWS) });
    this.kept = kept;
  }

  /** The catalogue version whose kept rows these reads use (undefined: none). */
  get assumedVersion(): number | undefined {
    return this.kept?.version;
  }

  /** Whether the last attempt asked for something not fetched yet (its answer must be thrown away). */
  get lacking(): boolean {
    return this.pending.size > 0;
  }

  /** Fetches everything the attempts so far lacked, inside `tx`. */
  async fetch(tx: Db): Promise<void> {
    const batches = [...this.pending.values()];
    this.pending.clear();
    for (const b of batches) await b.run(tx, [...b.items]);
  }

  /**
   * Fetches what the last attempt lacked in one statement outside a transaction, which reads the snapshot state
   * (pg-staging.ts) in the same snapshot, and returns that state; undefined, with nothing fetched, when the attempt
   * lacked more than one kind of read. Rows are fetched for this request only (none is kept for later ones under a
   * catalogue version the statement may not have seen). The caller uses what was fetched only when the state is the
   * one the attempt assumed: nothing staged, and the catalogue version whose kept rows it used.
   */
  async fetchWithState(db: Db): Promise<SnapshotState | undefined> {
    if (this.pending.size !== 1) return undefined;
    const [batch] = this.pending.values();
    this.pending.clear();
    let state: SnapshotState | undefined;
    const wrapped = async (q: Query<unknown>, arrays: boolean): Promise<unknown[]> => {
      if (state !== undefined) throw new TypeError('a read batch made more than one statement');
      const statement = compiled(withSnapshotState(compileQuery(q, db.qb)));
      const found = unwrapStateRows(arrays ? await db.rows(statement) : await db.all(statement), arrays);
      state = found.state;
      return found.rows;
    };
    // the root handle with its three reading methods wrapped (its other members read through the prototype)
    const once: Db = Object.assign(Object.create(db) as Db, {
      all: (<R>(q: Query<R>) => wrapped(q, false) as Promise<R[]>) as Db['all'],
      rows: (<T extends unknown[]>(q: Query<unknown>) => wrapped(q, true) as Promise<T[]>) as Db['rows'],
      get: (<R>(q: Query<R>) => wrapped(q, false).then((rows) => rows[0] as R | undefined)) as Db['get'],
    });
    const kept = this.kept;
    this.kept = undefined;
    try {
      await batch.run(once, [...batch.items]);
    } finally {
      this.kept = kept;
    }
    return state;
  }

  /** Forgets everything fetched (a new snapshot begins). */
  forget(): void {
    this.generation = ++generations;
    this.known.clear();
    this.decoded.clear();
    this.pending.clear();
    this.statsFields.clear();
    this.kept = undefined;
  }

  /** The value under `key` when fetched; else notes `item` in the batch `batch` (made by `make`) and returns undefined. */
  private want<T>(key: string, batch: string, item: string | number, make: () => Batch['run']): T | undefined {
    if (this.known.has(key)) return this.known.get(key) as T;
    if (this.kept?.rows.has(key)) {
      const row = this.kept.rows.get(key);
      this.known.set(key, row);
      return row as T;
    }
    let b = this.pending.get(batch);
    if (b === undefined) this.pending.set(batch, b = { items: new Set(), run: make() });
    b.items.add(item);
    return undefined;
  }

  /**
   * A catalogue row fetched in this snapshot, kept for later requests under the snapshot's catalogue version (shared
   * between requests: never changed once read).
   */
  private learn(key: string, row: unknown): void {
    this.known.set(key, row);
    this.kept?.rows.set(key, row);
  }

  find(namespace: Namespace): NamespaceInfo | undefined {
    const key = namespaceKey(namespace);
    return this.want<NamespaceInfo | null>(`ns${sep}${key}`, 'ns', key, () => async (tx, keys) => {
      const found = await loadNamespaces(tx, keys as string[]);
      for (const k of keys) this.learn(`ns${sep}${k}`, found.get(k as string) ?? null);
    }) ?? undefined;
  }

  namespaces(): Namespace[] {
    return this.want<Namespace[]>('nslist', 'nslist', '', () => async (tx) => {
      const rows = await tx.all(sql<{ namespace: string }>`SELECT namespace FROM telemetry_namespaces ORDER BY key`);
      this.learn('nslist', Object.freeze(rows.map((r) => JSON.parse(r.namespace) as Namespace)));
    }) ?? [];
  }

  seriesOfNode(ns: NamespaceInfo, measurement: string, nodeId: string): SeriesTags[] {
    const batch = `node${sep}${ns.id}${sep}${measurement}`;
    return this.want<SeriesTags[]>(`${batch}${sep}${nodeId}`, batch, nodeId, () => async (tx, nodeIds) => {
      const rows = await tx.all(sql<{ id: number; node_id: string; tags: string }>`SELECT id, node_id, tags FROM telemetry_series
        WHERE namespace_id = ${ns.id} AND measurement = ${measurement} AND node_id = ANY(${nodeIds})`);
      const lists = new Map<string, SeriesTags[]>(nodeIds.map((n) => [n as string, []]));
      for (const r of rows) lists.get(r.node_id)?.push({ id: r.id, tags: JSON.parse(r.tags) as Record<string, string> });
      for (const [n, list] of lists) this.learn(`${batch}${sep}${n}`, Object.freeze(list.sort((a, b) => compareTagSets(a.tags, b.tags))));
    }) ?? [];
  }

  seriesOfMeasurement(ns: NamespaceInfo, measurement: string): SeriesRef[] {
    const key = `meas${sep}${ns.id}${sep}${measurement}`;
    return this.want<SeriesRef[]>(key, key, '', () => async (tx) => {
      const rows = await tx.all(sql<{ id: number; node_id: string; tags: string }>`SELECT id, node_id, tags FROM telemetry_series
        WHERE namespace_id = ${ns.id} AND measurement = ${measurement}`);
      this.learn(key, Object.freeze(bySeriesKey(measurement, rows.map((r) => [r.id, r.node_id, r.tags] as const))));
    }) ?? [];
  }

  /**
   * A series' points of one shard with at least one of `fields` set, over [fromMs, toMs), in time order (`desc`:
   * newest first), at most `limit`; fetched for every series of the same read at once. Undefined while not fetched.
   */
  private shardRows(shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number, desc: boolean, limit: number | undefined): RawRow[] | undefined {
    if (shard.endMs <= fromMs || shard.startMs >= toMs) return [];
    const cols = fields.map((f) => pgColumnIn(shard, f));
    const present = [...new Set(cols.filter((c): c is string => c !== undefined))];
    if (present.length === 0) return [];
    const batch = ['pts', shard.table, cols.join(','), fromMs, toMs, desc, limit ?? ''].join(sep);
    return this.want<RawRow[]>(`${batch}${sep}${seriesId}`, batch, seriesId, () => async (tx, ids) => {
      // Each column of a series' points comes as one array in the binary format (array_send), not a row per point: a
      // row object and a string per value, and floats parsed from text, are spared. The arrays keep the points' order.
      const dir = desc ? 'DESC' : 'ASC';
      const agg = (e: string) => `array_send(array_agg(${e} ORDER BY q.t_ms ${dir}, q.t_ns ${dir}))`;
      const values = cols.map((c, i) => (c === undefined ? `NULL::bytea AS v${i}` : `${agg(`q.${c}`)} AS v${i}`)).join(', ');
      const rows = await tx.rows<[number, Buffer | null, Buffer | null, ...Array<Buffer | null>]>(sql`SELECT s.id, p.* FROM unnest(${ids}::bigint[]) AS s(id)
        CROSS JOIN LATERAL (SELECT ${sql.raw(agg('q.t_ms'))} AS ms, ${sql.raw(agg('q.t_ns'))} AS ns, ${sql.raw(values)}
          FROM (SELECT t_ms, t_ns, ${sql.raw(present.join(', '))} FROM ${sql.id(shard.table)}
            WHERE series_id = s.id AND t_ms >= ${fromMs} AND t_ms < ${toMs} AND (${sql.raw(present.map((c) => `${c} IS NOT NULL`).join(' OR '))})
            ORDER BY t_ms ${sql.raw(dir)}, t_ns ${sql.raw(dir)}${limit === undefined ? sql`` : sql` LIMIT ${limit}`}) AS q) AS p`);
      const bySeries = new Map<number, RawRow[]>(ids.map((id) => [id as number, []]));
      for (const [sid, msBytes, nsBytes, ...valueBytes] of rows) {
        const ms = decodeArray(msBytes, 'number');
        const ns = decodeArray(nsBytes, 'number');
        const columns = cols.map((c, i) => (c === undefined ? [] : decodeArray(valueBytes[i], c.endsWith('s') ? 'text' : 'decimal')));
        const list = bySeries.get(sid)!;
        for (let k = 0; k < ms.length; k++) {
          const row: RawRow = [ms[k], ns[k]];
          for (const column of columns) row.push(column[k] ?? null);
          list.push(row);
        }
      }
      for (const [id, list] of bySeries) this.known.set(`${batch}${sep}${id}`, list);
    });
  }

  /**
   * The shards a read of at most `limit` rows goes through, in its order, each with its rows: with a limit, a shard is
   * asked for only once the shards before it turned out to hold fewer than `limit` rows (most reads of the newest
   * points need the newest shard alone); without one, every shard at once. Each shard is asked for the whole limit,
   * so that what is asked of a shard does not depend on what another held. Stops at the first shard not fetched yet
   * (the attempt then lacks it and runs again).
   */
  private *limitedRows(shards: readonly ShardInfo[], seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number,
    desc: boolean, limit: number | undefined): Generator<RawRow> {
    let given = 0;
    for (const shard of desc ? [...shards].reverse() : shards) {
      if (limit !== undefined && given >= limit) return;
      const rows = shard.sealed ? this.sealedRows(shard, seriesId, fields, fromMs, toMs, desc, limit) : this.shardRows(shard, seriesId, fields, fromMs, toMs, desc, limit);
      if (rows === undefined) {
        if (limit !== undefined) return;
        continue;
      }
      for (const r of rows) {
        if (limit !== undefined && given >= limit) return;
        given++;
        yield r;
      }
    }
  }

  /** The block statistics of a series in a sealed window (null: none); fetched for every series and window asked at once. */
  private sealedBlock(shard: ShardInfo, seriesId: number): SealedBlockEntry | null | undefined {
    const item = `${shard.startMs}${sep}${seriesId}`;
    return this.want<SealedBlockEntry | null>(`blk${sep}${item}`, 'blk', item, () => async (tx, items) => {
      const [starts, ids] = blockKeys(items);
      const rows = await tx.all(sql<{ series_id: number; start_ms: number; rows: number; stats: Uint8Array }>`SELECT b.series_id, b.start_ms, b.rows, b.stats
        FROM telemetry_blocks b JOIN unnest(${starts}::bigint[], ${ids}::bigint[]) AS k(start_ms, series_id) USING (start_ms, series_id)`);
      for (const i of items) this.known.set(`blk${sep}${i}`, null);
      for (const r of rows) this.known.set(`blk${sep}${r.start_ms}${sep}${r.series_id}`, { rows: r.rows, stats: decodeStats(r.stats), decoded: undefined });
    });
  }

  /**
   * A series' block of a sealed window with the columns of `fields` decoded (null: it has none there); fetched for every
   * series of the window at once, each column decoded when first read.
   */
  private sealedData(shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[]): BlockData | null | undefined {
    const item = `${shard.startMs}${sep}${seriesId}`;
    const key = `blkd${sep}${item}`;
    const kept = keptBlocksOf(this.db);
    const bytes = this.want<Uint8Array | null>(key, 'blkd', item, () => async (tx, items) => {
      // a block kept from an earlier request comes back as its row version alone while that is the version kept
      const [starts, ids] = blockKeys(items);
      const sent = new Map(items.map((i) => [i as string, kept.peek(i as string)]));
      const versions = [...sent.values()].map((e) => e?.version ?? '');
      const rows = await tx.all(sql<{ series_id: number; start_ms: number; version: string; data: Uint8Array | null }>`SELECT b.series_id, b.start_ms,
          b.xmin::text AS version, CASE WHEN b.xmin::text = k.version THEN NULL ELSE b.data END AS data
        FROM telemetry_blocks b JOIN unnest(${starts}::bigint[], ${ids}::bigint[], ${versions}::text[]) AS k(start_ms, series_id, version) USING (start_ms, series_id)`);
      for (const i of items) this.known.set(`blkd${sep}${i}`, null);
      for (const r of rows) {
        const i = `${r.start_ms}${sep}${r.series_id}`;
        // (the entry sent, even when another request's blocks pushed it out of the cache meanwhile)
        let entry = r.data === null ? sent.get(i)! : undefined;
        if (entry === undefined) kept.set(i, entry = { version: r.version, bytes: r.data!, block: undefined });
        else kept.get(i);
        this.known.set(`blkd${sep}${i}`, entry.bytes);
        if (entry.block !== undefined) this.decoded.set(`blkd${sep}${i}`, entry.block);
      }
    });
    if (bytes === undefined || bytes === null) return bytes;
    const prior = this.decoded.get(key);
    const block = withColumns(bytes, prior, fields.map((f) => f.ordinal));
    this.decoded.set(key, block);
    if (block !== prior) {
      // kept with the columns decoded now (set again: the cache weighs an entry when it is set)
      const entry = kept.peek(item);
      if (entry !== undefined && entry.bytes === bytes) kept.set(item, { ...entry, block });
    }
    return block;
  }

  /** The head rows of a series in a sealed window over [fromMs, toMs) (late points), typed; fetched for every series at once. */
  private sealedHead(shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number): WindowPoints | undefined {
    const none: WindowPoints = { ms: [], sub: [], values: fields.map(() => []) };
    if (!shard.head) return none;
    const cols = fields.map((f) => pgColumnIn(shard, f));
    const batch = ['hd', shard.table, cols.join(','), fromMs, toMs].join(sep);
    return this.want<WindowPoints>(`${batch}${sep}${seriesId}`, batch, seriesId, () => async (tx, ids) => {
      const select = cols.map((c) => (c === undefined ? 'NULL' : c.endsWith('i') ? `${c}::text` : c)).join(', ');
      const rows = await tx.rows<unknown[]>(sql`SELECT series_id, t_ms, t_ns, ${sql.raw(select)} FROM ${sql.id(shard.table)}
        WHERE series_id = ANY(${ids}::bigint[]) AND t_ms >= ${fromMs} AND t_ms < ${toMs} ORDER BY series_id, t_ms, t_ns`);
      const bySeries = new Map<number, WindowPoints>(ids.map((id) => [id as number, { ms: [], sub: [], values: fields.map(() => []) }]));
      for (const r of rows) {
        const p = bySeries.get(r[0] as number)!;
        if (fields.every((_, k) => r[3 + k] === null)) continue;
        p.ms.push(r[1] as number);
        p.sub.push(r[2] as number);
        fields.forEach((f, k) => p.values[k].push(headValue(f, r[3 + k] === null || f.kind === FLOAT || f.kind === STRING ? r[3 + k] : BigInt(r[3 + k] as string))));
      }
      for (const [id, p] of bySeries) this.known.set(`${batch}${sep}${id}`, p);
    });
  }

  /** A series' points of `fields` in a sealed window over [fromMs, toMs): its block merged with late head rows. */
  private sealedPoints(shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number, edge?: EdgeTake): WindowPoints | undefined {
    // the block and the head rows in one round trip
    const data = this.sealedData(shard, seriesId, fields);
    const head = this.sealedHead(shard, seriesId, fields, fromMs, toMs);
    if (data === undefined || head === undefined) return undefined;
    if (data === null) return head;
    // with an edge, head rows may add points anywhere: the sealed ones past `limit` from that end cannot be among the first
    const sealed = pointsOfBlock(data, fields, fromMs, toMs, edge);
    return head.ms.length === 0 ? sealed : mergePoints(sealed, head);
  }

  /** A sealed window's points as rows the readers of shardRows take (integers as decimal text, booleans as 1/0). */
  private sealedRows(shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number, desc: boolean,
    limit: number | undefined): RawRow[] | undefined {
    const edge = limit === undefined ? undefined : { desc, limit };
    const points = this.sealedPoints(shard, seriesId, fields, Math.max(fromMs, shard.startMs), Math.min(toMs, shard.endMs), edge);
    if (points === undefined) return undefined;
    const rows: RawRow[] = points.ms.map((ms, i) => [ms, points.sub[i], ...points.values.map((column) => rawValue(column[i]))]);
    return desc ? rows.reverse() : rows;
  }

  /** count, sum, min and max of a field in a sealed window: its block's statistics when whole and without late rows. */
  private sealedStats(shard: ShardInfo, seriesId: number, field: FieldInfo, fromMs: number, toMs: number): Stats | undefined {
    if (fromMs <= shard.startMs && toMs >= shard.endMs) {
      const block = this.sealedBlock(shard, seriesId);
      const head = this.sealedHead(shard, seriesId, [field], fromMs, toMs);
      if (block === undefined || head === undefined) return undefined;
      if (head.ms.length === 0) return statsOfBlock(block, field);
    }
    const points = this.sealedPoints(shard, seriesId, [field], fromMs, toMs);
    return points === undefined ? undefined : statsOfValues(field, points.values[0]);
  }

  /** addWindowStats of a sealed window (see the SQLite reader's: statistics when the window is one interval). */
  private sealedWindowStats(shard: ShardInfo, seriesId: number, field: FieldInfo, fromMs: number, toMs: number,
    firstMs: number, intervalMs: number, acc: WindowAcc): void {
    const lo = Math.max(fromMs, shard.startMs);
    const hi = Math.min(toMs, shard.endMs);
    if (lo === shard.startMs && hi === shard.endMs && windowOf(lo, firstMs, intervalMs) === windowOf(hi - 1, firstMs, intervalMs)) {
      const s = this.sealedStats(shard, seriesId, field, lo, hi);
      if (s !== undefined && s.count > 0) addWindow(acc, windowOf(lo, firstMs, intervalMs), s.count, s.sum, s.min!, s.max!);
      return;
    }
    const data = this.sealedData(shard, seriesId, [field]);
    const head = this.sealedHead(shard, seriesId, [field], lo, hi);
    if (data === undefined || head === undefined) return;
    if (head.ms.length === 0 && (data === null || addBlockWindows(data, field, lo, hi, firstMs, intervalMs, acc))) return;
    const points = this.sealedPoints(shard, seriesId, [field], lo, hi);
    if (points !== undefined) addPointWindows(points, field, firstMs, intervalMs, acc);
  }

  readPoints(shards: readonly ShardInfo[], seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number, edge?: Edge): SeriesPoints {
    const out: SeriesPoints = { ms: [], sub: [], values: fields.map(() => []) };
    if (fields.length === 0) return out;
    const desc = edge?.desc === true;
    for (const r of this.limitedRows(shards, seriesId, fields, fromMs, toMs, desc, edge?.limit)) {
      out.ms.push(r[0] as number);
      out.sub.push(r[1] as number);
      for (let i = 0; i < fields.length; i++) out.values[i].push(pointValue(fields[i], r[i + 2]));
    }
    if (desc) {
      out.ms.reverse();
      out.sub.reverse();
      for (const v of out.values) v.reverse();
    }
    return out;
  }

  readRowsJson(shards: readonly ShardInfo[], seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number, desc: boolean, take: number,
    into: RowSink, timeJson = rfc3339NanoJson): void {
    this.jsonRows(shards, seriesId, fields, fromMs, toMs, desc, take >= Number.MAX_SAFE_INTEGER ? undefined : take, timeJson, into);
  }

  /**
   * The rows of limitedRows as JSON arrays: the time as `timeJson` writes it, then each field's value. A sealed window
   * whose block alone holds its points is written from the decoded block.
   */
  private jsonRows(shards: readonly ShardInfo[], seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number,
    desc: boolean, limit: number | undefined, timeJson: (ms: number, ns: number) => string, out: RowSink): void {
    const max = limit ?? Number.POSITIVE_INFINITY;
    for (const shard of desc ? [...shards].reverse() : shards) {
      if (out.length >= max) break;
      if (shard.sealed && this.blockRowsJson(shard, seriesId, fields, fromMs, toMs, desc, max, out, timeJson)) continue;
      const rows = shard.sealed ? this.sealedRows(shard, seriesId, fields, fromMs, toMs, desc, limit) : this.shardRows(shard, seriesId, fields, fromMs, toMs, desc, limit);
      if (rows === undefined) {
        if (limit !== undefined) break;
        continue;
      }
      for (const r of rows) {
        if (out.length >= max) break;
        let row = `[${timeJson(r[0] as number, r[1] as number)}`;
        for (let i = 0; i < fields.length; i++) row += `,${valueText(fields[i], r[i + 2])}`;
        out.push(flat(`${row}]`));
      }
    }
  }

  /** Appends a sealed window's rows from its decoded block when the block alone holds them; false when it does not (or is not fetched yet). */
  private blockRowsJson(shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number, desc: boolean, limit: number,
    out: RowSink, timeJson: (ms: number, ns: number) => string): boolean {
    const lo = Math.max(fromMs, shard.startMs);
    const hi = Math.min(toMs, shard.endMs);
    const data = this.sealedData(shard, seriesId, fields);
    const head = this.sealedHead(shard, seriesId, fields, lo, hi);
    if (data === undefined || head === undefined || head.ms.length > 0) return false;
    if (data !== null) appendBlockRowsJson(data, fields, lo, hi, desc, limit, out, timeJson);
    return true;
  }

  /**
   * count, sum, min and max of a numeric field (functions of text are refused when planned) of a series in one shard
   * over [fromMs, toMs); fetched for every field, series and shard of the same range at once, in one statement. Whole
   * blocks come from their statistics (pg-block-stats.ts), only the range's edges are scanned.
   */
  private shardStats(shard: ShardInfo, seriesId: number, field: FieldInfo, fromMs: number, toMs: number): Stats {
    if (shard.endMs <= fromMs || shard.startMs >= toMs) return emptyStats();
    if (shard.sealed) return this.sealedStats(shard, seriesId, field, Math.max(fromMs, shard.startMs), Math.min(toMs, shard.endMs)) ?? emptyStats();
    const col = pgColumnIn(shard, field);
    if (col === undefined) return emptyStats();
    const batch = ['st', fromMs, toMs].join(sep);
    const key = (c: string, table: string, id: string | number) => `${batch}${sep}${c}${sep}${table}${sep}${id}`;
    this.shards.set(shard.table, shard);
    if (!this.statsFields.has(col)) this.statsFields.set(col, field);
    return this.want<Stats>(key(col, shard.table, seriesId), batch, `${col}${sep}${shard.table}${sep}${seriesId}`, () => async (tx, items) => {
      // by column, then by shard table, in the order asked
      const byColumn = new Map<string, Map<string, PieceGroup>>();
      for (const item of items as string[]) {
        const [c, table, id] = item.split(sep);
        let groups = byColumn.get(c);
        if (groups === undefined) byColumn.set(c, groups = new Map());
        let group = groups.get(table);
        if (group === undefined) {
          const s = this.shards.get(table)!;
          groups.set(table, group = { shard: s, pieces: rangePieces(s, fromMs, toMs), ids: [] });
        }
        (group.ids as number[]).push(Number(id));
        this.known.set(key(c, table, id), emptyStats());
      }
      const columns = [...byColumn].map(([c, groups]) => ({ col: c, groups: [...groups.values()] }));
      const rows = await readPieces(tx, columns);
      // merged in time order (the pieces' order), as the sum of floats depends on it
      rows.sort((a, b) => a.ci - b.ci || a.grp - b.grp || a.sid - b.sid || a.k - b.k);
      for (const r of rows) {
        const { col: c, groups } = columns[r.ci];
        const { shard: s, pieces } = groups[r.grp];
        mergeStats(this.known.get(key(c, s.table, r.sid)) as Stats, statsFromRow([r.n, r.total, r.low, r.high], 0, this.statsFields.get(c)!));
        const block = pieces[r.k - 1].block;
        if (!r.stored && block >= 0 && r.version !== null) {
          this.computed.push({ table: s.table, col: c, sid: r.sid, block, version: r.version, n: r.n, total: r.total, low: r.low, high: r.high });
        }
      }
    }) ?? emptyStats();
  }

  /** The block statistics this request's reads computed, to be stored (storeBlockStats) once its snapshot is done. */
  takeComputed(): ComputedBlock[] {
    return this.computed.splice(0);
  }

  rangeStats(shards: readonly ShardInfo[], seriesId: number, field: FieldInfo, fromMs: number, toMs: number): Stats {
    const stats = emptyStats();
    for (const shard of shards) mergeStats(stats, this.shardStats(shard, seriesId, field, fromMs, toMs));
    if (typeof stats.sum === 'bigint' && (stats.sum > INT64_MAX || stats.sum < INT64_MIN)) throw new IntegerOverflow();
    return stats;
  }

  addWindowStats(shards: readonly ShardInfo[], seriesId: number, field: FieldInfo, fromMs: number, toMs: number,
    firstMs: number, intervalMs: number, acc: WindowAcc): void {
    for (const shard of shards) {
      if (shard.endMs <= fromMs || shard.startMs >= toMs) continue;
      if (shard.sealed) {
        this.sealedWindowStats(shard, seriesId, field, fromMs, toMs, firstMs, intervalMs, acc);
        continue;
      }
      const col = pgColumnIn(shard, field);
      if (col === undefined) continue;
      const interval = intervalMs === 0 ? Number.MAX_SAFE_INTEGER : intervalMs;
      const batch = ['win', shard.table, col, fromMs, toMs, firstMs, interval].join(sep);
      const rows = this.want<Array<[number, number, string, string, string]>>(`${batch}${sep}${seriesId}`, batch, seriesId, () => async (tx, ids) => {
        const integer = col.endsWith('i');
        const text = (e: string) => (integer ? `${e}::text` : `${e}::float8::text`);
        const found = await tx.all(sql<{ sid: number; w: number; n: number; total: string; lo: string; hi: string }>`SELECT series_id AS sid,
          trunc((t_ms - ${firstMs}::numeric) / ${interval}::numeric)::bigint AS w, count(${sql.raw(col)}) AS n, ${sql.raw(text(`sum(${col})`))} AS total,
          ${sql.raw(text(`min(${col})`))} AS lo, ${sql.raw(text(`max(${col})`))} AS hi
          FROM ${sql.id(shard.table)} WHERE series_id = ANY(${ids}::bigint[]) AND t_ms >= ${fromMs} AND t_ms < ${toMs} AND ${sql.raw(col)} IS NOT NULL
          GROUP BY 1, 2`);
        const bySeries = new Map<number, Array<[number, number, string, string, string]>>(ids.map((id) => [id as number, []]));
        for (const r of found) bySeries.get(Number(r.sid))!.push([Number(r.w), Number(r.n), r.total, r.lo, r.hi]);
        for (const [id, list] of bySeries) this.known.set(`${batch}${sep}${id}`, list);
      }) ?? [];
      const integer = isInteger(field);
      for (const [w, n, total, lo, hi] of rows) {
        if (integer) addWindow(acc, w, n, BigInt(total), BigInt(lo), BigInt(hi));
        else addWindow(acc, w, n, Number(total), Number(lo), Number(hi));
      }
    }
  }

  aggregateRow(q: PlannedQuery, seriesId: number, columns: Column[]): string {
    const stats = columns.map((c) => {
      const s = emptyStats();
      for (const shard of q.shards) mergeStats(s, this.shardStats(shard, seriesId, c.field, q.fromMs, q.toMs));
      const sums = c.fn === 'sum' || c.fn === 'mean';
      if (sums && typeof s.sum === 'bigint' && (s.sum > INT64_MAX || s.sum < INT64_MIN)) throw new StatementError('integer overflow in sum()');
      return s;
    });
    return aggregateRowJson(q, columns, stats);
  }

  rawRows(q: PlannedQuery, seriesId: number, columns: Column[]): string {
    const fields = columns.map((c) => c.field);
    const rows: string[] = [];
    this.jsonRows(q.shards, seriesId, fields, q.fromMs, q.toMs, q.query.orderBy === 'DESC', q.query.limit, isoTimeJson, rows);
    return rows.join(',');
  }
}

/** The windows' starts and series ids of block items `${startMs}${sep}${seriesId}`, as two arrays. */
function blockKeys(items: ReadonlyArray<string | number>): [number[], number[]] {
  const starts: number[] = [];
  const ids: number[] = [];
  for (const item of items) {
    const [start, id] = String(item).split(sep);
    starts.push(Number(start));
    ids.push(Number(id));
  }
  return [starts, ids];
}

/** A sealed cell as a fetched value: integers as decimal text, booleans as 1/0 (pointValue and valueText read them). */
function rawValue(v: SealedValue): unknown {
  if (v === null) return null;
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'bigint') return String(v);
  return v;
}

/** A fetched value as the query layer uses it: booleans as booleans, integers as numbers. */
function pointValue(field: FieldInfo, v: unknown): PointValue {
  if (v === null || v === undefined) return null;
  switch (field.kind) {
    case BOOLEAN: return v === '1';
    case INTEGER: case UNSIGNED: return Number(v);
    default: return v as number | string;
  }
}

/** A fetched value as JSON: integers with every digit, booleans from 0/1, floats in their shortest exact form. */
function valueText(field: FieldInfo, v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (field.kind) {
    case FLOAT: return Number.isFinite(v) ? String(v) : 'null';
    case BOOLEAN: return v === '1' ? 'true' : 'false';
    case STRING: return JSON.stringify(v);
    default: return v as string;
  }
}
