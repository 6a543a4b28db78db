// All SQL of customers and orders. Functions take the db (or the transaction handle) first and return promises; callers
// wrap multi-step sequences in db.tx and pass its handle down.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import type { LicenseRow } from './licenses.schemas.ts';
import { LICENSE_COLUMNS } from './licenses.store.ts';
import type { CustomerRow } from './customers.schemas.ts';
import { inValues } from '../db/in-list.ts';

const CUSTOMER_COLUMNS = ['id', 'name', 'role_id', 'creation_date'] as const;

export async function insertCustomer(db: Db, row: CustomerRow): Promise<void> {
  await db.run(db.qb.insertInto('customers').values(row));
}

export async function findCustomer(db: Db, id: string): Promise<CustomerRow | undefined> {
  return db.get(db.qb.selectFrom('customers').select(CUSTOMER_COLUMNS).where('id', '=', id));
}

/** Customers of the given roles, oldest first (ties by id). */
export async function customersOfRoles(db: Db, roleIds: readonly number[]): Promise<CustomerRow[]> {
  return db.all(sql<CustomerRow>`SELECT ${sql.raw(CUSTOMER_COLUMNS.join(', '))} FROM customers WHERE role_id ${inValues(roleIds)}
    ORDER BY creation_date, id`);
}

/** Of these license ids, those that exist. */
export async function existingLicenseIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db.all(sql<{ id: string }>`SELECT id FROM licenses WHERE id ${inValues(ids)}`);
  return new Set(rows.map((r) => r.id));
}

/** Of these license ids, those already in an order. */
export async function orderedLicenseIds(db: Db, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db.all(sql<{ license_id: string }>`SELECT license_id FROM order_licenses WHERE license_id ${inValues(ids)}`);
  return new Set(rows.map((r) => r.license_id));
}

export async function insertOrder(db: Db, order: { id: string; customerId: string; creationDate: number; licenseIds: readonly string[] }): Promise<void> {
  await db.run(db.qb.insertInto('orders').values({ id: order.id, customer_id: order.customerId, creation_date: order.creationDate }));
  for (const [position, licenseId] of order.licenseIds.entries()) {
    await db.run(db.qb.insertInto('order_licenses').values({ order_id: order.id, license_id: licenseId, position }));
  }
}

/** The licenses in the customer's orders: by order (oldest first), then in the order's own order. */
export async function licensesOfCustomer(db: Db, customerId: string): Promise<LicenseRow[]> {
  return db.all(db.qb.selectFrom('orders as o')
    .innerJoin('order_licenses as ol', 'ol.order_id', 'o.id')
    .innerJoin('licenses as l', 'l.id', 'ol.license_id')
    .select(LICENSE_COLUMNS.map((c) => `l.${c}` as const))
    .where('o.customer_id', '=', customerId)
    .orderBy('o.creation_date').orderBy('o.id').orderBy('ol.position'));
}

/** The uuids of each license's controller links. */
export async function datalinksOf(db: Db, licenseIds: readonly string[]): Promise<Map<string, string[]>> {
  const rows = await db.all(sql<{ license_id: string; uuid: string }>`SELECT license_id, uuid FROM license_datalink
    WHERE license_id ${inValues(licenseIds)} ORDER BY id`);
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.license_id, [...(out.get(r.license_id) ?? []), r.uuid]);
  return out;
}
