// All SQL of customers and orders. Functions take the db first; callers wrap multi-step sequences in db.tx.
import type { Db } from '../db/open.ts';
import type { LicenseRow } from '../licenses/licenses.schemas.ts';
import { LICENSE_COLUMNS } from '../licenses/licenses.store.ts';
import type { CustomerRow } from './customers.schemas.ts';
import { inJson, listParam } from '../db/in-list.ts';

const CUSTOMER_COLUMNS = ['id', 'name', 'role_id', 'creation_date'] as const;

export function insertCustomer(db: Db, row: CustomerRow): void {
  db.run(db.qb.insertInto('customers').values(row));
}

export function findCustomer(db: Db, id: string): CustomerRow | undefined {
  return db.get(db.qb.selectFrom('customers').select(CUSTOMER_COLUMNS).where('id', '=', id));
}

/** Customers of the given roles, oldest first (ties by id). */
export function customersOfRoles(db: Db, roleIds: readonly number[]): CustomerRow[] {
  return db.prepare(`SELECT ${CUSTOMER_COLUMNS.join(', ')} FROM customers WHERE role_id ${inJson()}
    ORDER BY creation_date, id`).all(listParam(roleIds)) as CustomerRow[];
}

/** Of these license ids, those that exist. */
export function existingLicenseIds(db: Db, ids: readonly string[]): Set<string> {
  return new Set(db.prepare(`SELECT id FROM licenses WHERE id ${inJson()}`).pluck().all(listParam(ids)) as string[]);
}

/** Of these license ids, those already in an order. */
export function orderedLicenseIds(db: Db, ids: readonly string[]): Set<string> {
  return new Set(db.prepare(`SELECT license_id FROM order_licenses WHERE license_id ${inJson()}`)
    .pluck().all(listParam(ids)) as string[]);
}

export function insertOrder(db: Db, order: { id: string; customerId: string; creationDate: number; licenseIds: readonly string[] }): void {
  db.run(db.qb.insertInto('orders').values({ id: order.id, customer_id: order.customerId, creation_date: order.creationDate }));
  order.licenseIds.forEach((licenseId, position) => {
    db.run(db.qb.insertInto('order_licenses').values({ order_id: order.id, license_id: licenseId, position }));
  });
}

/** The licenses in the customer's orders: by order (oldest first), then in the order's own order. */
export function licensesOfCustomer(db: Db, customerId: string): LicenseRow[] {
  return db.all(db.qb.selectFrom('orders as o')
    .innerJoin('order_licenses as ol', 'ol.order_id', 'o.id')
    .innerJoin('licenses as l', 'l.id', 'ol.license_id')
    .select(LICENSE_COLUMNS.map((c) => `l.${c}` as const))
    .where('o.customer_id', '=', customerId)
    .orderBy('o.creation_date').orderBy('o.id').orderBy('ol.position'));
}

/** The uuids of each license's controller links. */
export function datalinksOf(db: Db, licenseIds: readonly string[]): Map<string, string[]> {
  const rows = db.prepare(`SELECT license_id, uuid FROM license_datalink WHERE license_id ${inJson()}
    ORDER BY id`).all(listParam(licenseIds)) as { license_id: string; uuid: string }[];
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.license_id, [...(out.get(r.license_id) ?? []), r.uuid]);
  return out;
}
