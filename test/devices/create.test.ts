// POST /v1/device?roleId=R: the device, its monitors relation, the creation rule, NODE_ID_TAKEN, validation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, T0, type TestApp } from '../support/app.ts';
import { addManages, addRole, count, iso, ok, storedDevice, storedMonitors, userIn } from './fixtures.ts';

const create = (t: TestApp, token: string, roleId: number, properties: unknown, query = '') =>
  t.request('POST', `/v1/device?roleId=${roleId}${query}`, { token, body: { properties } });

describe('create device: happy', () => {
  it('creates the device and a monitors relation (R, D, true, [], [])', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await create(app, app.adminToken, 1, { nodeId: 'ctl-1', nodeType: 'smartgridController', name: 'Home', info: { model: 'X' } });
    const body = ok(res);
    assert.deepEqual(body, {
      monitors: { id: body.monitors.id, roleId: 1, deviceId: body.device.id, monitorManagement: true, reads: [], edits: [] },
      device: {
        id: body.device.id,
        lastUpdate: iso(T0),
        properties: { nodeId: 'ctl-1', nodeType: 'smartgridController', name: 'Home', info: { model: 'X' } },
        userRights: { propertyEditabilities: { nodeId: true, nodeType: true, name: true, info: true }, monitorManagement: true },
      },
    });
    assert.deepEqual(await storedDevice(app, body.device.id), { properties: body.device.properties, lastUpdate: T0 });
    assert.deepEqual(await storedMonitors(app, body.device.id), [{ id: body.monitors.id, role_id: 1, monitor_management: 1, reads: '[]', edits: '[]' }]);
  });

  it('accepts empty properties and free-form values', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assert.deepEqual(ok(await create(app, app.adminToken, 1, {})).device.properties, {});
    const free = { anything: [1, { deep: null }], nodeType: 'customThing', phases: 'not checked without validate' };
    assert.deepEqual(ok(await create(app, app.adminToken, 1, free)).device.properties, free);
  });

  it('a deleted device frees its nodeId', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const first = ok(await create(app, app.adminToken, 1, { nodeId: 'n' }));
    ok(await app.request('DELETE', `/v1/role/1/monitors/${first.monitors.id}`, { token: app.adminToken }));
    ok(await create(app, app.adminToken, 1, { nodeId: 'n' }));
  });
});

describe('create device: validation', () => {
  it('refuses bad bodies and query parameters with 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const bad = async (path: string, body: unknown, pattern: RegExp) => {
      const res = await app.request('POST', path, { token: app.adminToken, body });
      assert.match(assertError(res, 400, 'BAD_REQUEST').message, pattern);
    };
    await bad('/v1/device?roleId=1', { properties: [] }, /^properties: expected an object/);
    await bad('/v1/device?roleId=1', { properties: 'x' }, /^properties: expected an object/);
    await bad('/v1/device?roleId=1', {}, /^properties: /);
    await bad('/v1/device?roleId=1', { properties: {}, extra: 1 }, /^extra: unknown field/);
    await bad('/v1/device?roleId=1', { properties: { nodeId: 5 } }, /^properties\.nodeId: expected a string/);
    await bad('/v1/device?roleId=1', { properties: { nodeId: '' } }, /^properties\.nodeId: expected a non-empty string/);
    await bad('/v1/device?roleId=1', { properties: { nodeType: true } }, /^properties\.nodeType: expected a string/);
    await bad('/v1/device?roleId=1', { properties: { isActive: 'yes' } }, /^properties\.isActive: expected a boolean/);
    await bad('/v1/device', { properties: {} }, /roleId/);
    await bad('/v1/device?roleId=x', { properties: {} }, /roleId/);
    await bad('/v1/device?roleId=1&validate=maybe', { properties: {} }, /validate/);
    await bad('/v1/device?roleId=1&color=red', { properties: {} }, /color/);
    const proto = await app.request('POST', '/v1/device?roleId=1', { token: app.adminToken, raw: '{"properties":{"__proto__":{"x":1}}}', headers: { 'content-type': 'application/json' } });
    assertError(proto, 400, 'BAD_REQUEST');
    assert.equal(await count(app, 'devices'), 0);
  });

  it('validate=true checks the nodeType schema: 422 SCHEMA_VIOLATION naming the path, nothing written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await create(app, app.adminToken, 1, { nodeType: 'battery', info: { serialNumber: 5 } }, '&validate=true');
    assert.equal(assertError(res, 422, 'SCHEMA_VIOLATION').message, 'properties.info.serialNumber: Invalid type: Expected string but received 5');
    const phases = await create(app, app.adminToken, 1, { nodeType: 'evCharger', phases: 2 }, '&validate=true');
    assert.match(assertError(phases, 422, 'SCHEMA_VIOLATION').message, /^properties\.phases: /);
    assert.equal(await count(app, 'devices'), 0);
    // without validate, and for a nodeType without schema, the same properties are stored
    ok(await create(app, app.adminToken, 1, { nodeType: 'battery', info: { serialNumber: 5 } }));
    ok(await create(app, app.adminToken, 1, { nodeType: 'unknownType', info: { serialNumber: 5 } }, '&validate=true'));
    ok(await create(app, app.adminToken, 1, { nodeType: 'battery', capacityWh: 10 }, '&validate=true'));
  });

  it('a taken nodeId is 409 NODE_ID_TAKEN without naming the holder, nothing written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    ok(await create(app, app.adminToken, 1, { nodeId: 'dup' }));
    const other = await addRole(app, 'other', { deviceManagement: true });
    const u = await userIn(app, other);
    const res = await create(app, u.token, other, { nodeId: 'dup' });
    assert.equal(assertError(res, 409, 'NODE_ID_TAKEN').message, 'nodeId "dup" is already used by another device');
    assert.equal(await count(app, 'devices'), 1);
    assert.equal(await count(app, 'monitors'), 1);
  });
});

