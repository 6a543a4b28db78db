// The device rules of docs/api.md#devices, each stated once, answered by the rights engine (src/access/rights.ts). Routes call these
// first; they throw 404 for what the caller may not see and 403 (naming what is missing) for what it may not do.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import {
  authorizersWithMonitorManagement, authorizersWithRight, canEditProperty, canReadProperty, deviceAccesses,
  type DeviceAccess,
} from '../access/rights.ts';
import { requireVisibleRole } from '../access/guards.ts';

// Up to this many ids, one upward walk per device is cheaper than a downward walk over everything u reaches.
const PER_DEVICE_WALKS = 32;

/** Access of u to each device, in request order; 404 for the first one u may not read (or that does not exist). */
export async function requireReadableDevices(db: Db, userId: number, ids: readonly number[]): Promise<DeviceAccess[]> {
  const byId = await deviceAccesses(db, userId, ids, PER_DEVICE_WALKS);
  return ids.map((id) => {
    const access = byId.get(id);
    if (!access?.canRead) throw new ApiError('NOT_FOUND', `device ${id} not found`);
    return access;
  });
}

/**
 * PATCH/PUT: allowed with monitorManagement, or when every written property is editable and every property only read
 * (test, copy's from) is readable. Editable properties are the union over all of u's relations (docs/api.md#device-rights).
 */
export function requirePropertyRights(access: DeviceAccess, writes: Iterable<string>, reads: Iterable<string> = []): void {
  if (access.monitorManagement) return;
  const notEditable = [...writes].filter((p) => !canEditProperty(access, p));
  if (notEditable.length > 0) {
    throw new ApiError('FORBIDDEN', `no edit right on ${names(notEditable)} of device ${access.deviceId} (needs monitorManagement or the properties in edits)`);
  }
  const notReadable = [...reads].filter((p) => !canReadProperty(access, p));
  if (notReadable.length > 0) {
    throw new ApiError('FORBIDDEN', `no read right on ${names(notReadable)} of device ${access.deviceId} (needs monitorManagement or the properties in reads or edits)`);
  }
}

export function requireMonitorManagement(access: DeviceAccess, what: string): void {
  if (!access.monitorManagement) throw new ApiError('FORBIDDEN', `${what} needs monitorManagement on device ${access.deviceId}`);
}

/** The member roles that on their own meet (a): direct or indirect deviceManagement over R, or indirect roleManagement. */
async function deviceManagers(db: Db, userId: number, roleId: number): Promise<Set<number>> {
  return new Set([
    ...await authorizersWithRight(db, userId, roleId, 'deviceManagement', 'either'),
    ...await authorizersWithRight(db, userId, roleId, 'roleManagement', 'indirect'),
  ]);
}

/** POST /v1/device?roleId=R: a one-condition rule, so any authorizing role may meet it. */
export async function requireDeviceCreation(db: Db, userId: number, roleId: number): Promise<void> {
  await requireVisibleRole(db, userId, roleId);
  if ((await deviceManagers(db, userId, roleId)).size === 0) {
    throw new ApiError('FORBIDDEN', `creating a device for role ${roleId} needs deviceManagement (direct or indirect) or indirect roleManagement over it`);
  }
}

/**
 * Monitors PUT/DELETE on (R, D): ONE authorizing role must meet both (a) deviceManagement direct or indirect over R, or
 * indirect roleManagement over R, and (b) monitorManagement on D. `managers` is (a)'s list, computed once per R.
 */
export async function requireMonitorsChange(db: Db, userId: number, roleId: number, deviceId: number, managers?: Set<number>): Promise<void> {
  const wanted = managers ?? await deviceManagers(db, userId, roleId);
  const both = (await authorizersWithMonitorManagement(db, userId, deviceId)).some((a) => wanted.has(a));
  if (!both) {
    throw new ApiError('FORBIDDEN', `changing monitors of role ${roleId} on device ${deviceId} needs one member role with deviceManagement `
      + `(direct or indirect) or indirect roleManagement over role ${roleId} and monitorManagement on device ${deviceId}`);
  }
}

export async function monitorsManagers(db: Db, userId: number, roleId: number): Promise<Set<number>> {
  return deviceManagers(db, userId, roleId);
}

function names(properties: readonly string[]): string {
  return `${properties.length === 1 ? 'property' : 'properties'} ${properties.map((p) => JSON.stringify(p)).join(', ')}`;
}
