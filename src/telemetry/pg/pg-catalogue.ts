// The telemetry catalogue (telemetry_namespaces, _fields, _shards, _series) read from PostgreSQL into the same shapes
// the SQLite mirror has (catalogue-types.ts), for the reads and the writer of the PostgreSQL backend.
import { sql } from 'kysely';
import type { Db } from '../../db/open.ts';
import { measurementOf, shardTableName } from '../sqlite/catalogue.ts';
import type { FieldInfo, NamespaceInfo, ShardInfo } from '../catalogue-types.ts';
import { FIELD_TYPES, type FieldKind } from '../line-protocol/line-scanner.ts';
import { namespaceProfile, type Namespace } from '../namespaces.ts';
import { LruCache } from '../../lib/lru-cache.ts';

interface NamespaceRow { id: number; key: string; namespace: string; created_at: number }
interface FieldRow { namespace_id: number; measurement: string; field: string; ordinal: number; type: string }
interface ShardRow { namespace_id: number; shard_window: number; table_name: string; start_ms: number; end_ms: number; columns: number }
interface SealedRow { namespace_id: number; shard_window: number; start_ms: number; end_ms: number }

// Requests build their own NamespaceInfo; its caches stay small.
const SMALL_CACHE = 1_000;

/**
 * Locks the catalogue's version row (sql/pg/0016_telemetry_catalogue_version.sql) for a transaction about to change
 * the catalogue, before any other lock it takes: such transactions then wait for each other here, never in a circle.
 * The catalogue tables' triggers change the version with each statement that changes them.
 */
export async function catalogueChanging(tx: Db): Promise<void> {
  await tx.run(sql`SELECT version FROM telemetry_catalogue_version FOR UPDATE`);
}

/**
 * A read snapshot's guard against shard tables dropped under it (sealed, pruned): a dropped table is missing from every
 * snapshot taken before the drop committed, its catalogue rows still naming it. A snapshot takes this lock before its
 * first query (a LOCK takes no snapshot), so it waits for a drop under way and holds off the next until it ends; the
 * paths that drop shard tables take the lock exclusively first (dropsShardTables).
 */
export async function guardAgainstDrops(tx: Db): Promise<void> {
  await tx.run(sql.raw(GUARD_AGAINST_DROPS));
}

/** guardAgainstDrops' statement: no parameters, so it may go in one round trip with the snapshot's first query. */
export const GUARD_AGAINST_DROPS = 'LOCK TABLE telemetry_sealed IN ACCESS SHARE MODE';

/**
 * Taken by a transaction about to drop shard tables, after catalogueChanging: waits for the read snapshots begun
 * (guardAgainstDrops), `timeoutMs` at most when given (then PostgreSQL's lock_not_available, 55P03).
 */
export async function dropsShardTables(tx: Db, timeoutMs?: number): Promise<void> {
  if (timeoutMs !== undefined) await tx.run(sql.raw(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`));
  await tx.run(sql`LOCK TABLE telemetry_sealed IN ACCESS EXCLUSIVE MODE`);
}

/** The namespaces with these keys, each with its fields and shards, as stored now (missing keys are absent). */
export async function loadNamespaces(tx: Db, keys: readonly string[]): Promise<Map<string, NamespaceInfo>> {
  const out = new Map<string, NamespaceInfo>();
  if (keys.length === 0) return out;
  // one round trip: each namespace with its fields and shards as JSON arrays
  const rows = await tx.all(sql<NamespaceRow & { fields: FieldRow[] | null; shards: ShardRow[] | null; sealed: SealedRow[] | null }>`SELECT n.id, n.key, n.namespace, n.created_at,
      (SELECT json_agg(json_build_object('namespace_id', f.namespace_id, 'measurement', f.measurement, 'field', f.field, 'ordinal', f.ordinal, 'type', f.type)
        ORDER BY f.measurement, f.ordinal) FROM telemetry_fields f WHERE f.namespace_id = n.id) AS fields,
      (SELECT json_agg(json_build_object('namespace_id', s.namespace_id, 'shard_window', s.shard_window, 'table_name', s.table_name,
        'start_ms', s.start_ms, 'end_ms', s.end_ms, 'columns', s.columns)) FROM telemetry_shards s WHERE s.namespace_id = n.id) AS shards,
      (SELECT json_agg(json_build_object('namespace_id', w.namespace_id, 'shard_window', w.shard_window, 'start_ms', w.start_ms, 'end_ms', w.end_ms))
        FROM telemetry_sealed w WHERE w.namespace_id = n.id) AS sealed
    FROM telemetry_namespaces n WHERE n.key = ANY(${[...keys]})`);
  if (rows.length === 0) return out;
  const fields = rows.flatMap((r) => r.fields ?? []);
  const shards = rows.flatMap((r) => r.shards ?? []);
  const byId = new Map<number, NamespaceInfo>();
  for (const r of rows) {
    const namespace = JSON.parse(r.namespace) as Namespace;
    const info: NamespaceInfo = {
      id: r.id, key: r.key, namespace, profile: namespaceProfile(namespace), createdAt: r.created_at,
      measurements: new Map(), maxFields: 0, shards: new Map(), seriesByText: new LruCache(SMALL_CACHE), seriesByNode: new LruCache(SMALL_CACHE),
    };
    byId.set(r.id, info);
    out.set(r.key, info);
  }
  for (const f of fields) addField(byId.get(f.namespace_id)!, f);
  for (const s of shards) byId.get(s.namespace_id)!.shards.set(s.shard_window, shardOf(s));
  for (const w of rows.flatMap((r) => r.sealed ?? [])) {
    const info = byId.get(w.namespace_id)!;
    const shard = info.shards.get(w.shard_window);
    if (shard !== undefined) shard.sealed = true;
    else {
      info.shards.set(w.shard_window, {
        window: w.shard_window, table: shardTableName(info.id, w.shard_window), startMs: w.start_ms, endMs: w.end_ms, columns: 0, head: false, sealed: true,
      });
    }
  }
  return out;
}

/** Adds a stored field row to a namespace's measurements. */
export function addField(ns: NamespaceInfo, f: Omit<FieldRow, 'namespace_id'>): FieldInfo {
  const m = measurementOf(ns, f.measurement);
  const field: FieldInfo = { name: f.field, ordinal: f.ordinal, kind: FIELD_TYPES.indexOf(f.type as never) as FieldKind };
  m.fields.set(f.field, field);
  m.list[f.ordinal] = field;
  ns.maxFields = Math.max(ns.maxFields, m.list.length);
  return field;
}

export function shardOf(s: Omit<ShardRow, 'namespace_id'>): ShardInfo {
  return { window: s.shard_window, table: s.table_name, startMs: s.start_ms, endMs: s.end_ms, columns: s.columns, head: true, sealed: false };
}
