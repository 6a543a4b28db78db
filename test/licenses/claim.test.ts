// POST /v1/license/claim and GET /v1/license/controller/{nodeId}.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, T0 } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import { addMember, addMonitor, claim, controllerScene, createDevice, createLicense, createRole, datalinks } from './fixtures.ts';

describe('POST /v1/license/claim happy', () => {
  test('a user with monitorManagement on the controller links a license: exact body and row', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    const license = await createLicense(t);
    t.clock.advance(5);
    const res = await t.request('POST', '/v1/license/claim', { token: scene.manager.token, body: { licenseKey: license.key, nodeId: scene.nodeId } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { success: true, license: { id: license.id, key: license.key, nodeId: scene.nodeId } });
    assert.deepEqual(datalinks(t), [{ license_id: license.id, device_id: scene.deviceId, created_at: T0 + 5 }]);
    t.close();
  });

  test('monitorManagement through reach (a role above the monitoring role), and an activated license, with a trimmed key', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    const boss = await t.createUser('boss@test');
    const bossRole = createRole(t, 'boss');
    t.deps.db.sqlite.prepare('INSERT INTO manages (parent_role_id, child_role_id, role_management, user_management, view_management, device_management, report_management, alarm_management) VALUES (?, ?, 0, 0, 0, 0, 0, 0)').run(bossRole, scene.managerRole);
    addMember(t, bossRole, boss.id);
    const license = await createLicense(t);
    assert.equal((await t.request('POST', '/v1/license/activate', { token: t.adminToken, body: { key: license.key } })).status, 200);
    const res = await t.request('POST', '/v1/license/claim', { token: boss.token, body: { licenseKey: `  ${license.key} `, nodeId: scene.nodeId } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { success: true, license: { id: license.id, key: license.key, nodeId: scene.nodeId } });
    assert.equal(datalinks(t).length, 1);
    t.close();
  });

  test('a license freed by the deletion of its controller can be claimed again', async () => {
    const t = await makeTestApp();
    const a = await controllerScene(t, 'ctrl-a');
    const license = await createLicense(t);
    await claim(t, a.manager, license.key, 'ctrl-a');
    t.deps.db.sqlite.prepare('DELETE FROM devices WHERE id = ?').run(a.deviceId);
    assert.deepEqual(datalinks(t), []);
    const b = await controllerScene(t, 'ctrl-b');
    await claim(t, b.manager, license.key, 'ctrl-b');
    assert.deepEqual(datalinks(t).map((d) => d.device_id), [b.deviceId]);
    t.close();
  });
});

describe('POST /v1/license/claim security', () => {
  test('needs a token', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    const license = await createLicense(t);
    await assertRequiresAuth(t, 'POST', '/v1/license/claim', { licenseKey: license.key, nodeId: scene.nodeId });
    assert.deepEqual(datalinks(t), []);
    t.close();
  });

  test('readable without monitorManagement -> 403 naming the right; nothing written', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    const license = await createLicense(t);
    for (const who of [scene.reader, scene.upper]) {
      const body = assertError(await t.request('POST', '/v1/license/claim', { token: who.token, body: { licenseKey: license.key, nodeId: scene.nodeId } }), 403, 'FORBIDDEN');
      assert.deepEqual(body, {
        statusCode: 403, error: 'Forbidden', message: 'claiming a license needs monitorManagement on controller "ctrl-1"', code: 'FORBIDDEN',
      });
    }
    // 403 also for an unknown key: rights on the controller are checked before the key is looked at
    assertError(await t.request('POST', '/v1/license/claim', { token: scene.reader.token, body: { licenseKey: 'GK-NOPE', nodeId: scene.nodeId } }), 403, 'FORBIDDEN');
    assert.deepEqual(datalinks(t), []);
    t.close();
  });

  test('invisible, missing or non-controller devices all answer the same 404', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    const license = await createLicense(t);
    // a device with monitorManagement for the manager that is not a controller
    const meter = createDevice(t, { nodeId: 'meter-1', nodeType: 'powerMeter' });
    addMonitor(t, scene.managerRole, meter, { monitorManagement: true });
    const noType = createDevice(t, { nodeId: 'bare-1' });
    addMonitor(t, scene.managerRole, noType, { monitorManagement: true });
    const cases: [string, string][] = [
      [scene.stranger.token, scene.nodeId], // exists, invisible
      [t.adminToken, scene.nodeId], // root member, but no monitors relation: invisible too
      [scene.manager.token, 'no-such-node'],
      [scene.manager.token, 'meter-1'],
      [scene.manager.token, 'bare-1'],
      [scene.manager.token, 'CTRL-1'], // nodeIds are exact
    ];
    for (const [token, nodeId] of cases) {
      const body = assertError(await t.request('POST', '/v1/license/claim', { token, body: { licenseKey: license.key, nodeId } }), 404, 'NOT_FOUND');
      assert.deepEqual(body, { statusCode: 404, error: 'Not Found', message: `no controller with nodeId ${JSON.stringify(nodeId)}`, code: 'NOT_FOUND' });
    }
    assert.deepEqual(datalinks(t), []);
    t.close();
  });

  test('unknown key -> 404; keys are exact', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    const license = await createLicense(t);
    for (const licenseKey of ['GK-NOPE', license.key.toLowerCase()]) {
      const body = assertError(await t.request('POST', '/v1/license/claim', { token: scene.manager.token, body: { licenseKey, nodeId: scene.nodeId } }), 404, 'NOT_FOUND');
      assert.equal(body.message, 'no license with this key');
    }
    assert.deepEqual(datalinks(t), []);
    t.close();
  });

  test('already claimed (by this or another controller) -> 400 ALREADY_CLAIMED; the first link stands', async () => {
    const t = await makeTestApp();
    const a = await controllerScene(t, 'ctrl-a');
    const b = await controllerScene(t, 'ctrl-b');
    const license = await createLicense(t);
    await claim(t, a.manager, license.key, 'ctrl-a');
    for (const [user, nodeId] of [[a.manager, 'ctrl-a'], [b.manager, 'ctrl-b']] as const) {
      const res = await t.request('POST', '/v1/license/claim', { token: user.token, body: { licenseKey: license.key, nodeId } });
      assert.deepEqual(assertError(res, 400, 'ALREADY_CLAIMED'), {
        statusCode: 400, error: 'Bad Request', message: 'this license is already claimed', code: 'ALREADY_CLAIMED',
      });
    }
    assert.deepEqual(datalinks(t).map((d) => [d.license_id, d.device_id]), [[license.id, a.deviceId]]);
    t.close();
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
    test(`${name} -> 400 naming the field`, async () => {
      const t = await makeTestApp();
      const scene = await controllerScene(t);
      await createLicense(t, { key: 'k' });
      const res = await t.request('POST', '/v1/license/claim', { token: scene.manager.token, body });
      assert.match(assertError(res, 400, 'BAD_REQUEST').message, message);
      assert.deepEqual(datalinks(t), []);
      t.close();
    });
  }
});

