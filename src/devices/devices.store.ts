// All SQL on the devices table. Properties are stored as JSON text; nodeId/nodeType are generated, indexed columns.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';

export interface DeviceRow {
  id: number;
  /** JSON text of the properties object */
  properties: string;
  /** Unix milliseconds */
  last_update: number;
}

const COLUMNS = ['id', 'properties', 'last_update'] as const;

export function findDevice(db: Db, id: number): DeviceRow | undefined {
  return db.get(db.qb.selectFrom('devices').select(COLUMNS).where('id', '=', id));
}

/**
 * The devices with the given ids, ascending; optionally only those whose nodeId / nodeType generated column is one of
 * the given values (a pre-filter only: whether the caller may read those properties is decided by the caller).
 */
export function findDevices(db: Db, ids: readonly number[], where: { nodeId?: readonly string[]; nodeType?: readonly string[] } = {}): DeviceRow[] {
  let q = db.qb.selectFrom('devices').select(COLUMNS)
    .where('id', 'in', sql<number>`(SELECT value FROM json_each(${JSON.stringify(ids)}))`);
  if (where.nodeId) q = q.where('node_id', 'in', sql<string>`(SELECT value FROM json_each(${JSON.stringify(where.nodeId)}))`);
  if (where.nodeType) q = q.where('node_type', 'in', sql<string>`(SELECT value FROM json_each(${JSON.stringify(where.nodeType)}))`);
  return db.all(q.orderBy('id'));
}

export function insertDevice(db: Db, properties: string, now: number): DeviceRow {
  return db.get(db.qb.insertInto('devices')
    .values({ properties, last_update: now, created_at: now })
    .returning(COLUMNS))!;
}

export function updateDeviceProperties(db: Db, id: number, properties: string, lastUpdate: number): void {
  db.run(db.qb.updateTable('devices').set({ properties, last_update: lastUpdate }).where('id', '=', id));
}

/** The id of the device holding this nodeId, other than `exceptId`. */
export function nodeIdHolder(db: Db, nodeId: string, exceptId?: number): number | undefined {
  let q = db.qb.selectFrom('devices').select('id').where('node_id', '=', nodeId);
  if (exceptId !== undefined) q = q.where('id', '<>', exceptId);
  return db.get(q)?.id;
}

/** Deletes devices; monitors relations and license_datalink rows go with them (ON DELETE CASCADE). */
export function deleteDevices(db: Db, ids: readonly number[]): void {
  if (ids.length > 0) db.run(db.qb.deleteFrom('devices').where('id', 'in', ids));
}

/** lastUpdate strictly increases per device: two changes in the same millisecond still order. */
export function nextLastUpdate(previous: number, now: number): number {
  return Math.max(now, previous + 1);
}
