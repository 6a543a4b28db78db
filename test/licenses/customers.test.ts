// Customers, orders and GET /v1/license/customer/{customerId}: rights, validation, database side effects, and the
// `license create --customer` command.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestApp, assertError, ROOT_ROLE_ID, T0, type TestApp } from '../support/app.ts';
import { ALL, NONE, addChild, addDevice, addMonitors, count, flags, rows, userIn } from '../roles/fixtures.ts';
import { runCli } from '../../src/boot/cli.ts';
import { openDatabase } from '../../src/db/open.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const iso = (ms: number) => new Date(ms).toISOString();

async function createCustomer(t: TestApp, token: string, roleId: number, name: string) {
  const res = await t.request('POST', `/v1/customer?roleId=${roleId}`, { token, body: { name } });
  assert.equal(res.status, 200, res.text);
  return res.body.customer as { id: string; name: string; roleId: number; creationDate: string };
}

async function createLicenses(t: TestApp, n: number) {
  const res = await t.request('POST', '/v1/license', { token: t.adminToken, body: { type: 'residential', duration: 30, count: n, solarKw: 5 } });
  assert.equal(res.status, 200, res.text);
  return res.body.licenses as { id: string; key: string }[];
}

/** root -> top -> site (both relations with roleManagement) ; root -> other. u is a member of top. */
async function world() {
  const t = await makeTestApp();
  const [top] = await addChild(t, ROOT_ROLE_ID, flags('roleManagement'), NONE, 'top');
  const [site] = await addChild(t, top, flags('roleManagement'), NONE, 'site');
  const [other] = await addChild(t, ROOT_ROLE_ID, ALL, NONE, 'other');
  const u = await userIn(t, top);
  return { t, top, site, other, u };
}

describe('POST /v1/customer', () => {
  test('happy: roleManagement over the role (here through a chain) or root membership; the row is stored', async () => {
    const { t, site, other, u } = await world();
    t.clock.set(T0 + 1000);
    const c = await createCustomer(t, u.token, site, 'Jansen BV');
    assert.match(c.id, UUID);
    assert.deepEqual(c, { id: c.id, name: 'Jansen BV', roleId: site, creationDate: iso(T0 + 1000) });
    assert.deepEqual(await rows(t, 'SELECT * FROM customers'), [{ id: c.id, name: 'Jansen BV', role_id: site, creation_date: T0 + 1000 }]);
    const byRoot = await createCustomer(t, t.adminToken, other, '  Dupont SA ');
    assert.equal(byRoot.name, 'Dupont SA', 'surrounding whitespace is dropped');
    await t.close();
  });

  test('rights: 403 without roleManagement, 404 for a role the user cannot see or that does not exist; nothing written', async () => {
    const { t, top, other } = await world();
    const [plain] = await addChild(t, top, NONE, NONE, 'plain');
    const weak = await userIn(t, plain);
    assertError(await t.request('POST', `/v1/customer?roleId=${plain}`, { token: weak.token, body: { name: 'x' } }), 403, 'FORBIDDEN');
    const invisible = await t.request('POST', `/v1/customer?roleId=${other}`, { token: weak.token, body: { name: 'x' } });
    const missing = await t.request('POST', '/v1/customer?roleId=987654', { token: weak.token, body: { name: 'x' } });
    assert.deepEqual({ ...assertError(invisible, 404, 'NOT_FOUND'), message: '' }, { ...assertError(missing, 404, 'NOT_FOUND'), message: '' });
    assertError(await t.request('POST', '/v1/customer?roleId=987654', { token: t.adminToken, body: { name: 'x' } }), 404, 'NOT_FOUND');
    assert.equal(await count(t, 'customers'), 0);
    await t.close();
  });

  test('validation: 400 naming the field; 401 without a token', async () => {
    const { t, top } = await world();
    const post = (q: string, body: unknown) => t.request('POST', `/v1/customer${q}`, { token: t.adminToken, body });
    assert.equal(assertError(await post('', { name: 'x' }), 400, 'BAD_REQUEST').message, 'query.roleId: required');
    assert.equal(assertError(await post(`?roleId=${top}`, { name: '' }), 400, 'BAD_REQUEST').message, 'name: expected 1 to 200 characters');
    assert.equal(assertError(await post(`?roleId=${top}`, { name: 'x', vat: 1 }), 400, 'BAD_REQUEST').message, 'vat: unknown field');
    assertError(await t.request('POST', `/v1/customer?roleId=${top}`, { body: { name: 'x' } }), 401, 'UNAUTHENTICATED');
    assert.equal(await count(t, 'customers'), 0);
    await t.close();
  });
});

