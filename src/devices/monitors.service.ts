// Monitors relation writes, each one transaction. Rights are checked by the caller (authorize.ts) before these run.
// Invariant: a device keeps at least one relation with monitorManagement — an update that would take the last one
// away is refused (409), a delete of the last one deletes the device with its other relations and license links.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { deleteDevices } from './devices.store.ts';
import {
  countMonitorManagement, deleteMonitors, findMonitorsByIds, monitorsIdsOfDevice, updateMonitors, upsertMonitors,
  type MonitorsInput, type MonitorsRow,
} from './monitors.store.ts';
import { toMonitors, type Monitors } from './serialize.ts';
import { relationsOfRole } from '../http/validate.ts';

export interface DeletionInfo {
  deletedNodeIds: number[];
  deletedRelationIds: number[];
}

/** The relations with these ids, in request order; 404 for one that does not exist or belongs to another role. */
export async function requireMonitorsOfRole(db: Db, roleId: number, ids: readonly number[]): Promise<MonitorsRow[]> {
  return relationsOfRole(await findMonitorsByIds(db, ids), ids, roleId, (r) => r.role_id, 'monitors relation');
}

/** Creates or updates (R, D) for each device, in the given order. */
export async function putMonitorsOnDevices(db: Db, roleId: number, deviceIds: readonly number[], input: MonitorsInput): Promise<Monitors[]> {
  return db.tx(async (tx) => {
    const before: { deviceId: number; hadMonitorManagement: boolean }[] = [];
    for (const deviceId of deviceIds) before.push({ deviceId, hadMonitorManagement: await countMonitorManagement(tx, deviceId) > 0 });
    const rows: MonitorsRow[] = [];
    for (const deviceId of deviceIds) rows.push(await upsertMonitors(tx, roleId, deviceId, input));
    for (const { deviceId, hadMonitorManagement } of before) await requireMonitorManagementLeft(tx, deviceId, hadMonitorManagement);
    return rows.map(toMonitors);
  });
}

export async function updateMonitorsRows(db: Db, rows: readonly MonitorsRow[], input: MonitorsInput): Promise<Monitors[]> {
  return db.tx(async (tx) => {
    const updated: MonitorsRow[] = [];
    // An update that changes nothing writes nothing. On PostgreSQL every write unit is SERIALIZABLE (db/postgres.ts): N
    // concurrent identical updates that all wrote the row would abort one another with 40001 until one used up the
    // bounded retry and answered 500 (test/http/races.test.ts, last monitorManagement race); a read-only repeat does
    // not conflict. No lock is needed: the check below still runs on what this transaction sees.
    for (const row of rows) updated.push(sameMonitors(row, input) ? row : await updateMonitors(tx, row.id, input));
    for (const deviceId of new Set(rows.map((r) => r.device_id))) {
      await requireMonitorManagementLeft(tx, deviceId, rows.some((r) => r.device_id === deviceId && r.monitor_management === 1));
    }
    return updated.map(toMonitors);
  });
}

/** Deletes the relations; a device that thereby loses its last monitorManagement relation is deleted too. */
export async function deleteMonitorsRows(db: Db, rows: readonly MonitorsRow[]): Promise<DeletionInfo> {
  return db.tx(async (tx) => {
    // a relation may be gone already, with a device deleted for an earlier row of the same request
    const present: MonitorsRow[] = [];
    for (const r of rows) if ((await findMonitorsByIds(tx, [r.id])).length === 1) present.push(r);
    rows = present;
    const relationIds = new Set(rows.map((r) => r.id));
    await deleteMonitors(tx, [...relationIds]);
    const deletedNodeIds: number[] = [];
    for (const deviceId of new Set(rows.map((r) => r.device_id))) {
      const lostMonitorManagement = rows.some((r) => r.device_id === deviceId && r.monitor_management === 1);
      if (!lostMonitorManagement || await countMonitorManagement(tx, deviceId) > 0) continue;
      for (const id of await monitorsIdsOfDevice(tx, deviceId)) relationIds.add(id);
      await deleteDevices(tx, [deviceId]); // cascades to its monitors relations and license_datalink rows
      deletedNodeIds.push(deviceId);
    }
    return { deletedNodeIds: deletedNodeIds.sort((a, b) => a - b), deletedRelationIds: [...relationIds].sort((a, b) => a - b) };
  });
}

/** Does the stored relation already hold exactly this input? (reads/edits are stored as JSON.stringify wrote them) */
function sameMonitors(row: MonitorsRow, input: MonitorsInput): boolean {
  return row.monitor_management === (input.monitorManagement ? 1 : 0)
    && row.reads === JSON.stringify(input.reads) && row.edits === JSON.stringify(input.edits);
}

async function requireMonitorManagementLeft(db: Db, deviceId: number, hadMonitorManagement: boolean): Promise<void> {
  if (hadMonitorManagement && await countMonitorManagement(db, deviceId) === 0) {
    throw new ApiError('LAST_MONITOR_MANAGEMENT', `device ${deviceId} would be left without a monitors relation with monitorManagement; `
      + 'give another relation monitorManagement first, or delete the relation to delete the device');
  }
}
