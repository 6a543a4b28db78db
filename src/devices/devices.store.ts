// All SQL on the devices table. Properties are stored as JSON text; nodeId/nodeType are generated, indexed columns.
// Functions take the db (or the transaction handle) first and return promises.
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { Db } from '../db/open.ts';
import { isIn } from '../db/in-list.ts';

export interface DeviceRow {
  id: number;
  /** JSON text of the properties object */
  properties: string;
  /** Unix milliseconds */
  last_update: number;
}

const COLUMNS = ['id', 'properties', 'last_update'] as const;
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
  return db.all(db.qb.selectFrom('devices').select(COLUMNS).where(isIn('id', ids)).orderBy('id'));
}

/** What a scan reads besides id and lastUpdate: nothing, or the properties (for conditions and listings). */
export type ScanMode = 'times' | 'properties';
export type ScannedDevice = { id: number; last_update: number; properties?: string };

/**
 * Ids and times only (a skipHash comparison over thousands of devices), with scanDevices' pre-filters: one text
 * `id:time,id:time,...` (parseTimes reads it) instead of a row object per device, which cost more than the reading.
 */
export async function deviceTimesText(db: Db, ids: readonly number[], where: DeviceWhere): Promise<string> {
  const pairs = await db.get(db.qb.selectFrom('devices').select(TIMES_TEXT[db.backend].as('pairs')).where(narrowedTo(db, ids, where)));
  return pairs?.pairs ?? '';
}

/** Ascending distinct integers from the first to the last with none missing. */
function isRange(ids: readonly number[]): boolean {
  if (ids.length < 2 || ids[ids.length - 1]! - ids[0]! + 1 !== ids.length) return false;
  for (let i = 1; i < ids.length; i++) if (ids[i]! !== ids[i - 1]! + 1) return false;
  return true;
}

type DeviceWhere = { nodeId?: readonly string[]; nodeType?: readonly string[]; isActive?: boolean };

function narrowedTo(db: Db, ids: readonly number[], where: DeviceWhere) {
  return (eb: ExpressionBuilder<Schema, 'devices'>) => {
    // ids that fill their range (devices provisioned together): a range scan of the primary key, a third of the time
    // of seeking as many ids one by one (and no id list to send)
    const all: Expression<SqlBool>[] = [isRange(ids) ? eb.between('id', ids[0]!, ids[ids.length - 1]!) : isIn('id', ids)];
    if (where.nodeId) all.push(isIn('node_id', where.nodeId));
    if (where.nodeType) all.push(isIn('node_type', where.nodeType));
    if (where.isActive !== undefined) all.push(eb(IS_ACTIVE[db.backend], '=', where.isActive ? 'true' : 'false'));
    return eb.and(all);
  };
}

/**
 * The devices with these ids, ascending, reading only what `mode` needs; optional pre-filters on the stored well-known
 * values. They only narrow: whether the caller may read those properties is decided by the caller.
 */
export async function scanDevices(
  db: Db, ids: readonly number[], where: DeviceWhere, mode: ScanMode,
): Promise<ScannedDevice[]> {
  if (mode === 'times') return parseTimes(await deviceTimesText(db, ids, where));
  // rows as arrays, made into objects here: one object shape, built in JavaScript, instead of the driver's key by key
  const rows = await db.rows<[number, string, number]>(db.qb.selectFrom('devices').select(COLUMNS).where(narrowedTo(db, ids, where)).orderBy('id'));
  const out = new Array<ScannedDevice>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const [id, properties, last_update] = rows[i]!;
    out[i] = { id, last_update, properties };
  }
  return out;
}

// no ORDER BY inside the aggregate (it costs a sort of its own): the pairs come in the order the ids were sought, and
// parseTimes sorts them when they do not
const TIMES_TEXT = {
  sqlite: sql<string | null>`group_concat(devices.id || ':' || devices.last_update, ',')`,
  postgres: sql<string | null>`string_agg(devices.id || ':' || devices.last_update, ',')`,
};

/** deviceTimesText's `1:1700000000000,2:...` -> rows ascending by id (integers written by the database: digits only) */
export function parseTimes(text: string): ScannedDevice[] {
  const out: ScannedDevice[] = [];
  if (!text) return out;
  let id = 0;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 58 /* : */) { id = n; n = 0; }
    else if (c === 44 /* , */) { out.push({ id, last_update: n }); n = 0; }
    else n = n * 10 + (c - 48);
  }
  out.push({ id, last_update: n });
  for (let i = 1; i < out.length; i++) if (out[i - 1]!.id > out[i]!.id) return out.sort((a, b) => a.id - b.id);
  return out;
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
