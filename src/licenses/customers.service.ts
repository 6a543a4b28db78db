// Customer operations that read and write in one transaction: an order's checks and its insert happen while the
// transaction holds the connection, with no other request in between, so two orders racing for one license end with
// exactly one winner (order_licenses.license_id is UNIQUE as well).
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { existingLicenseIds, findCustomer, insertOrder, orderedLicenseIds } from './customers.store.ts';
import type { OrderJson } from './customers.schemas.ts';

/** Puts the licenses in a new order of the customer. 404 unknown customer or license; 409 a license already in an order. */
export async function createOrder(db: Db, customerId: string, licenseIds: readonly string[], now: number): Promise<OrderJson> {
  return db.tx(async (tx) => {
    if (!await findCustomer(tx, customerId)) throw new ApiError('NOT_FOUND', `customer ${customerId} not found`);
    const existing = await existingLicenseIds(tx, licenseIds);
    const missing = licenseIds.filter((id) => !existing.has(id));
    if (missing.length > 0) throw new ApiError('NOT_FOUND', `no license with id ${missing.join(', ')}`);
    const taken = await orderedLicenseIds(tx, licenseIds);
    if (taken.size > 0) {
      throw new ApiError('LICENSE_IN_ORDER', `license ${licenseIds.filter((id) => taken.has(id)).join(', ')} is already in an order`);
    }
    const order = { id: randomUUID(), customerId, creationDate: now, licenseIds };
    await insertOrder(tx, order);
    return { id: order.id, customerId, creationDate: new Date(now).toISOString(), licenseIds: [...licenseIds] };
  });
}