describe('create device: security (the rule)', () => {
  it('allowed: direct deviceManagement by the role\'s own selfRights', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r', { deviceManagement: true });
    const u = await userIn(app, r);
    const body = ok(await create(app, u.token, r, {}));
    assert.equal(body.monitors.roleId, r);
    assert.equal(body.device.userRights.monitorManagement, true);
  });

  it('allowed: direct deviceManagement through a relation P -> R with the flag', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const p = await addRole(app, 'p');
    const r = await addRole(app, 'r');
    await addManages(app, p, r, { deviceManagement: true });
    const u = await userIn(app, p);
    ok(await create(app, u.token, r, {}));
  });

  it('allowed: indirect deviceManagement (flag higher up the path)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [p, m, r] = [await addRole(app, 'p'), await addRole(app, 'm'), await addRole(app, 'r')];
    await addManages(app, p, m, { deviceManagement: true });
    await addManages(app, m, r);
    const u = await userIn(app, p);
    ok(await create(app, u.token, r, {}));
  });

  it('allowed: indirect roleManagement over R', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [p, m, r] = [await addRole(app, 'p'), await addRole(app, 'm'), await addRole(app, 'r')];
    await addManages(app, p, m, { roleManagement: true });
    await addManages(app, m, r);
    const u = await userIn(app, p);
    ok(await create(app, u.token, r, {}));
  });

  it('denied 403: only DIRECT roleManagement (selfRights) over R', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r', { roleManagement: true });
    const u = await userIn(app, r);
    assert.match(assertError(await create(app, u.token, r, {}), 403, 'FORBIDDEN').message, /deviceManagement/);
    assert.equal(await count(app, 'devices'), 0);
  });

  it('denied 403: R reached without any flag; a parent\'s selfRights do not reach its children', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const p = await addRole(app, 'p', { deviceManagement: true, roleManagement: true });
    const r = await addRole(app, 'r');
    await addManages(app, p, r, { userManagement: true, alarmManagement: true });
    const u = await userIn(app, p);
    assertError(await create(app, u.token, r, {}), 403, 'FORBIDDEN');
    ok(await create(app, u.token, p, {})); // its own role: direct by selfRights
  });

  it('denied 404: a role outside Reach(u), and a role that does not exist', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const mine = await addRole(app, 'mine', { deviceManagement: true });
    const other = await addRole(app, 'other', { deviceManagement: true });
    const u = await userIn(app, mine);
    assert.equal(assertError(await create(app, u.token, other, {}), 404, 'NOT_FOUND').message, `role ${other} not found`);
    assertError(await create(app, u.token, 9999, {}), 404, 'NOT_FOUND');
    assertError(await create(app, app.adminToken, 9999, {}), 404, 'NOT_FOUND');
    assert.equal(await count(app, 'devices'), 0);
  });

  it('a user in no role at all gets 404', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await app.createUser('nobody@test');
    assertError(await create(app, u.token, 1, {}), 404, 'NOT_FOUND');
  });
});
