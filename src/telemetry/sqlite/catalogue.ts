// The telemetry catalogue (sql/0005_telemetry.sql) and its in-memory mirror: namespaces, their measurements' fields,
// shard tables and series. Ingest consults it once per line, so it lives in memory; the database stays the truth.
//
// The mirror is kept per database connection and used only inside exclusive sections (`db.exclusive`, or
// `tx.exclusive` in a write's transaction): its loops run synchronously on better-sqlite3 while nothing else uses the
// connection. It is only changed inside the transaction that changes the tables. Three rules keep it right: a write
// whose transaction rolls back resets it (the next request reloads what it needs); every request first compares
// SQLite's schema cookie with the one recorded after our own last change, resetting on a difference — that is how a
// `gridkeeper telemetry prune` run from another process (which drops shard tables) is noticed; and since a write
// commits after its last exclusive section, the next request first checks that a row the write added (its witness)
// exists, resetting when it does not — so a failed COMMIT, too, resets the mirror before anyone uses it again.
import type { SqliteConnection } from '../../db/open.ts';
import type { Statement } from 'better-sqlite3';
import { BlockStats } from './block-stats.ts';
import { SEAL_GENERATION_KEY } from './seal.ts';
import { FIELD_TYPES, type FieldKind } from '../line-protocol/line-scanner.ts';
import { namespaceKey, namespaceProfile, type Namespace, type NamespaceProfile } from '../namespaces.ts';

export type { FieldInfo, MeasurementInfo, SeriesInfo, SeriesTags, ShardInfo, NamespaceInfo, SeriesText } from '../catalogue-types.ts';
import type { FieldInfo, MeasurementInfo, SeriesInfo, SeriesTags, ShardInfo, NamespaceInfo, SeriesText, SealedBlockEntry } from '../catalogue-types.ts';
import { LruCache } from '../../lib/lru-cache.ts';

// The text -> series map is a cache (a miss costs one indexed lookup); this bounds its memory.
const MAX_CACHED_SERIES_TEXTS = 200_000;

const MAX_CACHED_STATEMENTS = 2_000;
/** sealed blocks kept between queries, and their decoded values and times at most (~8 bytes each: 32 MB) */
const MAX_SEALED_BLOCKS = 50_000;
const MAX_SEALED_CELLS = 4_000_000;
/** a decoded row's time weighs this many values (its ms in 8 bytes, sub-millisecond in 4) */
const TIME_CELLS = 1.5;

let nextUid = 1;

/** Thrown inside Catalogue.withoutWrites where an addition was needed. */
const NEEDS_WRITE = Symbol('the catalogue needs an addition');

/** A row the latest transaction that added to the mirror wrote: it exists exactly when that transaction committed. */
interface Witness {
  sql: string;
  params: unknown[];
}

/**
 * CREATE TABLE of an SQLite shard table with value columns c0 .. c<columns - 1>. Untyped columns (no affinity) keep
 * each value's storage class; the field's type is in telemetry_fields.
 */
export function createShardTableSql(table: string, columns: number): string {
  const valueColumns = Array.from({ length: columns }, (_, i) => `, c${i}`).join('');
  return `CREATE TABLE "${table}" (series_id INTEGER NOT NULL, t_ms INTEGER NOT NULL, t_ns INTEGER NOT NULL${valueColumns},
    PRIMARY KEY (series_id, t_ms, t_ns)) WITHOUT ROWID`;
}

/** The shard table of window k of namespace id: a pure function of both. */
export function shardTableName(namespaceId: number, window: number): string {
  return `telemetry_shard_${namespaceId}_${window < 0 ? `m${-window}` : window}`;
}

/** What grows with every addition to the catalogue (ids only grow; a prune deletes no series or field). */
const ADDITIONS = `SELECT (SELECT coalesce(max(id), 0) FROM telemetry_series) || ':' || (SELECT count(*) FROM telemetry_fields)
  || ':' || (SELECT coalesce(max(id), 0) FROM telemetry_namespaces)`;

