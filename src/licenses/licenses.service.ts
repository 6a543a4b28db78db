// License operations that read, authorize and write in one transaction. Activation and claim are check-then-write
// sequences: inside db.tx (IMMEDIATE; the transaction holds the connection until it ends, and every statement goes
// through its handle) no other request can run between the check and the write, so two simultaneous activations (or
// claims) of one key end with exactly one winner; the conditional UPDATE / INSERT ... ON CONFLICT DO NOTHING would
// still refuse the loser if another process held the database.
// Messages never carry a license key: keys are secrets and error bodies may end up in logs downstream.
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/open.ts';
import { deviceAccess } from '../access/rights.ts';
import { ApiError } from '../http/errors.ts';
import { generateLicenseKey, type RandomBytes } from './license-keys.ts';
import { deactivationOf, type CreateLicenseInput, type LicenseRow } from './licenses.schemas.ts';
import {
  findDeviceByNodeId, findLicenseById, findLicenseByKey, insertDatalink, insertLicense, licensesOfDevice, linkedDeviceId,
  setActivation,
} from './licenses.store.ts';

/** Creates `count` licenses (or the one with the chosen key). Undefined when the chosen key is taken. */
export async function createLicenses(db: Db, input: CreateLicenseInput, now: number, random?: RandomBytes): Promise<LicenseRow[] | undefined> {
  return db.tx(async (tx) => {
    const created: LicenseRow[] = [];
    for (let i = 0; i < input.count; i++) {
      const row = (key: string): LicenseRow => ({
        id: randomUUID(), key, type: input.type, duration: input.duration,
        grid_kw: input.gridKw, solar_kw: input.solarKw, battery_kw: input.batteryKw, ev_kw: input.evKw,
        creation_date: now, activation_date: null,
      });
      if (input.key !== undefined) {
        const license = row(input.key);
        if (!await insertLicense(tx, license)) return undefined;
        created.push(license);
        continue;
      }
      // 125 random bits make a collision practically impossible; should one happen, draw again rather than fail.
      for (let attempt = 0; ; attempt++) {
        const license = row(generateLicenseKey(random));
        if (await insertLicense(tx, license)) { created.push(license); break; }
        if (attempt >= 10) throw new Error('could not draw an unused license key (is the random source broken?)');
      }
    }
    return created;
  });
}

/** Activates the license with this key at `at` (Unix ms) on behalf of the user. */
export async function activateLicense(db: Db, userId: number, key: string, at: number): Promise<LicenseRow> {
  return db.tx(async (tx) => {
    const license = await findLicenseByKey(tx, key);
    if (!license) throw new ApiError('NOT_FOUND', 'no license with this key');
    // Anyone may activate an unlinked license; a linked one only a user who can read its controller.
    const deviceId = await linkedDeviceId(tx, license.id);
    if (deviceId !== undefined && !(await deviceAccess(tx, userId, deviceId)).canRead) {
      throw new ApiError('FORBIDDEN', 'this license is linked to a controller you cannot read');
    }
    if (license.activation_date !== null) throw new ApiError('ALREADY_ACTIVATED', 'this license is already activated');
    if (deactivationOf(at, license.duration) === undefined) {
      throw new ApiError('BAD_REQUEST', 'activationIso: the deactivation date would fall after the year 9999');
    }
    if (!await setActivation(tx, license.id, at)) throw new ApiError('ALREADY_ACTIVATED', 'this license is already activated');
    return (await findLicenseById(tx, license.id))!;
  });
}

/** The controller with this nodeId as the user may see it: 404 when missing, not a controller, or unreadable. */
async function visibleController(db: Db, userId: number, nodeId: string) {
  const device = await findDeviceByNodeId(db, nodeId);
  const access = device?.isController ? await deviceAccess(db, userId, device.id) : undefined;
  // One message for all three cases: an invisible controller must look exactly like a missing one.
  if (!device || !access?.canRead) throw new ApiError('NOT_FOUND', `no controller with nodeId ${JSON.stringify(nodeId)}`);
  return { deviceId: device.id, access };
}

/** Links the license with this key to the controller `nodeId`; needs monitorManagement on the controller. */
export async function claimLicense(db: Db, userId: number, key: string, nodeId: string, now: number): Promise<{ id: string; key: string; nodeId: string }> {
  return db.tx(async (tx) => {
    // Rights on the controller first, so a caller without them learns nothing about keys.
    const { deviceId, access } = await visibleController(tx, userId, nodeId);
    if (!access.monitorManagement) {
      throw new ApiError('FORBIDDEN', `claiming a license needs monitorManagement on controller ${JSON.stringify(nodeId)}`);
    }
    const license = await findLicenseByKey(tx, key);
    if (!license) throw new ApiError('NOT_FOUND', 'no license with this key');
    if (!await insertDatalink(tx, license.id, deviceId, now)) throw new ApiError('ALREADY_CLAIMED', 'this license is already claimed');
    return { id: license.id, key: license.key, nodeId };
  });
}

/** Licenses linked to the controller `nodeId`, which the user must be able to read. */
export async function controllerLicenses(db: Db, userId: number, nodeId: string): Promise<LicenseRow[]> {
  // Plain reads, no transaction: each statement is atomic on its own; a write may commit between the rights check and
  // the listing.
  return licensesOfDevice(db, (await visibleController(db, userId, nodeId)).deviceId);
}
