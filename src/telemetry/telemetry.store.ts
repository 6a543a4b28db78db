// Catalogue reads and retention for the routes and the CLI: the namespaces a user may see, and dropping whole
// shard tables that fell out of retention.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { allReadableDevices } from '../access/rights.ts';
import { catalogueOf } from './sqlite/catalogue.ts';
import { forgetStaged } from './sqlite/staging.ts';
import { catalogueChanging } from './pg/pg-catalogue.ts';
import type { Namespace } from './namespaces.ts';
import { inValues } from '../db/in-list.ts';

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
      (SELECT count(*) FROM telemetry_shards s WHERE s.namespace_id = n.id) AS shards,
      (SELECT min(start_ms) FROM telemetry_shards s WHERE s.namespace_id = n.id) AS oldest
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
 * Drops every shard table whose whole window ended at or before cutoffMs; returns their names. One transaction, run
 * synchronously on the connection (like the rest of the telemetry engine), so the catalogue is reset before any other
 * request uses it.
 */
export async function pruneShards(db: Db, cutoffMs: number): Promise<string[]> {
  if (db.backend === 'postgres') {
    // The writer's mirror notices a dropped table itself; the readers' kept catalogue rows go with the catalogue version,
    // which the deletion changes (its row taken first: catalogueChanging). Deleting the catalogue rows deletes the
    // points still staged for those tables (sql/pg/0013_telemetry_staged.sql).
    return db.tx(async (tx) => {
      await catalogueChanging(tx);
      const rows = await tx.all(sql<{ table_name: string }>`SELECT table_name FROM telemetry_shards WHERE end_ms <= ${cutoffMs}
        ORDER BY namespace_id, shard_window`);
      for (const r of rows) await tx.run(sql`DROP TABLE IF EXISTS ${sql.id(r.table_name)}`);
      if (rows.length > 0) {
        await tx.run(sql`DELETE FROM telemetry_blocks b USING telemetry_shards s
          WHERE s.end_ms <= ${cutoffMs} AND b.namespace_id = s.namespace_id AND b.start_ms = s.start_ms`);
        await tx.run(sql`DELETE FROM telemetry_shards WHERE end_ms <= ${cutoffMs}`);
      }
      return rows.map((r) => r.table_name);
    });
  }
  return db.exclusive((conn) => {
    const catalogue = catalogueOf(conn);
    let dropped: string[];
    try {
      dropped = conn.transaction(() => {
        const tables = conn.prepare('SELECT table_name FROM telemetry_shards WHERE end_ms <= ? ORDER BY namespace_id, shard_window')
          .pluck().all(cutoffMs) as string[];
        for (const table of tables) conn.sqlite.exec(`DROP TABLE IF EXISTS "${table}"`);
        if (tables.length > 0) {
          conn.prepare(`DELETE FROM telemetry_blocks WHERE (namespace_id, start_ms) IN
            (SELECT namespace_id, start_ms FROM telemetry_shards WHERE end_ms <= ?)`).run(cutoffMs);
          conn.prepare('DELETE FROM telemetry_shards WHERE end_ms <= ?').run(cutoffMs);
          forgetStaged(conn, tables);
        }
        return tables;
      });
    } catch (err) {
      catalogue.reset();
      throw err;
    }
    // The mirror lists the dropped shards, and cached statements name their tables.
    if (dropped.length > 0) catalogue.reset();
    return dropped;
  });
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
