// Catalogue reads and retention for the routes and the CLI: the namespaces a user may see, and dropping whole
// shard tables that fell out of retention.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { allReadableDevices, RIGHTS_VERSION_COLUMN } from '../access/rights.ts';
import { GRACE_DIVISOR } from './blocks/rows.ts';
import { catalogueOf, shardTableName } from './sqlite/catalogue.ts';
import { noteSealChange } from './sqlite/seal.ts';
import { forgetStaged } from './sqlite/staging.ts';
import { catalogueChanging, dropsShardTables } from './pg/pg-catalogue.ts';
import type { Namespace } from './namespaces.ts';
import { inValues } from '../db/in-list.ts';
import { rootMemberRow } from '../access/root.ts';

export interface NamespaceRow {
  namespace: Namespace;
  intervalMs: number;
  shardDurationMs: number;
  worstCaseRangeMs: number;
  shards: number;
  oldestShardStartMs: number | null;
  createdAt: number;
}

/**
 * Namespaces holding data of a device the user may read (a namespace's name is not revealed to users with no data
 * in it), ordered by key.
 */
export async function listVisibleNamespaces(db: Db, userId: number): Promise<NamespaceRow[]> {
  const deviceIds = (await allReadableDevices(db, userId)).map((a) => a.deviceId);
  if (deviceIds.length === 0) return [];
  const rows = await db.all(sql<{
    namespace: string; interval_ms: number; shard_duration_ms: number; worst_case_range_ms: number; created_at: number;
    shards: number; oldest: number | null;
  }>`
    SELECT n.namespace, n.interval_ms, n.shard_duration_ms, n.worst_case_range_ms, n.created_at,
      (SELECT count(*) FROM (SELECT shard_window FROM telemetry_shards s WHERE s.namespace_id = n.id
        UNION SELECT shard_window FROM telemetry_sealed w WHERE w.namespace_id = n.id) AS windows) AS shards,
      (SELECT min(start_ms) FROM (SELECT start_ms FROM telemetry_shards s WHERE s.namespace_id = n.id
        UNION ALL SELECT start_ms FROM telemetry_sealed w WHERE w.namespace_id = n.id) AS starts) AS oldest
    FROM telemetry_namespaces n
    WHERE n.id IN (
      SELECT se.namespace_id FROM devices d JOIN telemetry_series se ON se.node_id = d.node_id
      WHERE d.id ${inValues(deviceIds)})
    ORDER BY n.key`);
  return rows.map((r) => ({
    namespace: JSON.parse(r.namespace) as Namespace,
    intervalMs: r.interval_ms,
    shardDurationMs: r.shard_duration_ms,
    worstCaseRangeMs: r.worst_case_range_ms,
    shards: r.shards,
    oldestShardStartMs: r.oldest,
    createdAt: r.created_at,
  }));
}

/**
 * Deletes every window whose whole span ended at or before cutoffMs: its shard table and its sealed blocks. Returns the
 * windows deleted, by their shard tables' names (a sealed window's, too, whether its table still exists or not). One
 * transaction, run synchronously on the connection on SQLite (like the rest of the telemetry engine), so the catalogue
 * is reset before any other request uses it.
 */
export async function pruneShards(db: Db, cutoffMs: number): Promise<string[]> {
  if (db.backend === 'postgres') {
    // The writer's mirror notices a dropped table itself; the readers' kept catalogue rows go with the catalogue version,
    // which the deletion changes (its row taken first: catalogueChanging). Deleting the catalogue rows deletes the
    // points still staged for those tables (sql/pg/0013_telemetry_staged.sql).
    return db.tx(async (tx) => {
      await catalogueChanging(tx);
      await dropsShardTables(tx);
      const tables = await tx.all(sql<{ table_name: string }>`SELECT table_name FROM telemetry_shards WHERE end_ms <= ${cutoffMs}`);
      const sealed = await tx.all(sql<{ namespace_id: number; shard_window: number }>`SELECT namespace_id, shard_window FROM telemetry_sealed
        WHERE end_ms <= ${cutoffMs}`);
      for (const r of tables) await tx.run(sql`DROP TABLE IF EXISTS ${sql.id(r.table_name)}`);
      if (tables.length > 0) await tx.run(sql`DELETE FROM telemetry_shards WHERE end_ms <= ${cutoffMs}`);
      if (sealed.length > 0) {
        await tx.run(sql`DELETE FROM telemetry_blocks b USING telemetry_sealed w
          WHERE w.end_ms <= ${cutoffMs} AND b.namespace_id = w.namespace_id AND b.start_ms = w.start_ms`);
        await tx.run(sql`DELETE FROM telemetry_sealed WHERE end_ms <= ${cutoffMs}`);
      }
      return windowNames(tables.map((r) => r.table_name), sealed);
    });
  }
  return db.exclusive((conn) => {
    const catalogue = catalogueOf(conn);
    let dropped: string[];
    try {
      dropped = conn.transaction(() => {
        const tables = conn.prepare('SELECT table_name FROM telemetry_shards WHERE end_ms <= ?').pluck().all(cutoffMs) as string[];
        const sealed = conn.prepare('SELECT namespace_id, shard_window FROM telemetry_sealed WHERE end_ms <= ?')
          .all(cutoffMs) as Array<{ namespace_id: number; shard_window: number }>;
        for (const table of tables) conn.sqlite.exec(`DROP TABLE IF EXISTS "${table}"`);
        if (tables.length > 0) {
          conn.prepare('DELETE FROM telemetry_shards WHERE end_ms <= ?').run(cutoffMs);
          forgetStaged(conn, tables);
        }
        if (sealed.length > 0) {
          conn.prepare(`DELETE FROM telemetry_blocks WHERE (namespace_id, start_ms) IN
            (SELECT namespace_id, start_ms FROM telemetry_sealed WHERE end_ms <= ?)`).run(cutoffMs);
          conn.prepare('DELETE FROM telemetry_sealed WHERE end_ms <= ?').run(cutoffMs);
          noteSealChange(conn.sqlite);
        }
        return windowNames(tables, sealed);
      });
    } catch (err) {
      catalogue.reset();
      throw err;
    }
    // The mirror lists the deleted windows, and cached statements name their tables.
    if (dropped.length > 0) catalogue.reset();
    return dropped;
  });
}

