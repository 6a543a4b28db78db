// One answer-shape rule for id lists on every route (docs/api.md#id-lists): a single id answers the object, ids written
// as a list answer an array in request order — also when the list repeats one id (`5,5`), which is acted on once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { addChild, addDevice, addMember, addMonitors, ALL, count } from '../roles/fixtures.ts';

async function setUp(t: { after(fn: () => unknown): void }): Promise<TestApp> {
  const app = await makeTestApp();
  t.after(() => app.close());
  return app;
}

test('devices: 7 answers an object, 7,7 an array of one, 7,8 an array in request order', async (t) => {
  const app = await setUp(t);
  const a = await addDevice(app, { name: 'a' });
  const b = await addDevice(app, { name: 'b' });
  await addMonitors(app, ROOT_ROLE_ID, a, { mm: true });
  await addMonitors(app, ROOT_ROLE_ID, b, { mm: true });
  const patch = [{ op: 'replace', path: '/name', value: 'x' }];
  const one = await app.request('PATCH', `/v1/device/${a}`, { token: app.adminToken, body: patch });
  assert.equal(one.status, 200, one.text);
  assert.equal(Array.isArray(one.body.device), false);
  assert.equal(one.body.device.id, a);
  const twice = await app.request('PATCH', `/v1/device/${a},${a}`, { token: app.adminToken, body: [{ op: 'add', path: '/n', value: 1 }] });
  assert.equal(twice.status, 200, twice.text);
  assert.deepEqual(twice.body.device.map((d: { id: number }) => d.id), [a]);
  assert.equal(twice.body.device[0].properties.n, 1);
  const both = await app.request('PUT', `/v1/device/${b},${a}`, { token: app.adminToken, body: { properties: { k: 2 } } });
  assert.equal(both.status, 200, both.text);
  assert.deepEqual(both.body.device.map((d: { id: number }) => d.id), [b, a]);
});

test('manages: the same rule for PUT and DELETE', async (t) => {
  const app = await setUp(t);
  const [, m1] = await addChild(app, ROOT_ROLE_ID, ALL);
  const [, m2] = await addChild(app, ROOT_ROLE_ID, ALL);
  const flags = { ...ALL, alarmManagement: false };
  const one = await app.request('PUT', `/v1/role/${ROOT_ROLE_ID}/manages/${m1}`, { token: app.adminToken, body: flags });
  assert.equal(one.status, 200, one.text);
  assert.equal(one.body.manages.id, m1);
  const twice = await app.request('PUT', `/v1/role/${ROOT_ROLE_ID}/manages/${m1},${m1}`, { token: app.adminToken, body: flags });
  assert.equal(twice.status, 200, twice.text);
  assert.deepEqual(twice.body.manages.map((m: { id: number }) => m.id), [m1]);
  const del = await app.request('DELETE', `/v1/role/${ROOT_ROLE_ID}/manages/${m2},${m2}`, { token: app.adminToken });
  assert.equal(del.status, 200, del.text);
  assert.equal(del.body.length, 1);
  assert.deepEqual(del.body[0].deletedRelationIds.includes(m2), true);
  assert.equal(await count(app, 'manages', 'id = ?', m2), 0);
});

test('members and monitors: the same rule', async (t) => {
  const app = await setUp(t);
  const [role] = await addChild(app, ROOT_ROLE_ID, ALL);
  const user = await app.createUser('member@example.test');
  const member = await addMember(app, role, user.id);
  const one = await app.request('PUT', `/v1/role/${role}/member/${member}`, { token: app.adminToken, body: {} });
  assert.equal(one.status, 200, one.text);
  assert.equal(one.body.member.id, member);
  const twice = await app.request('PUT', `/v1/role/${role}/member/${member},${member}`, { token: app.adminToken, body: {} });
  assert.deepEqual(twice.body.member.map((m: { id: number }) => m.id), [member]);

  const device = await addDevice(app);
  await addMonitors(app, ROOT_ROLE_ID, device, { mm: true });
  const mon = await addMonitors(app, role, device, { reads: ['a'] });
  const body = { monitorManagement: false, reads: ['b'], edits: [] };
  const single = await app.request('PUT', `/v1/role/${role}/monitors/${mon}`, { token: app.adminToken, body });
  assert.equal(single.status, 200, single.text);
  assert.equal(single.body.monitors.id, mon);
  const repeated = await app.request('PUT', `/v1/role/${role}/monitors/${mon},${mon}`, { token: app.adminToken, body });
  assert.equal(repeated.status, 200, repeated.text);
  assert.deepEqual(repeated.body.monitors.map((m: { id: number }) => m.id), [mon]);
  const byQuery = await app.request('PUT', `/v1/role/${role}/monitors?deviceId=${device}&deviceId=${device}`, { token: app.adminToken, body });
  assert.equal(byQuery.status, 200, byQuery.text);
  assert.deepEqual(byQuery.body.monitors.map((m: { deviceId: number }) => m.deviceId), [device]);
});

test('monitors DELETE of several ids answers one deletion per id, in request order', async (t) => {
  const app = await setUp(t);
  const [role] = await addChild(app, ROOT_ROLE_ID, ALL);
  const device = await addDevice(app);
  const other = await addDevice(app);
  const keep = await addMonitors(app, ROOT_ROLE_ID, device, { mm: false, reads: ['x'] });
  await addMonitors(app, ROOT_ROLE_ID, other, { mm: true });
  const a = await addMonitors(app, role, device, { mm: true });
  const b = await addMonitors(app, role, other, { reads: ['y'] });
  // b first (no cascade), then a: the device loses its last monitorManagement and goes with `keep`
  const res = await app.request('DELETE', `/v1/role/${role}/monitors/${b},${a}`, { token: app.adminToken });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, [
    { deletedNodeIds: [], deletedRelationIds: [b] },
    { deletedNodeIds: [device], deletedRelationIds: [keep, a].sort((x, y) => x - y) },
  ]);
  assert.equal(await count(app, 'devices', 'id = ?', device), 0);
});
