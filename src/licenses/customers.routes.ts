// Customers and orders (ours), and a customer's licenses (Eniris: GET /v1/license/customer/{customerId}).
// A customer belongs to a role; orders hand licenses to customers. Rights come from src/access/customers.ts.
import { randomUUID } from 'node:crypto';
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { canSeeCustomersOf, customerRoles, requireCustomerCreation, requireOrderRights } from '../access/customers.ts';
import { toLicense } from './licenses.schemas.ts';
import { createOrder } from './customers.service.ts';
import { customersOfRoles, datalinksOf, findCustomer, insertCustomer, licensesOfCustomer } from './customers.store.ts';
import {
  CreateCustomerBody, CreateCustomerQuery, CreateOrderBody, CustomerIdParams, CustomerLicensesQuery, CustomerLicensesResponse,
  CustomerQueryBody, CustomerResponse, CustomersResponse, OrderResponse, toCustomer, type CustomerRow,
} from './customers.schemas.ts';
import { created, recordAudit } from '../audit/record.ts';

export function registerCustomerRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'post', path: '/v1/customer', tag: 'customers', summary: 'Create a customer of a role',
    description: 'Body { name }. Needs direct or indirect roleManagement over the role, or membership of the root role '
      + '(404 when the role is not visible). Answers { customer: { id (uuid), name, roleId, creationDate } }.',
    auth: auth.requireActor, query: CreateCustomerQuery, body: CreateCustomerBody,
    responses: { 200: { description: 'the new customer', schema: CustomerResponse } },
  }, async (c, { query, body }) => {
    const userId = c.var.actor.userId;
    const row: CustomerRow = { id: randomUUID(), name: body.name, role_id: query.roleId, creation_date: deps.now() };
    await db.write(async (tx) => {
      await requireCustomerCreation(tx, userId, query.roleId);
      await insertCustomer(tx, row);
      await recordAudit(tx, c, deps, { action: 'customer.create', target: { kind: 'customer', id: row.id }, roleId: row.role_id, changes: created({ name: row.name, roleId: row.role_id }) });
    });
    return c.json({ customer: toCustomer(row) });
  });

  api.route({
    method: 'post', path: '/v1/customer/query', tag: 'customers', summary: 'Query the customers of the caller\'s roles',
    description: 'Customers of the roles in the caller\'s reach, oldest first. Body { filter?: { id?: uuid[], roleId?: int[], '
      + 'name?: string[] } } (a missing body is {}); filters combine with "and", a list matches any of its values.',
    auth: auth.requireActor, body: CustomerQueryBody,
    responses: { 200: { description: 'the customers', schema: CustomersResponse } },
  }, async (c, { body }) => {
    const filter = body?.filter ?? {};
    let roles = await customerRoles(db, c.var.actor.userId);
    if (filter.roleId) {
      const only = new Set(filter.roleId);
      roles = roles.filter((r) => only.has(r));
    }
    let rows = await customersOfRoles(db, roles);
    if (filter.id) {
      const ids = new Set(filter.id);
      rows = rows.filter((r) => ids.has(r.id));
    }
    if (filter.name) {
      const names = new Set(filter.name);
      rows = rows.filter((r) => names.has(r.name));
    }
    return c.json({ customer: rows.map(toCustomer) });
  });

  api.route({
    method: 'post', path: '/v1/customer/:customerId/order', tag: 'customers', summary: 'Hand licenses to a customer',
    description: 'Members of the root role only (the licenses are theirs to hand out). Body { licenseIds } (each once); '
      + '404 for an unknown customer or license; a license is in at most one order: 409 LICENSE_IN_ORDER otherwise. '
      + 'Answers { order: { id (uuid), customerId, creationDate, licenseIds } }.',
    auth: auth.requireActor, params: CustomerIdParams, body: CreateOrderBody,
    responses: { 200: { description: 'the new order', schema: OrderResponse } },
  }, async (c, { params, body }) => {
    await requireOrderRights(db, c.var.actor.userId);
    const order = await db.write(async (tx) => {
      const made = await createOrder(tx, params.customerId, body.licenseIds, deps.now());
      const customer = await findCustomer(tx, made.customerId);
      await recordAudit(tx, c, deps, { action: 'order.create', target: { kind: 'order', id: made.id }, roleId: customer?.role_id, changes: created({ customerId: made.customerId, licenseIds: made.licenseIds }) });
      return made;
    });
    return c.json({ order });
  });

  api.route({
    method: 'get', path: '/v1/license/customer/:customerId', tag: 'licenses', summary: 'Licenses of a customer',
    description: 'The licenses in the customer\'s orders (oldest order first). With includeDatalinks=true each license '
      + 'carries `datalinks`: the uuids of its controller links. 404 unknown customer; 403 when the customer\'s role is '
      + 'not in the caller\'s reach.',
    auth: auth.requireActor, params: CustomerIdParams, query: CustomerLicensesQuery,
    responses: { 200: { description: 'the licenses', schema: CustomerLicensesResponse } },
  }, async (c, { params, query }) => {
    const customer = await findCustomer(db, params.customerId);
    if (!customer) throw new ApiError('NOT_FOUND', `customer ${params.customerId} not found`);
    if (!await canSeeCustomersOf(db, c.var.actor.userId, customer.role_id)) {
      throw new ApiError('FORBIDDEN', `customer ${params.customerId} belongs to a role outside your reach`);
    }
    const rows = await licensesOfCustomer(db, customer.id);
    if (!query.includeDatalinks) return c.json({ licenses: rows.map(toLicense) });
    const links = await datalinksOf(db, rows.map((r) => r.id));
    return c.json({ licenses: rows.map((r) => ({ ...toLicense(r), datalinks: links.get(r.id) ?? [] })) });
  });
}