describe('POST /v1/customer/query', () => {
  test('customers of roles in the user\'s reach, oldest first; filters combine with "and"', async () => {
    const { t, top, site, other, u } = await world();
    const a = await createCustomer(t, t.adminToken, site, 'A');
    t.clock.advance(1);
    const b = await createCustomer(t, t.adminToken, top, 'B');
    t.clock.advance(1);
    const c = await createCustomer(t, t.adminToken, other, 'C');
    const q = async (token: string, body?: unknown) => {
      const res = await t.request('POST', '/v1/customer/query', { token, body });
      assert.equal(res.status, 200, res.text);
      return res.body.customer;
    };
    assert.deepEqual(await q(u.token), [a, b]);
    assert.deepEqual((await q(t.adminToken, {})).map((x: { id: string }) => x.id), [a.id, b.id, c.id]);
    assert.deepEqual(await q(u.token, { filter: { id: [c.id, b.id.toUpperCase()] } }), [b], 'another role\'s customer is not listed');
    assert.deepEqual(await q(u.token, { filter: { roleId: [site, other] } }), [a]);
    assert.deepEqual(await q(u.token, { filter: { name: ['B', 'C'] } }), [b]);
    assert.equal(assertError(await t.request('POST', '/v1/customer/query', { token: u.token, body: { filter: { id: ['nope'] } } }), 400, 'BAD_REQUEST').message,
      'filter.id[0]: expected a uuid');
    await t.close();
  });
});

describe('POST /v1/customer/{id}/order', () => {
  test('happy: root members hand licenses to a customer; rows stored in the given order', async () => {
    const { t, site } = await world();
    const customer = await createCustomer(t, t.adminToken, site, 'A');
    const [l1, l2] = await createLicenses(t, 2);
    t.clock.set(T0 + 5000);
    const res = await t.request('POST', `/v1/customer/${customer.id.toUpperCase()}/order`, { token: t.adminToken, body: { licenseIds: [l2.id, l1.id] } });
    assert.equal(res.status, 200, res.text);
    const { id } = res.body.order;
    assert.match(id, UUID);
    assert.deepEqual(res.body, { order: { id, customerId: customer.id, creationDate: iso(T0 + 5000), licenseIds: [l2.id, l1.id] } });
    assert.deepEqual(await rows(t, 'SELECT * FROM orders'), [{ id, customer_id: customer.id, creation_date: T0 + 5000 }]);
    assert.deepEqual(await rows(t, 'SELECT license_id, position FROM order_licenses ORDER BY position'), [{ license_id: l2.id, position: 0 }, { license_id: l1.id, position: 1 }]);
    await t.close();
  });

  test('rights and state: 403 for non-root users, 404 unknown customer or license, 409 LICENSE_IN_ORDER; nothing half-written', async () => {
    const { t, site, u } = await world();
    const customer = await createCustomer(t, t.adminToken, site, 'A');
    const [l1, l2, l3] = await createLicenses(t, 3);
    const order = (token: string, customerId: string, licenseIds: string[]) =>
      t.request('POST', `/v1/customer/${customerId}/order`, { token, body: { licenseIds } });
    assertError(await order(u.token, customer.id, [l1.id]), 403, 'FORBIDDEN');
    assertError(await order(t.adminToken, '00000000-0000-4000-8000-000000000000', [l1.id]), 404, 'NOT_FOUND');
    assert.match(assertError(await order(t.adminToken, customer.id, [l1.id, '00000000-0000-4000-8000-000000000001']), 404, 'NOT_FOUND').message,
      /00000000-0000-4000-8000-000000000001/);
    assert.equal((await order(t.adminToken, customer.id, [l1.id])).status, 200);
    const again = assertError(await order(t.adminToken, customer.id, [l2.id, l1.id]), 409, 'LICENSE_IN_ORDER');
    assert.equal(again.message, `license ${l1.id} is already in an order`);
    assert.equal(await count(t, 'orders'), 1);
    assert.deepEqual(await rows(t, 'SELECT license_id FROM order_licenses'), [{ license_id: l1.id }]);
    assert.equal(assertError(await order(t.adminToken, customer.id, [l3.id, l3.id]), 400, 'BAD_REQUEST').message, 'licenseIds: expected each license id once');
    assert.equal(assertError(await order(t.adminToken, customer.id, []), 400, 'BAD_REQUEST').message, 'licenseIds: expected at least one license id');
    assert.equal(assertError(await order(t.adminToken, 'not-a-uuid', [l3.id]), 400, 'BAD_REQUEST').message, 'path.customerId: expected a uuid');
    await t.close();
  });
});

