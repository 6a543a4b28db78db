// The storage backend a test app runs on is visible in /healthz, and what must hold alike on every backend: U+0000 is
// refused, answers are compact JSON. (Telemetry on PostgreSQL: test/telemetry and test/influx run on both backends.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError } from '../support/app.ts';
import { testBackend } from '../support/postgres.ts';

test('/healthz names the backend the suite runs on', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const res = await app.request('GET', '/healthz');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { status: 'ok', version: app.deps.version, backend: testBackend(), database: 'reachable' });
});

test('U+0000 is refused (400) in a JSON body and in the URL, on every backend, and nothing is stored', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const token = app.adminToken;
  const body = assertError(await app.request('POST', '/v1/license/activate', { token, body: { key: 'GK-\u0000' } }), 400, 'BAD_REQUEST');
  assert.match(body.message, /U\+0000/);
  const flags = { roleManagement: true, userManagement: true, viewManagement: false, deviceManagement: true, reportManagement: false, alarmManagement: false };
  assertError(await app.request('POST', '/v1/role?parentRoleId=1', { token, body: { role: { name: 'a\u0000b', selfRights: flags }, manages: flags } }), 400, 'BAD_REQUEST');
  assertError(await app.request('POST', '/v1/device?roleId=1', { token, body: { properties: { nodeId: 'n\u0000' } } }), 400, 'BAD_REQUEST');
  assertError(await app.request('POST', '/v1/device?roleId=1', { token, body: { properties: { ['k\u0000']: 1 } } }), 400, 'BAD_REQUEST');
  assertError(await app.request('GET', '/v1/license/controller/n%00x', { token }), 400, 'BAD_REQUEST');
  const counts = await app.deps.db.all<{ n: number }>(app.deps.db.qb.selectFrom('devices').select((eb) => eb.fn.countAll<number>().as('n')));
  assert.deepEqual(counts, [{ n: 0 }]);
  // a backslash followed by u0000 is ordinary text
  const ok = await app.request('POST', '/v1/device?roleId=1', { token, body: { properties: { note: '\\u0000' } } });
  assert.equal(ok.status, 200, ok.text);
});

test('answers are compact JSON, byte for byte what JSON.stringify writes (the listing fast path included)', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const token = app.adminToken;
  const created = await app.request('POST', '/v1/device?roleId=1', { token, body: { properties: { nodeId: 'n1', name: 'Main', 'ü "q"': [1, { a: null }], z: 'x\ny' } } });
  assert.equal(created.status, 200, created.text);
  for (const [method, path, body] of [['POST', '/v1/device/query', {}], ['GET', '/v1/device', undefined], ['POST', '/v1/role/query', {}]] as const) {
    const res = await app.request(method, path, { token, body });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, JSON.stringify(JSON.parse(res.text)), `${method} ${path}`);
  }
  const listed = (await app.request('POST', '/v1/device/query', { token, body: {} })).body.device[0];
  assert.deepEqual(Object.keys(listed.userRights.propertyEditabilities), ['nodeId', 'name', 'ü "q"', 'z'], 'in stored key order');
});