/** Shard table names of the windows deleted, oldest first, each once. */
function windowNames(tables: readonly string[], sealed: ReadonlyArray<{ namespace_id: number; shard_window: number }>): string[] {
  const names = new Set([...tables, ...sealed.map((w) => shardTableName(w.namespace_id, w.shard_window))]);
  return [...names].sort(compareTableNames);
}

/** telemetry_shard_<namespace>_<window> by namespace, then window (m<n> is window -n). */
function compareTableNames(a: string, b: string): number {
  const key = (name: string) => name.slice('telemetry_shard_'.length).split('_').map((p) => (p.startsWith('m') ? -Number(p.slice(1)) : Number(p)));
  const [na, wa] = key(a);
  const [nb, wb] = key(b);
  return na - nb || wa - wb;
}

const RETENTION_EVERY_MS = 60_000;
const lastRetentionRun = new WeakMap<Db, number>();

/**
 * The retention setting, applied lazily by the telemetry routes: at most once a minute, shards older than
 * `retentionMs` are dropped. Returns the oldest time still retained (unix ms), or undefined when keeping forever.
 */
export async function enforceRetention(db: Db, retentionMs: number | null | undefined, now: number): Promise<number | undefined> {
  if (retentionMs === null || retentionMs === undefined) return undefined;
  const cutoff = now - retentionMs;
  const last = lastRetentionRun.get(db);
  if (last === undefined || now - last >= RETENTION_EVERY_MS || now < last) {
    lastRetentionRun.set(db, now);
    await pruneShards(db, cutoff);
  }
  return cutoff;
}

/** The devices these nodeIds name, with the rights version in the same statement (one round trip less on PostgreSQL). */
export async function devicesOfNodeIds(db: Db, nodeIds: readonly string[]): Promise<Array<{ id: number; node_id: string; rights_version: number | string }>> {
  type DeviceRow = { id: number; node_id: string; rights_version: number | string };
  return db.all(nodeIds.length === 1
    ? sql<DeviceRow>`SELECT id, node_id, ${RIGHTS_VERSION_COLUMN} AS rights_version FROM devices WHERE node_id = ${nodeIds[0]}`
    : sql<DeviceRow>`SELECT id, node_id, ${RIGHTS_VERSION_COLUMN} AS rights_version FROM devices WHERE node_id ${inValues(nodeIds)}`);
}

/**
 * Whether the user is a member of the root role, and the devices of `nodeIds` (as devicesOfNodeIds), in one
 * statement: a telemetry read's rights in one round trip when the devices' accesses are kept (access/rights.ts).
 */
export async function rootAndDevicesOfNodeIds(db: Db, userId: number, nodeIds: readonly string[]):
  Promise<{ root: boolean; devices: Array<{ id: number; node_id: string; rights_version: number | string }> }> {
  const rows = await db.all(sql<{ root: boolean | number; id: number | null; node_id: string | null; rights_version: number | string }>`SELECT r.root, d.id, d.node_id, r.rights_version
    FROM (SELECT EXISTS (SELECT 1 FROM members WHERE ${rootMemberRow(userId)}) AS root, ${RIGHTS_VERSION_COLUMN} AS rights_version) AS r
    LEFT JOIN devices d ON d.node_id ${inValues(nodeIds)}`);
  const root = rows[0]?.root === true || rows[0]?.root === 1;
  const devices = rows.flatMap((r) => (r.id === null ? [] : [{ id: r.id, node_id: r.node_id!, rights_version: r.rights_version }]));
  return { root, devices };
}

/** Windows whose shard table holds points, and among them those closed for the grace period at `nowMs` (due). */
export async function unsealedWindows(db: Db, nowMs: number): Promise<{ open: number; due: number }> {
  const row = await db.get(sql<{ open: number; due: number }>`SELECT count(*) AS open,
    count(*) FILTER (WHERE end_ms + (end_ms - start_ms) / ${GRACE_DIVISOR} <= ${nowMs}) AS due FROM telemetry_shards`);
  return { open: Number(row?.open ?? 0), due: Number(row?.due ?? 0) };
}
