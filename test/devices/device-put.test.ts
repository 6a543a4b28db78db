// PUT /v1/device/{ids}?mode=legacy|merge|strict, and the nodeType schema routes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, T0, type TestApp } from '../support/app.ts';
import { addDevice, addMonitors, addRole, iso, ok, storedDevice, userIn } from './fixtures.ts';

const put = (t: TestApp, token: string, ids: string | number, properties: unknown, query = '', headers?: Record<string, string>) =>
  t.request('PUT', `/v1/device/${ids}${query}`, { token, body: { properties }, headers });

async function rootDevice(t: TestApp, properties: Record<string, unknown>, lastUpdate = T0 - 1000): Promise<number> {
  const id = await addDevice(t, properties, lastUpdate);
  await addMonitors(t, 1, id, { mm: true });
  return id;
}

const stored = { a: 1, info: { model: 'X', serial: 'S' }, list: [1, 2] };

describe('device PUT: happy', () => {
  it('legacy (default) replaces the given top-level properties and keeps the others', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, stored);
    const body = ok(await put(app, app.adminToken, d, { info: { model: 'Y' }, b: true }));
    assert.deepEqual(body, {
      device: {
        id: d, lastUpdate: iso(T0), properties: { a: 1, info: { model: 'Y' }, list: [1, 2], b: true },
        userRights: { propertyEditabilities: { a: true, info: true, list: true, b: true }, monitorManagement: true },
      },
    });
    ok(await put(app, app.adminToken, d, { a: 2 }, '?mode=legacy'));
    assert.deepEqual(await storedDevice(app, d), { properties: { a: 2, info: { model: 'Y' }, list: [1, 2], b: true }, lastUpdate: T0 + 1 });
  });

  it('merge merges objects recursively and replaces arrays', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, stored);
    ok(await put(app, app.adminToken, d, { info: { model: 'Y', extra: { k: 1 } }, list: [3] }, '?mode=merge'));
    assert.deepEqual((await storedDevice(app, d))!.properties, { a: 1, info: { model: 'Y', serial: 'S', extra: { k: 1 } }, list: [3] });
  });

  it('strict replaces all properties', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, stored);
    assert.deepEqual(ok(await put(app, app.adminToken, d, { only: 1 }, '?mode=strict')).device.properties, { only: 1 });
    assert.deepEqual((await storedDevice(app, d))!.properties, { only: 1 });
  });

  it('several ids: one transaction answered with an array in request order', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b] = [await rootDevice(app, { n: 1 }), await rootDevice(app, { n: 2 })];
    const body = ok(await put(app, app.adminToken, `${b},${a}`, { z: 0 }));
    assert.deepEqual(body.device.map((x: { id: number }) => x.id), [b, a]);
    assert.deepEqual([(await storedDevice(app, a))!.properties, (await storedDevice(app, b))!.properties], [{ n: 1, z: 0 }, { n: 2, z: 0 }]);
  });
});

