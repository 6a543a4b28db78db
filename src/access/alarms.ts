// Rights of alarms (docs/api.md#alarm-rights). A rule belongs to a role R and watches what R may read. Managing R's
// rules takes alarmManagement over R, direct or indirect, or indirect roleManagement over R (the rule of the other
// flags: deviceManagement for devices). Acknowledging or clearing an alarm takes the same right over the rule's role,
// or monitorManagement on the alarm's device. Seeing an alarm takes reading its device.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { requireRights, requireVisibleRole, rightsHold, type RightOver } from './guards.ts';
import { authorizersWithMonitorManagement, reaches, readableDevicesOfRole, type DeviceAccess } from './rights.ts';

const manageRule = (roleId: number): RightOver[] => [
  { right: 'alarmManagement', roleId, mode: 'either' },
  { right: 'roleManagement', roleId, mode: 'indirect' },
];

/** 404 unless the role is in Reach(u); 403 unless u may manage its alarm rules. */
export async function requireAlarmManagement(db: Db, userId: number, roleId: number): Promise<void> {
  await requireVisibleRole(db, userId, roleId);
  await requireRights(db, userId, [manageRule(roleId)]);
}

/** A rule is visible to the members, direct or indirect, of its role: 404 otherwise (also for a rule that does not exist). */
export async function requireVisibleRule(db: Db, userId: number, ruleId: number, roleId: number | undefined): Promise<void> {
  if (roleId === undefined || !(await reaches(db, userId, roleId))) throw new ApiError('NOT_FOUND', `alarm rule ${ruleId} not found`);
}

/** Acknowledge / clear: alarm management over the rule's role, or monitorManagement on the device. */
export async function mayHandleAlarm(db: Db, userId: number, roleId: number, deviceId: number): Promise<boolean> {
  if ((await authorizersWithMonitorManagement(db, userId, deviceId)).length > 0) return true;
  return rightsHold(db, userId, [manageRule(roleId)]);
}

/** The devices the rule's role may read: what a rule of that role may watch. */
export async function devicesOfRole(db: Db, roleId: number): Promise<DeviceAccess[]> {
  return readableDevicesOfRole(db, roleId);
}