export class Catalogue {
  private readonly byKey = new Map<string, NamespaceInfo>();
  private schemaVersion = -1;
  /** SQLite's data_version when last synced: it changes when another connection commits */
  private dataVersion = -1;
  /** the sealing generation last seen (sealedGeneration): moves with every transaction that seals points */
  private sealGeneration: string | undefined;
  /** the catalogue's additions (ADDITIONS) when another connection last committed */
  private additions: string | undefined;
  /** changes whenever the mirror changes (a plan made in an earlier generation is planned again) */
  generation = 0;
  /** prepared statements of this mirror's generation (shard tables may be dropped: they die with a reset) */
  private readonly statements = new LruCache<string, Statement>(MAX_CACHED_STATEMENTS);

  /** statistics per block of a shard window, for aggregate queries (block-stats.ts) */
  readonly blockStats: BlockStats;
  /** sealed blocks read by queries, `${seriesId}/${window start}` -> the block (null: the series has none there) */
  readonly sealedBlocks = new LruCache<string, SealedBlockEntry | null>(MAX_SEALED_BLOCKS, undefined, {
    of: (b) => 1 + (b?.decoded === undefined ? 0 : b.rows * (TIME_CELLS + b.decoded.columns.filter((c) => c !== undefined).length)), max: MAX_SEALED_CELLS,
  });
  /** set by the last addition to the mirror; checked (and dropped) by the next sync() */
  private witness: Witness | undefined;
  /** inside withoutWrites: an addition to the catalogue ends the call */
  private readOnly = false;

  /** `conn`: the connection of Db.exclusive; every method runs inside an exclusive section. */
  constructor(private readonly conn: SqliteConnection) {
    this.blockStats = new BlockStats((sql) => this.statement(sql, () => sql, true));
  }

  /**
   * Call first in every telemetry request (at the start of its first exclusive section, inside its transaction if it
   * has one): forgets everything when the last write that added to the mirror did not commit, or when the schema
   * changed behind our back.
   */
  sync(): void {
    const witness = this.witness;
    if (witness !== undefined) {
      this.witness = undefined;
      if (this.conn.prepare(witness.sql).get(...witness.params) === undefined) this.reset();
    }
    const version = this.readSchemaVersion();
    if (version !== this.schemaVersion) {
      this.reset();
      this.schemaVersion = version;
    }
    // Points written by another connection (another process on the same file, the fold worker) mark no block stale:
    // what is kept per block is dropped whenever another connection committed anything. A commit that sealed points
    // (sqlite/seal.ts) also changed which windows hold sealed blocks.
    const data = this.conn.prepare('PRAGMA data_version').pluck().get() as number;
    if (data !== this.dataVersion) {
      this.blockStats.clear();
      this.sealedBlocks.clear();
      this.dataVersion = data;
      // series, fields or namespaces another connection added (another process; this connection may be a read
      // worker's, which never writes): the mirror's lists are stale
      const additions = this.conn.prepare(ADDITIONS).pluck().get() as string;
      if (additions !== this.additions) {
        const known = this.additions !== undefined;
        this.additions = additions;
        if (known) {
          this.reset();
          this.schemaVersion = version;
        }
      }
      const sealed = sealedGeneration(this.conn);
      if (sealed !== this.sealGeneration) {
        this.sealGeneration = sealed;
        this.refreshShards();
      }
    }
  }

  /**
   * Runs fn outside any transaction, where it may read the catalogue but not add to it: undefined when it needed to
   * (a new namespace, measurement field, series or shard, or a wider shard), fn's result otherwise.
   */
  withoutWrites<T>(fn: () => T): T | undefined {
    this.readOnly = true;
    try {
      return fn();
    } catch (err) {
      if (err === NEEDS_WRITE) return undefined;
      throw err;
    } finally {
      this.readOnly = false;
    }
  }

  private mayWrite(): void {
    if (this.readOnly) throw NEEDS_WRITE;
  }

  /** Call last inside a transaction that changed the schema itself (created or altered shard tables). */
  noteOwnSchemaChange(): void {
    this.schemaVersion = this.readSchemaVersion();
  }

  /** The loaded namespaces' shards as stored now (another connection sealed some). */
  private refreshShards(): void {
    if (this.byKey.size === 0) return;
    this.generation++;
    this.statements.clear();
    for (const info of this.byKey.values()) loadShards(this.conn, info);
  }

