// POST /v1/license/claim and GET /v1/license/controller/{nodeId}.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, T0 } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import { addMember, addMonitor, claim, controllerScene, createDevice, createLicense, createRole, datalinks } from './fixtures.ts';

describe('POST /v1/license/claim happy', () => {
  test('a user with monitorManagement on the controller links a license: exact body and row', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    app.clock.advance(5);
    const res = await app.request('POST', '/v1/license/claim', { token: scene.manager.token, body: { licenseKey: license.key, nodeId: scene.nodeId } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { success: true, license: { id: license.id, key: license.key, nodeId: scene.nodeId } });
    assert.deepEqual(await datalinks(app), [{ license_id: license.id, device_id: scene.deviceId, created_at: T0 + 5 }]);
  });

  test('monitorManagement through reach (a role above the monitoring role), and an activated license, with a trimmed key', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const boss = await app.createUser('boss@test');
    const bossRole = await createRole(app, 'boss');
    await app.deps.db.run(sql`INSERT INTO manages (parent_role_id, child_role_id, role_management, user_management, view_management, device_management, report_management, alarm_management) VALUES (${bossRole}, ${scene.managerRole}, 0, 0, 0, 0, 0, 0)`);
    await addMember(app, bossRole, boss.id);
    const license = await createLicense(app);
    assert.equal((await app.request('POST', '/v1/license/activate', { token: app.adminToken, body: { key: license.key } })).status, 200);
    const res = await app.request('POST', '/v1/license/claim', { token: boss.token, body: { licenseKey: `  ${license.key} `, nodeId: scene.nodeId } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { success: true, license: { id: license.id, key: license.key, nodeId: scene.nodeId } });
    assert.equal((await datalinks(app)).length, 1);
  });

  test('a license freed by the deletion of its controller can be claimed again', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await controllerScene(app, 'ctrl-a');
    const license = await createLicense(app);
    await claim(app, a.manager, license.key, 'ctrl-a');
    await app.deps.db.run(sql`DELETE FROM devices WHERE id = ${a.deviceId}`);
    assert.deepEqual(await datalinks(app), []);
    const b = await controllerScene(app, 'ctrl-b');
    await claim(app, b.manager, license.key, 'ctrl-b');
    assert.deepEqual((await datalinks(app)).map((d) => d.device_id), [b.deviceId]);
  });
});

describe('POST /v1/license/claim security', () => {
  test('needs a token', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    await assertRequiresAuth(app, 'POST', '/v1/license/claim', { licenseKey: license.key, nodeId: scene.nodeId });
    assert.deepEqual(await datalinks(app), []);
  });

  test('readable without monitorManagement -> 403 naming the right; nothing written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    for (const who of [scene.reader, scene.upper]) {
      const body = assertError(await app.request('POST', '/v1/license/claim', { token: who.token, body: { licenseKey: license.key, nodeId: scene.nodeId } }), 403, 'FORBIDDEN');
      assert.deepEqual(body, {
        statusCode: 403, error: 'Forbidden', message: 'claiming a license needs monitorManagement on controller "ctrl-1"', code: 'FORBIDDEN',
      });
    }
    // 403 also for an unknown key: rights on the controller are checked before the key is looked at
    assertError(await app.request('POST', '/v1/license/claim', { token: scene.reader.token, body: { licenseKey: 'GK-NOPE', nodeId: scene.nodeId } }), 403, 'FORBIDDEN');
    assert.deepEqual(await datalinks(app), []);
  });

  test('invisible, missing or non-controller devices all answer the same 404', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    // a device with monitorManagement for the manager that is not a controller
    const meter = await createDevice(app, { nodeId: 'meter-1', nodeType: 'powerMeter' });
    await addMonitor(app, scene.managerRole, meter, { monitorManagement: true });
    const noType = await createDevice(app, { nodeId: 'bare-1' });
    await addMonitor(app, scene.managerRole, noType, { monitorManagement: true });
    const cases: [string, string][] = [
      [scene.stranger.token, scene.nodeId], // exists, invisible
      [app.adminToken, scene.nodeId], // root member, but no monitors relation: invisible too
      [scene.manager.token, 'no-such-node'],
      [scene.manager.token, 'meter-1'],
      [scene.manager.token, 'bare-1'],
      [scene.manager.token, 'CTRL-1'], // nodeIds are exact
    ];
    for (const [token, nodeId] of cases) {
      const body = assertError(await app.request('POST', '/v1/license/claim', { token, body: { licenseKey: license.key, nodeId } }), 404, 'NOT_FOUND');
      assert.deepEqual(body, { statusCode: 404, error: 'Not Found', message: `no controller with nodeId ${JSON.stringify(nodeId)}`, code: 'NOT_FOUND' });
    }
    assert.deepEqual(await datalinks(app), []);
  });

  test('unknown key -> 404; keys are exact', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    for (const licenseKey of ['GK-NOPE', license.key.toLowerCase()]) {
      const body = assertError(await app.request('POST', '/v1/license/claim', { token: scene.manager.token, body: { licenseKey, nodeId: scene.nodeId } }), 404, 'NOT_FOUND');
      assert.equal(body.message, 'no license with this key');
    }
    assert.deepEqual(await datalinks(app), []);
  });

  test('already claimed (by this or another controller) -> 400 ALREADY_CLAIMED; the first link stands', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await controllerScene(app, 'ctrl-a');
    const b = await controllerScene(app, 'ctrl-b');
    const license = await createLicense(app);
    await claim(app, a.manager, license.key, 'ctrl-a');
    for (const [user, nodeId] of [[a.manager, 'ctrl-a'], [b.manager, 'ctrl-b']] as const) {
      const res = await app.request('POST', '/v1/license/claim', { token: user.token, body: { licenseKey: license.key, nodeId } });
      assert.deepEqual(assertError(res, 400, 'ALREADY_CLAIMED'), {
        statusCode: 400, error: 'Bad Request', message: 'this license is already claimed', code: 'ALREADY_CLAIMED',
      });
    }
    assert.deepEqual((await datalinks(app)).map((d) => [d.license_id, d.device_id]), [[license.id, a.deviceId]]);
  });
});

