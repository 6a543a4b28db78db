// All SQL on the devices table. Properties are stored as JSON text; nodeId/nodeType are generated, indexed columns.
// Functions take the db (or the transaction handle) first and return promises.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { valuesIn } from '../db/in-list.ts';

export interface DeviceRow {
  id: number;
  /** JSON text of the properties object */
  properties: string;
  /** Unix milliseconds */
  last_update: number;
}

const COLUMNS = ['id', 'properties', 'last_update'] as const;
/** `id IN (...)` with the list bound as one JSON parameter: one cached statement whatever the list's length */
/** `{"<key>":true,...}` over the stored top-level keys, in stored order: the editabilities of a full editor */
const ALL_EDITABLE = {
  sqlite: sql<string>`(SELECT json_group_object(key, json('true')) FROM json_each(devices.properties))`,
  // json (not jsonb) keeps the stored key order; written out by hand because json_object_agg's text has spaces
  // (`{ "a" : true }`), and this text goes into the answer verbatim: compact, as on SQLite
  postgres: sql<string>`(SELECT '{' || coalesce(string_agg(to_json(k)::text || ':true', ',' ORDER BY n), '') || '}'
    FROM json_object_keys(devices.properties::json) WITH ORDINALITY AS t(k, n))`,
};
/** `"true"`/`"false"` when the top-level isActive is that boolean */
const IS_ACTIVE = {
  sqlite: sql<string>`json_type(devices.properties, '$.isActive')`,
  postgres: sql<string>`(devices.properties::jsonb -> 'isActive')::text`,
};

export async function findDevice(db: Db, id: number): Promise<DeviceRow | undefined> {
  return db.get(db.qb.selectFrom('devices').select(COLUMNS).where('id', '=', id));
}

/** The devices with the given ids, ascending. */
export async function findDevices(db: Db, ids: readonly number[]): Promise<DeviceRow[]> {
  return db.all(db.qb.selectFrom('devices').select(COLUMNS).where('id', 'in', valuesIn(ids)).orderBy('id'));
}

export interface DeviceListRow extends DeviceRow {
  /** `{"<key>":true, ...}` over the top-level property keys, in stored order (the editabilities of a full editor) */
  all_editable: string;
}

/**
 * For listings: the devices with these ids, ascending, with their top-level keys read by SQLite, so a listing for a
 * caller that may see and edit everything needs no parse of the properties at all.
 */
export async function listDevices(db: Db, ids: readonly number[]): Promise<DeviceListRow[]> {
  return db.all(db.qb.selectFrom('devices')
    .select([...COLUMNS, ALL_EDITABLE[db.backend].as('all_editable')])
    .where('id', 'in', valuesIn(ids)).orderBy('id'));
}

/** What a scan reads besides id and lastUpdate: nothing, the properties (to evaluate conditions), or a listing row. */
export type ScanMode = 'times' | 'properties' | 'listing';
export type ScannedDevice = { id: number; last_update: number; properties?: string; all_editable?: string };

/**
 * The devices with these ids, ascending, reading only what `mode` needs; optional pre-filters on the stored well-known
 * values. They only narrow: whether the caller may read those properties is decided by the caller.
 */
export async function scanDevices(
  db: Db, ids: readonly number[], where: { nodeId?: readonly string[]; nodeType?: readonly string[]; isActive?: boolean }, mode: ScanMode,
): Promise<ScannedDevice[]> {
  let q = db.qb.selectFrom('devices').select(['id', 'last_update']).where('id', 'in', valuesIn(ids));
  if (mode !== 'times') q = q.select('properties');
  if (mode === 'listing') q = q.select(ALL_EDITABLE[db.backend].as('all_editable'));
  if (where.nodeId) q = q.where('node_id', 'in', valuesIn(where.nodeId));
  if (where.nodeType) q = q.where('node_type', 'in', valuesIn(where.nodeType));
  if (where.isActive !== undefined) q = q.where(IS_ACTIVE[db.backend], '=', where.isActive ? 'true' : 'false');
  return db.all(q.orderBy('id'));
}

export async function insertDevice(db: Db, properties: string, now: number): Promise<DeviceRow> {
  return (await db.get(db.qb.insertInto('devices')
    .values({ properties, last_update: now, created_at: now })
    .returning(COLUMNS)))!;
}

export async function updateDeviceProperties(db: Db, id: number, properties: string, lastUpdate: number): Promise<void> {
  await db.run(db.qb.updateTable('devices').set({ properties, last_update: lastUpdate }).where('id', '=', id));
}

/** The id of the device holding this nodeId, other than `exceptId`. */
export async function nodeIdHolder(db: Db, nodeId: string, exceptId?: number): Promise<number | undefined> {
  let q = db.qb.selectFrom('devices').select('id').where('node_id', '=', nodeId);
  if (exceptId !== undefined) q = q.where('id', '<>', exceptId);
  return (await db.get(q))?.id;
}

/** Deletes devices; monitors relations and license_datalink rows go with them (ON DELETE CASCADE). */
export async function deleteDevices(db: Db, ids: readonly number[]): Promise<void> {
  if (ids.length > 0) await db.run(db.qb.deleteFrom('devices').where('id', 'in', ids));
}

/** lastUpdate strictly increases per device: two changes in the same millisecond still order. */
export function nextLastUpdate(previous: number, now: number): number {
  return Math.max(now, previous + 1);
}
