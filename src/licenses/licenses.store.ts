// All SQL of the license domain. Functions take the db (or the transaction handle) first and return promises; callers
// wrap multi-step sequences in db.tx and pass its handle down.
import type { Db } from '../db/open.ts';
import type { LicenseRow } from './licenses.schemas.ts';

export const CONTROLLER_NODE_TYPE = 'smartgridController';

export const LICENSE_COLUMNS = [
  'id', 'key', 'type', 'duration', 'grid_kw', 'solar_kw', 'battery_kw', 'ev_kw', 'creation_date', 'activation_date',
] as const;

/**
 * A page of every license, newest first (ties by id), optionally only claimed / unclaimed and activated / not yet
 * activated ones; with the number of licenses that match.
 */
export async function listLicenses(db: Db, filter: { claimed?: boolean; activated?: boolean }, page: { limit: number; offset: number }): Promise<{ rows: LicenseRow[]; total: number }> {
  let q = db.qb.selectFrom('licenses');
  if (filter.claimed !== undefined) {
    q = q.where((eb) => {
      const linked = eb.exists(eb.selectFrom('license_datalink').select('license_datalink.id').whereRef('license_datalink.license_id', '=', 'licenses.id'));
      return filter.claimed ? linked : eb.not(linked);
    });
  }
  if (filter.activated !== undefined) q = q.where('activation_date', filter.activated ? 'is not' : 'is', null);
  const rows = await db.all(q.select(LICENSE_COLUMNS).orderBy('creation_date', 'desc').orderBy('id').limit(page.limit).offset(page.offset));
  const total = Number((await db.get(q.select((eb) => eb.fn.countAll<number>().as('n'))))?.n ?? 0);
  return { rows, total };
}

/** Inserts one license; false (nothing written) when the key is taken. */
export async function insertLicense(db: Db, row: LicenseRow): Promise<boolean> {
  return (await db.run(db.qb.insertInto('licenses').values(row).onConflict((oc) => oc.column('key').doNothing()))).changes === 1;
}

/** Exact, case-sensitive match (the column has the default BINARY collation). */
export async function findLicenseByKey(db: Db, key: string): Promise<LicenseRow | undefined> {
  return db.get(db.qb.selectFrom('licenses').select(LICENSE_COLUMNS).where('key', '=', key));
}

export async function findLicenseById(db: Db, id: string): Promise<LicenseRow | undefined> {
  return db.get(db.qb.selectFrom('licenses').select(LICENSE_COLUMNS).where('id', '=', id));
}

/** The device a license is linked to, if any. */
export async function linkedDeviceId(db: Db, licenseId: string): Promise<number | undefined> {
  return (await db.get(db.qb.selectFrom('license_datalink').select('device_id').where('license_id', '=', licenseId)))?.device_id;
}

/** Sets the activation time unless one is set already; false when another activation won. */
export async function setActivation(db: Db, licenseId: string, at: number): Promise<boolean> {
  return (await db.run(db.qb.updateTable('licenses').set({ activation_date: at })
    .where('id', '=', licenseId).where('activation_date', 'is', null))).changes === 1;
}

/** Links a license to a device; false when the license is linked already (license_id is UNIQUE). */
export async function insertDatalink(db: Db, licenseId: string, deviceId: number, now: number): Promise<boolean> {
  return (await db.run(db.qb.insertInto('license_datalink').values({ license_id: licenseId, device_id: deviceId, created_at: now })
    .onConflict((oc) => oc.column('license_id').doNothing()))).changes === 1;
}

export interface DeviceByNodeId { id: number; isController: boolean }

/** The device whose properties.nodeId is this string (nodeIds are unique among devices). */
export async function findDeviceByNodeId(db: Db, nodeId: string): Promise<DeviceByNodeId | undefined> {
  const row = await db.get(db.qb.selectFrom('devices').select(['id', 'node_type']).where('node_id', '=', nodeId));
  return row && { id: row.id, isController: row.node_type === CONTROLLER_NODE_TYPE };
}

/** Licenses linked to a device, in the order they were claimed. */
export async function licensesOfDevice(db: Db, deviceId: number): Promise<LicenseRow[]> {
  return db.all(db.qb.selectFrom('license_datalink as dl')
    .innerJoin('licenses as l', 'l.id', 'dl.license_id')
    .select(LICENSE_COLUMNS.map((c) => `l.${c}` as const))
    .where('dl.device_id', '=', deviceId)
    .orderBy('dl.id'));
}