describe('GET /v1/license/controller/{nodeId}', () => {
  test('readers of the controller get its licenses in claim order, exact bodies', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    const other = await controllerScene(t, 'ctrl-2');
    const first = await createLicense(t, { type: 'commercial', duration: 10, gridKw: 3 });
    const second = await createLicense(t, { duration: 20 });
    const elsewhere = await createLicense(t);
    await createLicense(t); // unclaimed
    await claim(t, scene.manager, second.key, scene.nodeId);
    await claim(t, scene.manager, first.key, scene.nodeId);
    await claim(t, other.manager, elsewhere.key, 'ctrl-2');
    const activated = await t.request('POST', '/v1/license/activate', { token: scene.reader.token, body: { key: first.key, activationIso: '2026-01-10T12:00:00+01:00' } });
    assert.equal(activated.status, 200);
    for (const who of [scene.manager, scene.reader, scene.upper]) {
      const res = await t.request('GET', `/v1/license/controller/${scene.nodeId}`, { token: who.token });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, {
        licenses: [second, { ...first, activationDate: '2026-01-10T11:00:00.000Z', deactivationDate: '2026-01-20T11:00:00.000Z' }],
      });
    }
    t.close();
  });

  test('a controller without licenses -> empty list; a nodeId with reserved characters is addressed percent-encoded', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t, 'site a/ctrl?1');
    const license = await createLicense(t);
    const empty = await t.request('GET', `/v1/license/controller/${encodeURIComponent('site a/ctrl?1')}`, { token: scene.reader.token });
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body, { licenses: [] });
    await claim(t, scene.manager, license.key, 'site a/ctrl?1');
    const one = await t.request('GET', `/v1/license/controller/${encodeURIComponent('site a/ctrl?1')}`, { token: scene.reader.token });
    assert.deepEqual(one.body, { licenses: [license] });
    t.close();
  });

  test('needs a token', async () => {
    const t = await makeTestApp();
    await controllerScene(t);
    await assertRequiresAuth(t, 'GET', '/v1/license/controller/ctrl-1');
    t.close();
  });

  test('invisible, missing or non-controller -> the same 404', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    const license = await createLicense(t);
    await claim(t, scene.manager, license.key, scene.nodeId);
    const meter = createDevice(t, { nodeId: 'meter-1', nodeType: 'powerMeter' });
    addMonitor(t, scene.managerRole, meter, { monitorManagement: true });
    for (const [token, nodeId] of [[scene.stranger.token, scene.nodeId], [t.adminToken, scene.nodeId], [scene.manager.token, 'nope'], [scene.manager.token, 'meter-1']] as const) {
      const body = assertError(await t.request('GET', `/v1/license/controller/${nodeId}`, { token }), 404, 'NOT_FOUND');
      assert.equal(body.message, `no controller with nodeId ${JSON.stringify(nodeId)}`);
    }
    t.close();
  });

  test('unknown query parameters -> 400', async () => {
    const t = await makeTestApp();
    const scene = await controllerScene(t);
    assertError(await t.request('GET', `/v1/license/controller/${scene.nodeId}?limit=1`, { token: scene.reader.token }), 400, 'BAD_REQUEST');
    t.close();
  });
});