describe('orders: races', () => {
  test('two orders racing for one license: exactly one wins, the other is 409 and writes nothing', async () => {
    const { t, site, top } = await world();
    const a = await createCustomer(t, t.adminToken, site, 'A');
    const b = await createCustomer(t, t.adminToken, top, 'B');
    const [l1, l2] = await createLicenses(t, 2);
    const answers = await Promise.all([
      t.request('POST', `/v1/customer/${a.id}/order`, { token: t.adminToken, body: { licenseIds: [l1.id] } }),
      t.request('POST', `/v1/customer/${b.id}/order`, { token: t.adminToken, body: { licenseIds: [l2.id, l1.id] } }),
    ]);
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409]);
    const winner = answers.find((r) => r.status === 200)!.body.order;
    assert.deepEqual(await rows(t, 'SELECT order_id, license_id FROM order_licenses ORDER BY position'),
      winner.licenseIds.map((id: string) => ({ order_id: winner.id, license_id: id })));
    assert.equal(await count(t, 'orders'), 1);
    await t.close();
  });
});

describe('GET /v1/license/customer/{customerId}', () => {
  async function withOrders() {
    const w = await world();
    const { t, site } = w;
    const customer = await createCustomer(t, t.adminToken, site, 'A');
    const [l1, l2, l3] = await createLicenses(t, 3);
    await t.request('POST', `/v1/customer/${customer.id}/order`, { token: t.adminToken, body: { licenseIds: [l2.id] } });
    t.clock.advance(1);
    await t.request('POST', `/v1/customer/${customer.id}/order`, { token: t.adminToken, body: { licenseIds: [l1.id] } });
    // l2 is linked to a controller: its datalink uuid comes from the database
    const ctrl = await addDevice(t, { nodeId: 'ctrl-1', nodeType: 'smartgridController' });
    await addMonitors(t, ROOT_ROLE_ID, ctrl, { mm: true });
    const claim = await t.request('POST', '/v1/license/claim', { token: t.adminToken, body: { licenseKey: l2.key, nodeId: 'ctrl-1' } });
    assert.equal(claim.status, 200, claim.text);
    return { ...w, customer, l1, l2, l3 };
  }

  test('happy: the licenses of the customer\'s orders; datalinks (uuids) only with includeDatalinks=true', async () => {
    const { t, u, customer, l1, l2 } = await withOrders();
    const plain = await t.request('GET', `/v1/license/customer/${customer.id}`, { token: u.token });
    assert.equal(plain.status, 200, plain.text);
    const all = await rows(t, 'SELECT id, key, creation_date FROM licenses');
    assert.deepEqual(plain.body.licenses.map((l: { id: string }) => l.id), [l2.id, l1.id]);
    assert.deepEqual(plain.body.licenses[0], {
      id: l2.id, key: l2.key, gridKw: null, solarKw: 5, batteryKw: null, evKw: null, creationDate: iso(all[0].creation_date),
      activationDate: null, duration: 30, deactivationDate: null, type: 'residential',
    });
    assert.equal(JSON.stringify(plain.body).includes('datalinks'), false);
    const off = await t.request('GET', `/v1/license/customer/${customer.id}?includeDatalinks=false`, { token: u.token });
    assert.deepEqual(off.body, plain.body);
    const withLinks = await t.request('GET', `/v1/license/customer/${customer.id}?includeDatalinks=true`, { token: u.token });
    const linkUuid = (await rows(t, 'SELECT uuid FROM license_datalink WHERE license_id = ?', l2.id))[0].uuid;
    assert.match(linkUuid, UUID);
    assert.deepEqual(withLinks.body.licenses.map((l: { id: string; datalinks: string[] }) => [l.id, l.datalinks]), [[l2.id, [linkUuid]], [l1.id, []]]);
    await t.close();
  });

  test('rights and validation: 403 outside the reach, 404 unknown customer, 400 malformed uuid or flag', async () => {
    const { t, other, customer } = await withOrders();
    const outsider = await userIn(t, other);
    const get = (path: string, token = outsider.token) => t.request('GET', path, { token });
    assertError(await get(`/v1/license/customer/${customer.id}`), 403, 'FORBIDDEN');
    assertError(await get('/v1/license/customer/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    assert.equal(assertError(await get('/v1/license/customer/12345'), 400, 'BAD_REQUEST').message, 'path.customerId: expected a uuid');
    assert.equal(assertError(await get(`/v1/license/customer/${customer.id}?includeDatalinks=yes`, t.adminToken), 400, 'BAD_REQUEST').message,
      'query.includeDatalinks: expected true or false');
    assertError(await t.request('GET', `/v1/license/customer/${customer.id}`), 401, 'UNAUTHENTICATED');
    await t.close();
  });

  test('a customer goes with its role: deleting the role\'s last manages relation removes customer and orders, not licenses', async () => {
    const { t, customer, l1 } = await withOrders();
    const managesId = (await rows(t, 'SELECT id FROM manages WHERE child_role_id = ?', customer.roleId))[0].id;
    const parent = (await rows(t, 'SELECT parent_role_id FROM manages WHERE id = ?', managesId))[0].parent_role_id;
    const del = await t.request('DELETE', `/v1/role/${parent}/manages/${managesId}`, { token: t.adminToken });
    assert.equal(del.status, 200, del.text);
    assert.equal(await count(t, 'customers'), 0);
    assert.equal(await count(t, 'orders'), 0);
    assert.equal(await count(t, 'order_licenses'), 0);
    assert.equal(await count(t, 'licenses', 'id = ?', l1.id), 1);
    assertError(await t.request('GET', `/v1/license/customer/${customer.id}`, { token: t.adminToken }), 404, 'NOT_FOUND');
    await t.close();
  });
});

describe('gridkeeper license create --customer', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
  };

  test('puts the new licenses in one new order of the customer; an unknown customer exits 2 and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-customer-cli-'));
    try {
      const boot = capture();
      assert.equal(await runCli(['migrate', '--data-dir', dir], { GRIDKEEPER_ADMIN_PASSWORD: 'admin-password-123' }, boot.io), 0, boot.err.join('\n'));
      const customerId = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
      const db = openDatabase({ file: join(dir, 'gridkeeper.db') });
      await db.run(sql`INSERT INTO roles (name, self_role_management, self_user_management, self_view_management, self_device_management, self_report_management, self_alarm_management, created_at) VALUES ('r', 0, 0, 0, 0, 0, 0, 0)`);
      await db.run(sql`INSERT INTO customers (id, name, role_id, creation_date) VALUES (${customerId}, 'A', 1, 0)`);
      await db.close();
      const c = capture();
      assert.equal(await runCli(['license', 'create', '--type', 'commercial', '--duration', '10', '--count', '3', `--customer=${customerId.toUpperCase()}`, '--data-dir', dir], {}, c.io), 0, c.err.join('\n'));
      assert.equal(c.out.length, 3);
      const bad = capture();
      assert.equal(await runCli(['license', 'create', '--type', 'commercial', '--duration', '10', '--customer', '00000000-0000-4000-8000-000000000000', '--data-dir', dir], {}, bad.io), 2);
      assert.deepEqual(bad.err, ['gridkeeper: license create: no customer with id 00000000-0000-4000-8000-000000000000']);
      const malformed = capture();
      assert.equal(await runCli(['license', 'create', '--type', 'commercial', '--duration', '10', '--customer', 'x', '--data-dir', dir], {}, malformed.io), 2);
      assert.deepEqual(malformed.err, ['gridkeeper: license create: --customer expects a customer id (uuid)']);
      const check = openDatabase({ file: join(dir, 'gridkeeper.db'), readonly: true });
      try {
        const keys = (await check.all(sql<{ key: string }>`SELECT l.key FROM order_licenses ol JOIN licenses l ON l.id = ol.license_id
          JOIN orders o ON o.id = ol.order_id WHERE o.customer_id = ${customerId} ORDER BY ol.position`)).map((r) => r.key);
        assert.deepEqual(keys, c.out);
        assert.equal((await check.get(sql<{ n: number }>`SELECT count(*) AS n FROM licenses`))!.n, 3, 'the refused runs left no license behind');
        assert.equal((await check.get(sql<{ n: number }>`SELECT count(*) AS n FROM orders`))!.n, 1);
      } finally {
        await check.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
