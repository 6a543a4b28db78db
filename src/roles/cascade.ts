// DELETE of a manages relation with the cascade of docs/api.md#cascade: a child role that loses its last incoming relation is
// deleted with its member and monitors relations and its outgoing relations, recursively; a device that thereby loses
// its last monitors relation with monitorManagement is deleted with its other monitors relations (license_datalink rows
// go by foreign-key cascade, so those licenses can be claimed again). The root role is never deleted.
//
// "Last incoming relation" depends on what the cascade has already removed, so this is a fixpoint, not one recursive
// CTE: a worklist of roles to re-examine, each step a few index seeks. Run inside the caller's transaction (pass its
// handle).
import type { Db } from '../db/open.ts';
import { ROOT_ROLE_ID } from '../access/root.ts';
import {
  deleteDeviceRow, deleteManagesRow, deleteRoleRow, hasManagingMonitor, hasParent, managedChild, monitorIdsOfDevice, relationsOfRole,
} from './cascade.store.ts';

export interface Deleted {
  roles: number[];
  devices: number[];
  manages: number[];
  members: number[];
  monitors: number[];
}

/** The wire shape: nodes = roles then devices, relations = manages, members, monitors (each ascending); `deleted` (ours) tells them apart. */
export interface DeletionInfo {
  deletedNodeIds: number[];
  deletedRelationIds: number[];
  deleted: Deleted;
}

export function toDeletionInfo(d: Deleted): DeletionInfo {
  const asc = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const deleted: Deleted = {
    roles: asc(d.roles), devices: asc(d.devices), manages: asc(d.manages), members: asc(d.members), monitors: asc(d.monitors),
  };
  return {
    deletedNodeIds: [...deleted.roles, ...deleted.devices],
    deletedRelationIds: [...deleted.manages, ...deleted.members, ...deleted.monitors],
    deleted,
  };
}

/** Deletes manages relation `managesId` and everything that hangs only on it. */
export async function deleteManagesCascade(tx: Db, managesId: number): Promise<Deleted> {
  const out: Deleted = { roles: [], devices: [], manages: [], members: [], monitors: [] };
  const child = await managedChild(tx, managesId);
  if (child === undefined) return out;
  await deleteManagesRow(tx, managesId);
  out.manages.push(managesId);

  /** devices that lost a relation with monitorManagement: candidates for deletion once the roles are gone */
  const lostManagement = new Set<number>();

  const queue = [child];
  while (queue.length > 0) {
    const roleId = queue.shift()!;
    if (roleId === ROOT_ROLE_ID) continue;
    if (await hasParent(tx, roleId)) continue;
    const { outgoing, monitors, members } = await relationsOfRole(tx, roleId);
    out.members.push(...members.map((m) => m.id));
    out.monitors.push(...monitors.map((m) => m.id));
    out.manages.push(...outgoing.map((m) => m.id));
    for (const m of monitors) if (m.monitor_management === 1) lostManagement.add(m.device_id);
    await deleteRoleRow(tx, roleId);
    out.roles.push(roleId);
    // a child with several parents in the doomed subgraph is examined again after each; it goes with the last one
    queue.push(...outgoing.map((m) => m.child_role_id));
  }

  for (const deviceId of [...lostManagement].sort((a, b) => a - b)) {
    if (await hasManagingMonitor(tx, deviceId)) continue;
    out.monitors.push(...await monitorIdsOfDevice(tx, deviceId));
    if (await deleteDeviceRow(tx, deviceId)) out.devices.push(deviceId);
  }
  return out;
}
