// All SQL on the monitors table (role -> device relations with monitorManagement and the reads/edits lists).
// Functions take the db (or the transaction handle) first and return promises.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { isIn } from '../db/in-list.ts';

export interface MonitorsRow {
  id: number;
  role_id: number;
  device_id: number;
  monitor_management: 0 | 1;
  /** JSON text of a string array */
  reads: string;
  edits: string;
}

export interface MonitorsInput {
  monitorManagement: boolean;
  reads: readonly string[];
  edits: readonly string[];
}

const COLUMNS = ['id', 'role_id', 'device_id', 'monitor_management', 'reads', 'edits'] as const;

export async function findMonitorsByIds(db: Db, ids: readonly number[]): Promise<MonitorsRow[]> {
  return db.all(db.qb.selectFrom('monitors').select(COLUMNS).where(isIn('id', ids)).orderBy('id'));
}

export async function findMonitorsOf(db: Db, roleId: number, deviceId: number): Promise<MonitorsRow | undefined> {
  return db.get(db.qb.selectFrom('monitors').select(COLUMNS).where('role_id', '=', roleId).where('device_id', '=', deviceId));
}

/** Relations of the given roles matching every given filter, ascending by id. */
export async function queryMonitors(db: Db, roleIds: readonly number[], filter: { id?: readonly number[]; roleId?: readonly number[]; deviceId?: readonly number[] }): Promise<MonitorsRow[]> {
  let q = db.qb.selectFrom('monitors').select(COLUMNS).where(isIn('role_id', roleIds));
  if (filter.id) q = q.where(isIn('id', filter.id));
  if (filter.roleId) q = q.where(isIn('role_id', filter.roleId));
  if (filter.deviceId) q = q.where(isIn('device_id', filter.deviceId));
  return db.all(q.orderBy('id'));
}

/** Creates (R, D) or updates the existing relation (one relation per pair); returns the stored row. */
export async function upsertMonitors(db: Db, roleId: number, deviceId: number, input: MonitorsInput): Promise<MonitorsRow> {
  const values = {
    monitor_management: (input.monitorManagement ? 1 : 0) as 0 | 1,
    reads: JSON.stringify(input.reads),
    edits: JSON.stringify(input.edits),
  };
  return (await db.get(db.qb.insertInto('monitors').values({ role_id: roleId, device_id: deviceId, ...values })
    .onConflict((oc) => oc.columns(['role_id', 'device_id']).doUpdateSet(values))
    .returning(COLUMNS)))!;
}

export async function updateMonitors(db: Db, id: number, input: MonitorsInput): Promise<MonitorsRow> {
  return (await db.get(db.qb.updateTable('monitors').set({
    monitor_management: input.monitorManagement ? 1 : 0,
    reads: JSON.stringify(input.reads),
    edits: JSON.stringify(input.edits),
  }).where('id', '=', id).returning(COLUMNS)))!;
}

export async function deleteMonitors(db: Db, ids: readonly number[]): Promise<void> {
  if (ids.length > 0) await db.run(db.qb.deleteFrom('monitors').where(isIn('id', ids)));
}

export async function monitorsIdsOfDevice(db: Db, deviceId: number): Promise<number[]> {
  return (await db.all(db.qb.selectFrom('monitors').select('id').where('device_id', '=', deviceId).orderBy('id'))).map((r) => r.id);
}

export async function countMonitorManagement(db: Db, deviceId: number): Promise<number> {
  return (await db.get(db.qb.selectFrom('monitors').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('device_id', '=', deviceId).where('monitor_management', '=', 1)))!.n;
}
