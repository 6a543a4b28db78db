// The statements of the manages cascade (cascade.ts): each a few index seeks, run inside the caller's transaction.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';

export async function managedChild(tx: Db, managesId: number): Promise<number | undefined> {
  return (await tx.get(sql<{ child_role_id: number }>`SELECT child_role_id FROM manages WHERE id = ${managesId}`))?.child_role_id;
}

export async function deleteManagesRow(tx: Db, managesId: number): Promise<void> {
  await tx.run(sql`DELETE FROM manages WHERE id = ${managesId}`);
}

export async function hasParent(tx: Db, roleId: number): Promise<boolean> {
  return (await tx.get(sql<{ found: 1 }>`SELECT 1 AS found FROM manages WHERE child_role_id = ${roleId} LIMIT 1`)) !== undefined;
}

/** What hangs on a role: its outgoing manages, its monitors and its members. */
export async function relationsOfRole(tx: Db, roleId: number) {
  return {
    outgoing: await tx.all(sql<{ id: number; child_role_id: number }>`SELECT id, child_role_id FROM manages WHERE parent_role_id = ${roleId}`),
    monitors: await tx.all(sql<{ id: number; device_id: number; monitor_management: number }>`SELECT id, device_id, monitor_management FROM monitors WHERE role_id = ${roleId}`),
    members: await tx.all(sql<{ id: number }>`SELECT id FROM members WHERE role_id = ${roleId}`),
  };
}

/** Deletes the role; foreign keys cascade its members, monitors and manages rows (both directions). */
export async function deleteRoleRow(tx: Db, roleId: number): Promise<void> {
  await tx.run(sql`DELETE FROM roles WHERE id = ${roleId}`);
}

export async function hasManagingMonitor(tx: Db, deviceId: number): Promise<boolean> {
  return (await tx.get(sql<{ found: 1 }>`SELECT 1 AS found FROM monitors WHERE device_id = ${deviceId} AND monitor_management = 1 LIMIT 1`)) !== undefined;
}

export async function monitorIdsOfDevice(tx: Db, deviceId: number): Promise<number[]> {
  return (await tx.all(sql<{ id: number }>`SELECT id FROM monitors WHERE device_id = ${deviceId}`)).map((m) => m.id);
}

/** Deletes the device (its monitors and license_datalink rows go by foreign-key cascade); whether it existed. */
export async function deleteDeviceRow(tx: Db, deviceId: number): Promise<boolean> {
  return (await tx.run(sql`DELETE FROM devices WHERE id = ${deviceId}`)).changes === 1;
}
