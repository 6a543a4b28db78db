// Request and response schemas of customers, orders and a customer's licenses (validation and the OpenAPI document),
// and the serializers.
import * as v from 'valibot';
import { jsonId, qBool, qInt, uuid } from '../http/validate.ts';
import { License } from './licenses.schemas.ts';
import type { CustomersTable } from '../db/schema.ts';

const MAX_LIST = 1000;

const uuidArray = v.pipe(v.array(uuid, 'expected an array of uuids'), v.maxLength(MAX_LIST, `expected at most ${MAX_LIST} items`));

export const CreateCustomerQuery = v.strictObject({ roleId: qInt });
export const CreateCustomerBody = v.strictObject({
  name: v.pipe(v.string('expected a string'), v.trim(), v.minLength(1, 'expected 1 to 200 characters'), v.maxLength(200, 'expected 1 to 200 characters')),
});

export const CustomerQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    id: v.optional(uuidArray),
    roleId: v.optional(v.pipe(v.array(jsonId, 'expected an array of integers'), v.maxLength(MAX_LIST, `expected at most ${MAX_LIST} items`))),
    name: v.optional(v.pipe(v.array(v.pipe(v.string('expected a string'), v.maxLength(200, 'expected at most 200 characters'))), v.maxLength(MAX_LIST, `expected at most ${MAX_LIST} items`))),
  })),
}));

export const CustomerIdParams = v.strictObject({ customerId: uuid });

export const CreateOrderBody = v.strictObject({
  licenseIds: v.pipe(
    uuidArray,
    v.minLength(1, 'expected at least one license id'),
    v.check((ids) => new Set(ids).size === ids.length, 'expected each license id once'),
  ),
});

export const CustomerLicensesQuery = v.strictObject({ includeDatalinks: v.optional(qBool) });

// ---- responses ----

const Iso = v.pipe(v.string(), v.isoTimestamp());

export const Customer = v.object({ id: v.pipe(v.string(), v.uuid()), name: v.string(), roleId: v.number(), creationDate: Iso });
export const CustomerResponse = v.object({ customer: Customer });
export const CustomersResponse = v.object({ customer: v.array(Customer) });
export const Order = v.object({
  id: v.pipe(v.string(), v.uuid()), customerId: v.pipe(v.string(), v.uuid()), creationDate: Iso, licenseIds: v.array(v.string()),
});
export const OrderResponse = v.object({ order: Order });
export const CustomerLicensesResponse = v.object({
  licenses: v.array(v.object({ ...License.entries, datalinks: v.optional(v.array(v.pipe(v.string(), v.uuid()))) })),
});

export type CustomerRow = CustomersTable;
export interface CustomerJson { id: string; name: string; roleId: number; creationDate: string }
export interface OrderJson { id: string; customerId: string; creationDate: string; licenseIds: string[] }

export function toCustomer(row: CustomerRow): CustomerJson {
  return { id: row.id, name: row.name, roleId: row.role_id, creationDate: new Date(row.creation_date).toISOString() };
}