describe('device PUT: validation and state', () => {
  it('400 for a bad mode, bad properties and unknown fields', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, stored);
    assert.match(assertError(await put(app, app.adminToken, d, {}, '?mode=replace'), 400, 'BAD_REQUEST').message, /^query\.mode: expected legacy, merge or strict/);
    assertError(await put(app, app.adminToken, d, [1]), 400, 'BAD_REQUEST');
    assert.match(assertError(await put(app, app.adminToken, d, { nodeId: 1 }), 400, 'BAD_REQUEST').message, /^properties\.nodeId/);
    assertError(await app.request('PUT', `/v1/device/${d}`, { token: app.adminToken, body: { properties: {}, mode: 'strict' } }), 400, 'BAD_REQUEST');
  });

  it('If-Unmodified-Since -> 412 with nothing written; all-or-nothing', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b] = [await rootDevice(app, { n: 1 }, T0 - 10), await rootDevice(app, { n: 2 }, T0 - 1)];
    const res = await put(app, app.adminToken, `${a},${b}`, { n: 0 }, '', { 'if-unmodified-since': iso(T0 - 5) });
    assert.equal(assertError(res, 412, 'DEVICE_MODIFIED').message, 'At least one device was modified after the specified time');
    assert.deepEqual([await storedDevice(app, a), await storedDevice(app, b)], [{ properties: { n: 1 }, lastUpdate: T0 - 10 }, { properties: { n: 2 }, lastUpdate: T0 - 1 }]);
    ok(await put(app, app.adminToken, `${a},${b}`, { n: 0 }, '', { 'if-unmodified-since': iso(T0 - 1) }));
  });

  it('validate=true -> 422 SCHEMA_VIOLATION naming the path; NODE_ID_TAKEN -> 409', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, { nodeType: 'battery' });
    const other = await rootDevice(app, { nodeId: 'taken' });
    const res = await put(app, app.adminToken, d, { maxSocPct: 120 }, '?mode=merge&validate=true');
    assert.equal(assertError(res, 422, 'SCHEMA_VIOLATION').message, 'properties.maxSocPct: Invalid value: Expected <=100 but received 120');
    assert.match(assertError(await put(app, app.adminToken, d, { nodeType: 'battery', capacityWh: -1 }, '?mode=strict&validate=true'), 422, 'SCHEMA_VIOLATION').message, /^properties\.capacityWh/);
    assertError(await put(app, app.adminToken, d, { nodeId: 'taken' }), 409, 'NODE_ID_TAKEN');
    assert.deepEqual((await storedDevice(app, d))!.properties, { nodeType: 'battery' });
    assert.deepEqual((await storedDevice(app, other))!.properties, { nodeId: 'taken' });
    // the schema is the one of the resulting nodeType: a strict PUT without nodeType is free-form
    ok(await put(app, app.adminToken, d, { capacityWh: -1 }, '?mode=strict&validate=true'));
  });
});

describe('device PUT: security', () => {
  it('legacy/merge need every given property editable; strict needs monitorManagement', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r');
    const u = await userIn(app, r);
    const d = await addDevice(app, { a: 1, b: { x: 1 } });
    await addMonitors(app, r, d, { reads: ['a'], edits: ['b', 'c'] });
    ok(await put(app, u.token, d, { b: { y: 2 } }, '?mode=merge'));
    ok(await put(app, u.token, d, { c: 3 }));
    assert.match(assertError(await put(app, u.token, d, { a: 2 }), 403, 'FORBIDDEN').message, /"a"/);
    assert.match(assertError(await put(app, u.token, d, { b: 1, a: 2 }, '?mode=merge'), 403, 'FORBIDDEN').message, /"a"/);
    const strict = await put(app, u.token, d, { b: 1, c: 1 }, '?mode=strict');
    assert.equal(assertError(strict, 403, 'FORBIDDEN').message, `PUT with mode=strict needs monitorManagement on device ${d}`);
    assert.deepEqual((await storedDevice(app, d))!.properties, { a: 1, b: { x: 1, y: 2 }, c: 3 });
  });

  it('invisible devices are 404', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await userIn(app, await addRole(app, 'r'));
    const d = await rootDevice(app, { a: 1 });
    assertError(await put(app, u.token, d, { a: 2 }), 404, 'NOT_FOUND');
    assertError(await put(app, u.token, d, { a: 2 }, '?mode=strict'), 404, 'NOT_FOUND');
    assert.deepEqual((await storedDevice(app, d))!.properties, { a: 1 });
  });
});

describe('nodeType schemas', () => {
  it('GET /v1/device/schema lists the nodeTypes; /schema/{nodeType} serves the JSON Schema; unknown -> 404', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await app.createUser('any@test'); // any authenticated user
    const list = ok(await app.request('GET', '/v1/device/schema', { token: u.token }));
    for (const nodeType of ['smartgridController', 'powerMeter', 'solarInverter', 'battery', 'evCharger', 'hybridInverter', 'heatPump']) {
      assert.ok(list.nodeTypes.includes(nodeType), nodeType);
      const schema = ok(await app.request('GET', `/v1/device/schema/${nodeType}`, { token: u.token }));
      assert.equal(schema.title, nodeType);
      assert.equal(schema.type, 'object');
      assert.deepEqual(schema.properties.nodeType, { const: nodeType });
      assert.equal(schema.properties.nodeId.type, 'string');
    }
    assertError(await app.request('GET', '/v1/device/schema/toaster', { token: u.token }), 404, 'NOT_FOUND');
    assertError(await app.request('GET', '/v1/device/schema/__proto__', { token: u.token }), 404, 'NOT_FOUND');
  });
});