describe('POST /v1/license/claim validation', () => {
  const cases: [string, unknown, RegExp][] = [
    ['no body', undefined, /^body: /],
    ['missing licenseKey', { nodeId: 'ctrl-1' }, /^licenseKey: /],
    ['missing nodeId', { licenseKey: 'k' }, /^nodeId: /],
    ['empty licenseKey', { licenseKey: ' ', nodeId: 'ctrl-1' }, /^licenseKey: expected a non-empty key$/],
    ['licenseKey of 51 characters', { licenseKey: 'k'.repeat(51), nodeId: 'ctrl-1' }, /^licenseKey: expected at most 50 characters$/],
    ['nodeId not a string', { licenseKey: 'k', nodeId: 7 }, /^nodeId: /],
    ['empty nodeId', { licenseKey: 'k', nodeId: '' }, /^nodeId: expected a non-empty nodeId$/],
    ['the Eniris field name key', { key: 'k', nodeId: 'ctrl-1' }, /^(licenseKey: |key: unknown field)/],
    ['unknown field', { licenseKey: 'k', nodeId: 'ctrl-1', deviceId: 1 }, /^deviceId: unknown field$/],
  ];
  for (const [name, body, message] of cases) {
    test(`${name} -> 400 naming the field`, async (t) => {
      const app = await makeTestApp();
      t.after(() => app.close());
      const scene = await controllerScene(app);
      await createLicense(app, { key: 'k' });
      const res = await app.request('POST', '/v1/license/claim', { token: scene.manager.token, body });
      assert.match(assertError(res, 400, 'BAD_REQUEST').message, message);
      assert.deepEqual(await datalinks(app), []);
    });
  }
});

describe('GET /v1/license/controller/{nodeId}', () => {
  test('readers of the controller get its licenses in claim order, exact bodies', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const other = await controllerScene(app, 'ctrl-2');
    const first = await createLicense(app, { type: 'commercial', duration: 10, gridKw: 3 });
    const second = await createLicense(app, { duration: 20 });
    const elsewhere = await createLicense(app);
    await createLicense(app); // unclaimed
    await claim(app, scene.manager, second.key, scene.nodeId);
    await claim(app, scene.manager, first.key, scene.nodeId);
    await claim(app, other.manager, elsewhere.key, 'ctrl-2');
    const activated = await app.request('POST', '/v1/license/activate', { token: scene.reader.token, body: { key: first.key, activationIso: '2026-01-10T12:00:00+01:00' } });
    assert.equal(activated.status, 200);
    for (const who of [scene.manager, scene.reader, scene.upper]) {
      const res = await app.request('GET', `/v1/license/controller/${scene.nodeId}`, { token: who.token });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, {
        licenses: [second, { ...first, activationDate: '2026-01-10T11:00:00.000Z', deactivationDate: '2026-01-20T11:00:00.000Z' }],
      });
    }
  });

  test('a controller without licenses -> empty list; a nodeId with reserved characters is addressed percent-encoded', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app, 'site a/ctrl?1');
    const license = await createLicense(app);
    const empty = await app.request('GET', `/v1/license/controller/${encodeURIComponent('site a/ctrl?1')}`, { token: scene.reader.token });
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body, { licenses: [] });
    await claim(app, scene.manager, license.key, 'site a/ctrl?1');
    const one = await app.request('GET', `/v1/license/controller/${encodeURIComponent('site a/ctrl?1')}`, { token: scene.reader.token });
    assert.deepEqual(one.body, { licenses: [license] });
  });

  test('needs a token', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    await controllerScene(app);
    await assertRequiresAuth(app, 'GET', '/v1/license/controller/ctrl-1');
  });

  test('invisible, missing or non-controller -> the same 404', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    await claim(app, scene.manager, license.key, scene.nodeId);
    const meter = await createDevice(app, { nodeId: 'meter-1', nodeType: 'powerMeter' });
    await addMonitor(app, scene.managerRole, meter, { monitorManagement: true });
    for (const [token, nodeId] of [[scene.stranger.token, scene.nodeId], [app.adminToken, scene.nodeId], [scene.manager.token, 'nope'], [scene.manager.token, 'meter-1']] as const) {
      const body = assertError(await app.request('GET', `/v1/license/controller/${nodeId}`, { token }), 404, 'NOT_FOUND');
      assert.equal(body.message, `no controller with nodeId ${JSON.stringify(nodeId)}`);
    }
  });

  test('unknown query parameters -> 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    assertError(await app.request('GET', `/v1/license/controller/${scene.nodeId}?limit=1`, { token: scene.reader.token }), 400, 'BAD_REQUEST');
  });
});