  reset(): void {
    this.generation++;
    this.byKey.clear();
    this.statements.clear();
    this.blockStats.clear();
    this.sealedBlocks.clear();
    this.schemaVersion = -1;
    this.witness = undefined;
  }

  /** The namespace with this identity, loaded with its fields and shards, or undefined when it was never written. */
  find(namespace: Namespace): NamespaceInfo | undefined {
    const key = namespaceKey(namespace);
    const cached = this.byKey.get(key);
    if (cached !== undefined) return cached;
    const row = this.conn.prepare('SELECT id, created_at FROM telemetry_namespaces WHERE key = ?').get(key) as { id: number; created_at: number } | undefined;
    if (row === undefined) return undefined;
    const info = this.load(row.id, key, namespace, row.created_at);
    this.byKey.set(key, info);
    return info;
  }

  /** The namespace, created on first write (docs/api.md#namespaces). */
  ensure(namespace: Namespace, now: number): NamespaceInfo {
    const found = this.find(namespace);
    if (found !== undefined) return found;
    this.mayWrite();
    const key = namespaceKey(namespace);
    const profile = namespaceProfile(namespace);
    const { lastInsertRowid } = this.conn.prepare(`INSERT INTO telemetry_namespaces
      (key, namespace, interval_ms, shard_duration_ms, worst_case_range_ms, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
      .run(key, JSON.stringify(namespace), profile.intervalMs, profile.shardDurationMs, profile.worstCaseRangeMs, now);
    this.generation++;
    const id = Number(lastInsertRowid);
    this.witness = { sql: 'SELECT 1 FROM telemetry_namespaces WHERE id = ?', params: [id] };
    const info = this.load(id, key, namespace, now);
    this.byKey.set(key, info);
    return info;
  }

  private load(id: number, key: string, namespace: Namespace, createdAt: number): NamespaceInfo {
    const info: NamespaceInfo = {
      id, key, namespace, profile: namespaceProfile(namespace), createdAt,
      measurements: new Map(), maxFields: 0, shards: new Map(), seriesByText: new LruCache(MAX_CACHED_SERIES_TEXTS), seriesByNode: new LruCache(MAX_CACHED_SERIES_TEXTS),
    };
    const fields = this.conn.prepare('SELECT measurement, field, ordinal, type FROM telemetry_fields WHERE namespace_id = ? ORDER BY measurement, ordinal')
      .all(id) as Array<{ measurement: string; field: string; ordinal: number; type: string }>;
    for (const f of fields) {
      const m = measurementOf(info, f.measurement);
      const field: FieldInfo = { name: f.field, ordinal: f.ordinal, kind: FIELD_TYPES.indexOf(f.type as never) as FieldKind };
      m.fields.set(f.field, field);
      m.list[f.ordinal] = field;
      info.maxFields = Math.max(info.maxFields, m.list.length);
    }
    loadShards(this.conn, info);
    return info;
  }

  /** A new field of a measurement gets the next ordinal and keeps its type for good. */
  addField(ns: NamespaceInfo, measurement: MeasurementInfo, name: string, kind: FieldKind): FieldInfo {
    this.mayWrite();
    this.generation++;
    const field: FieldInfo = { name, ordinal: measurement.list.length, kind };
    this.conn.prepare('INSERT INTO telemetry_fields (namespace_id, measurement, field, ordinal, type) VALUES (?, ?, ?, ?, ?)')
      .run(ns.id, measurement.name, name, field.ordinal, FIELD_TYPES[kind]);
    this.witness = { sql: 'SELECT 1 FROM telemetry_fields WHERE namespace_id = ? AND measurement = ? AND field = ?', params: [ns.id, measurement.name, name] };
    measurement.fields.set(name, field);
    measurement.list.push(field);
    ns.maxFields = Math.max(ns.maxFields, measurement.list.length);
    return field;
  }

  measurement(ns: NamespaceInfo, name: string): MeasurementInfo {
    return measurementOf(ns, name);
  }

  /** The series whose series section text (hashed as the scanner does) is `text`, when that text was seen before. */
  seriesByText(ns: NamespaceInfo, hash: number, isText: (text: string) => boolean): SeriesInfo | undefined {
    for (let e = ns.seriesByText.get(hash); e !== undefined; e = e.next) if (isText(e.text)) return e.series;
    return undefined;
  }

  /**
   * The series of a measurement and tag set (canonical: keys sorted), created when new. `text` is the line's series
   * section (and `hash` its scanner hash), remembered so later lines with the same text skip parsing their tags.
   */
  ensureSeries(ns: NamespaceInfo, measurementName: string, tags: ReadonlyArray<readonly [string, string]>, text: string, hash: number, now: number): SeriesInfo {
    const sorted = [...tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const tagsJson = JSON.stringify(Object.fromEntries(sorted));
    const nodeId = sorted.find(([k]) => k === 'nodeId')![1];
    const found = this.conn.prepare('SELECT id FROM telemetry_series WHERE namespace_id = ? AND measurement = ? AND tags = ?')
      .pluck().get(ns.id, measurementName, tagsJson) as number | undefined;
    let id = found;
    if (id === undefined) {
      this.mayWrite();
      id = Number(this.conn.prepare('INSERT INTO telemetry_series (namespace_id, measurement, tags, node_id, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(ns.id, measurementName, tagsJson, nodeId, now).lastInsertRowid);
      this.witness = { sql: 'SELECT 1 FROM telemetry_series WHERE id = ?', params: [id] };
      ns.seriesByNode.delete(nodeKey(measurementName, nodeId));
    }
    const series: SeriesInfo = { id, nodeId, measurement: measurementOf(ns, measurementName), seenBy: 0 };
    ns.seriesByText.set(hash, { text, series, next: ns.seriesByText.peek(hash) });
    return series;
  }

  /** The series of a measurement with this nodeId, in series-key order (InfluxDB's: tags by key, a prefix first). */
  seriesOfNode(ns: NamespaceInfo, measurement: string, nodeId: string): SeriesTags[] {
    const key = nodeKey(measurement, nodeId);
    let list = ns.seriesByNode.get(key);
    if (list === undefined) {
      const rows = this.conn.prepare('SELECT id, tags FROM telemetry_series WHERE namespace_id = ? AND measurement = ? AND node_id = ?')
        .raw(true).all(ns.id, measurement, nodeId) as Array<[number, string]>;
      list = rows.map(([id, tags]) => ({ id, tags: JSON.parse(tags) as Record<string, string> }));
      list.sort((a, b) => compareTagSets(a.tags, b.tags));
      ns.seriesByNode.set(key, list);
    }
    return list;
  }

  /**
   * The shard table of a window, created (with at least `columns` value columns) when it does not exist yet, or again
   * when sealing dropped it (a late point for a sealed window).
   */
  ensureShard(ns: NamespaceInfo, window: number, columns: number, now: number): ShardInfo {
    const existing = ns.shards.get(window);
    if (existing?.head === true) {
      if (existing.columns < columns) this.widen(ns, existing, columns);
      return existing;
    }
    this.mayWrite();
    this.generation++;
    const table = shardTableName(ns.id, window);
    const width = Math.max(columns, ns.maxFields);
    const startMs = window * ns.profile.shardDurationMs;
    // a sealed window keeps its entry: its blocks and its new table are read together
    const shard: ShardInfo = existing ?? { window, table, startMs, endMs: startMs + ns.profile.shardDurationMs, columns: width, head: true, sealed: false };
    shard.head = true;
    shard.columns = width;
    this.conn.sqlite.exec(createShardTableSql(table, width));
    this.conn.prepare('INSERT INTO telemetry_shards (namespace_id, shard_window, table_name, start_ms, end_ms, columns, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(ns.id, window, table, shard.startMs, shard.endMs, width, now);
    this.witness = shardWitness(ns, shard);
    ns.shards.set(window, shard);
    return shard;
  }

  private widen(ns: NamespaceInfo, shard: ShardInfo, columns: number): void {
    this.mayWrite();
    this.generation++;
    for (let i = shard.columns; i < columns; i++) this.conn.sqlite.exec(`ALTER TABLE "${shard.table}" ADD COLUMN c${i}`);
    this.conn.prepare('UPDATE telemetry_shards SET columns = ? WHERE namespace_id = ? AND shard_window = ?').run(columns, ns.id, shard.window);
    shard.columns = columns;
    this.witness = shardWitness(ns, shard);
  }

  /**
   * The statement cached under `key`, prepared from build() on a miss. Kept outside the connection's cache: statements name
   * shard tables, so they belong to this generation of the mirror. Bounded (least recently used first): statements
   * are cheap to prepare again, and the number of query shapes is up to the clients.
   */
  statement(key: string, build: () => string, raw = false): Statement {
    let stmt = this.statements.get(key);
    if (stmt === undefined) {
      stmt = this.conn.sqlite.prepare(build());
      if (raw) stmt.raw(true);
      this.statements.set(key, stmt);
    }
    return stmt;
  }

  private readSchemaVersion(): number {
    return this.conn.prepare('PRAGMA schema_version').pluck().get() as number;
  }
}

/** The shard's catalogue row as this transaction left it (created, made again or widened). */
function shardWitness(ns: NamespaceInfo, shard: ShardInfo): Witness {
  return { sql: 'SELECT 1 FROM telemetry_shards WHERE namespace_id = ? AND shard_window = ? AND columns = ?', params: [ns.id, shard.window, shard.columns] };
}

/** The namespace's windows as stored: those with a shard table, and those with sealed blocks. */
function loadShards(conn: SqliteConnection, info: NamespaceInfo): void {
  const heads = conn.prepare('SELECT shard_window, table_name, start_ms, end_ms, columns FROM telemetry_shards WHERE namespace_id = ?')
    .all(info.id) as Array<{ shard_window: number; table_name: string; start_ms: number; end_ms: number; columns: number }>;
  const sealed = conn.prepare('SELECT shard_window, start_ms, end_ms FROM telemetry_sealed WHERE namespace_id = ?')
    .all(info.id) as Array<{ shard_window: number; start_ms: number; end_ms: number }>;
  info.shards.clear();
  for (const s of heads) {
    info.shards.set(s.shard_window, { window: s.shard_window, table: s.table_name, startMs: s.start_ms, endMs: s.end_ms, columns: s.columns, head: true, sealed: false });
  }
  for (const s of sealed) {
    const shard = info.shards.get(s.shard_window);
    if (shard !== undefined) shard.sealed = true;
    else {
      info.shards.set(s.shard_window, {
        window: s.shard_window, table: shardTableName(info.id, s.shard_window), startMs: s.start_ms, endMs: s.end_ms, columns: 0, head: false, sealed: true,
      });
    }
  }
}

function sealedGeneration(conn: SqliteConnection): string | undefined {
  return conn.prepare('SELECT value FROM settings WHERE key = ?').pluck().get(SEAL_GENERATION_KEY) as string | undefined;
}

function nodeKey(measurement: string, nodeId: string): string {
  return `${measurement}\u0000${nodeId}`;
}

/** Tag sets with keys in sorted order (as stored), compared key by key then value by value; a prefix sorts first. */
export function compareTagSets(a: Record<string, string>, b: Record<string, string>): number {
  const ea = Object.entries(a);
  const eb = Object.entries(b);
  for (let i = 0; i < ea.length && i < eb.length; i++) {
    if (ea[i][0] !== eb[i][0]) return ea[i][0] < eb[i][0] ? -1 : 1;
    if (ea[i][1] !== eb[i][1]) return ea[i][1] < eb[i][1] ? -1 : 1;
  }
  return ea.length - eb.length;
}

export function measurementOf(ns: NamespaceInfo, name: string): MeasurementInfo {
  let m = ns.measurements.get(name);
  if (m === undefined) {
    m = { uid: nextUid++, name, fields: new Map(), list: [] };
    ns.measurements.set(name, m);
  }
  return m;
}

// Keyed by the better-sqlite3 connection: the root handle and every transaction handle of a Db share it (and its mirror).
const catalogues = new WeakMap<SqliteConnection['sqlite'], Catalogue>();

/** The catalogue of the connection; call inside an exclusive section (`await db.exclusive((conn) => ...)`). */
export function catalogueOf(conn: SqliteConnection): Catalogue {
  let c = catalogues.get(conn.sqlite);
  if (c === undefined) catalogues.set(conn.sqlite, (c = new Catalogue(conn)));
  return c;
}
