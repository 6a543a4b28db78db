// Audit entries of devices (which properties changed, before and after), monitors relations and licenses; none for a
// refused or failed request (403, 404, 409, 412, 422) and none for a write that changes nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp } from '../support/app.ts';
import { addDevice, addManages, addMonitors, addRole, userIn } from '../devices/fixtures.ts';
import { added, auditText, core, refusedWithoutEntry } from './fixtures.ts';

describe('audit: devices', () => {
  it('device.create records the properties; PATCH and PUT record each changed property with before and after', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'site', { deviceManagement: true });
    const user = await userIn(t, role);
    const actor = { userId: user.id, email: (await t.deps.db.get(sql<{ email: string }>`SELECT email FROM users WHERE id = ${user.id}`))?.email, token: 'access' };
    const create = await added(t, () => t.request('POST', `/v1/device?roleId=${role}`, { token: user.token, body: { properties: { nodeId: 'n1', name: 'meter', info: { a: 1 } } } }));
    const id = create.res.body.device.id;
    assert.deepEqual(create.entries.map(core), [{
      actor, action: 'device.create', target: { kind: 'device', id },
      changes: { nodeId: { after: 'n1' }, name: { after: 'meter' }, info: { after: { a: 1 } } },
    }]);

    t.clock.advance(1000);
    const patch = await added(t, () => t.request('PATCH', `/v1/device/${id}`, { token: user.token, body: [
      { op: 'replace', path: '/name', value: 'main meter' }, { op: 'add', path: '/info/b', value: 2 }, { op: 'add', path: '/phase', value: 3 },
    ] }));
    assert.deepEqual(patch.entries.map(core), [{
      actor, action: 'device.patch', target: { kind: 'device', id },
      changes: { name: { before: 'meter', after: 'main meter' }, info: { before: { a: 1 }, after: { a: 1, b: 2 } }, phase: { after: 3 } },
    }]);

    t.clock.advance(1000);
    const put = await added(t, () => t.request('PUT', `/v1/device/${id}?mode=strict`, { token: user.token, body: { properties: { nodeId: 'n1', name: 'main meter' } } }));
    assert.deepEqual(put.entries.map(core), [{
      actor, action: 'device.put', target: { kind: 'device', id },
      changes: { info: { before: { a: 1, b: 2 } }, phase: { before: 3 } },
    }]);
    // the same values again: nothing changed, nothing recorded
    const same = await added(t, () => t.request('PUT', `/v1/device/${id}`, { token: user.token, body: { properties: { name: 'main meter' } } }));
    assert.deepEqual(same.entries, []);
    await t.close();
  });

  it('a write on several devices records one entry per changed device', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'site');
    const user = await userIn(t, role);
    const d1 = await addDevice(t, { name: 'a' });
    const d2 = await addDevice(t, { name: 'b' });
    const d3 = await addDevice(t, { name: 'c' });
    for (const d of [d1, d2, d3]) await addMonitors(t, role, d, { mm: true });
    const res = await added(t, () => t.request('PUT', `/v1/device/${d1},${d2},${d3}`, { token: user.token, body: { properties: { name: 'b' } } }));
    assert.deepEqual(res.entries.map((e) => [e.action, e.target.id, e.changes]), [
      ['device.put', d1, { name: { before: 'a', after: 'b' } }],
      ['device.put', d3, { name: { before: 'c', after: 'b' } }],
    ]);
    await t.close();
  });

  it('refused and failed device writes record nothing: 403, 404, 409, 412, 422', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'site');
    const user = await userIn(t, role);
    const mine = await addDevice(t, { nodeId: 'mine', name: 'x', secret: 's' });
    const readOnly = await addDevice(t, { name: 'y' });
    await addDevice(t, { nodeId: 'taken' });
    await addMonitors(t, role, mine, { mm: false, reads: ['secret'], edits: ['name', 'nodeId'] });
    await addMonitors(t, role, readOnly, { mm: false, reads: ['name'] });
    const patch = (ids: string, body: unknown, headers?: Record<string, string>) => () => t.request('PATCH', `/v1/device/${ids}`, { token: user.token, body, headers });
    await refusedWithoutEntry(t, 403, patch(`${readOnly}`, [{ op: 'replace', path: '/name', value: 'z' }]));
    await refusedWithoutEntry(t, 403, patch(`${mine}`, [{ op: 'replace', path: '/secret', value: 'z' }]));
    await refusedWithoutEntry(t, 404, patch(`${mine},987654`, [{ op: 'replace', path: '/name', value: 'z' }]));
    await refusedWithoutEntry(t, 409, patch(`${mine}`, [{ op: 'replace', path: '/nodeId', value: 'taken' }]));
    await refusedWithoutEntry(t, 412, patch(`${mine}`, [{ op: 'replace', path: '/name', value: 'z' }], { 'if-unmodified-since': new Date(t.clock.now() - 60_000).toISOString() }));
    await refusedWithoutEntry(t, 422, patch(`${mine}`, [{ op: 'test', path: '/name', value: 'not x' }, { op: 'replace', path: '/name', value: 'z' }]));
    // all or nothing across ids: the first device's change is rolled back with its entry
    await refusedWithoutEntry(t, 403, patch(`${mine},${readOnly}`, [{ op: 'replace', path: '/name', value: 'z' }]));
    await refusedWithoutEntry(t, 404, () => t.request('POST', `/v1/device?roleId=987654`, { token: user.token, body: { properties: {} } }));
    assert.equal((await t.deps.db.get(sql<{ properties: string }>`SELECT properties FROM devices WHERE id = ${mine}`))?.properties, JSON.stringify({ nodeId: 'mine', name: 'x', secret: 's' }));
    await t.close();
  });
});

describe('audit: monitors', () => {
  it('monitors.put records new and changed relations; monitors.delete records the removal and a deleted device', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'owner', { deviceManagement: true });
    const other = await addRole(t, 'other');
    await addManages(t, role, other, { deviceManagement: true });
    const user = await userIn(t, role);
    const d = await addDevice(t, { name: 'a' });
    const own = await addMonitors(t, role, d, { mm: true });
    const put = await added(t, () => t.request('PUT', `/v1/role/${other}/monitors?deviceId=${d}`, { token: user.token, body: { monitorManagement: false, reads: ['name'], edits: [] } }));
    const rel = put.res.body.monitors.id;
    assert.deepEqual(put.entries.map((e) => [e.action, e.target, e.changes]), [['monitors.put', { kind: 'monitors', id: rel }, {
      roleId: { after: other }, deviceId: { after: d }, monitorManagement: { after: false }, reads: { after: ['name'] }, edits: { after: [] },
    }]]);
    const upd = await added(t, () => t.request('PUT', `/v1/role/${other}/monitors/${rel}`, { token: user.token, body: { monitorManagement: false, reads: [], edits: ['name'] } }));
    assert.deepEqual(upd.entries.map((e) => [e.action, e.target, e.changes]), [['monitors.put', { kind: 'monitors', id: rel }, {
      reads: { before: ['name'], after: [] }, edits: { before: [], after: ['name'] },
    }]]);
    // taking the last monitorManagement away is refused (409) and records nothing
    await refusedWithoutEntry(t, 409, () => t.request('PUT', `/v1/role/${role}/monitors/${own}`, { token: user.token, body: { monitorManagement: false, reads: [], edits: [] } }));
    const del = await added(t, () => t.request('DELETE', `/v1/role/${role}/monitors/${own}`, { token: user.token }));
    assert.deepEqual(del.entries.map((e) => [e.action, e.target, e.changes]), [['monitors.delete', { kind: 'monitors', id: own }, {
      roleId: { before: role }, deviceId: { before: d }, monitorManagement: { before: true }, reads: { before: [] }, edits: { before: [] }, deviceDeleted: d,
    }]]);
    await t.close();
  });
});

describe('audit: licenses', () => {
  it('license.create (one entry per license, no key), license.claim and license.activate; refusals record nothing', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'installer');
    const user = await userIn(t, role);
    const ctrl = await addDevice(t, { nodeId: 'ctrl-1', nodeType: 'smartgridController' });
    await addMonitors(t, role, ctrl, { mm: true });
    const create = await added(t, () => t.request('POST', '/v1/license', { token: t.adminToken, body: { type: 'commercial', duration: 30, count: 2, gridKw: 5 } }));
    const licenses = create.res.body.licenses;
    const fields = { gridKw: { after: 5 }, solarKw: { after: null }, batteryKw: { after: null }, evKw: { after: null }, creationDate: { after: new Date(t.clock.now()).toISOString() }, activationDate: { after: null }, duration: { after: 30 }, deactivationDate: { after: null }, type: { after: 'commercial' } };
    assert.deepEqual(create.entries.map((e) => [e.action, e.target, e.changes]), licenses.map((l: any) => ['license.create', { kind: 'license', id: l.id }, fields]));
    for (const l of licenses) assert.ok(!(await auditText(t)).includes(l.key), 'no license key in the audit log');
    await refusedWithoutEntry(t, 403, () => t.request('POST', '/v1/license', { token: user.token, body: { type: 'commercial', duration: 30 } }));

    const claim = await added(t, () => t.request('POST', '/v1/license/claim', { token: user.token, body: { licenseKey: licenses[0].key, nodeId: 'ctrl-1' } }));
    assert.deepEqual(claim.entries.map(core), [{
      actor: { userId: user.id, email: claim.entries[0].actor.email, token: 'access' }, action: 'license.claim', target: { kind: 'license', id: licenses[0].id },
      changes: { controllerId: { before: null, after: ctrl } },
    }]);
    await refusedWithoutEntry(t, 400, () => t.request('POST', '/v1/license/claim', { token: user.token, body: { licenseKey: licenses[0].key, nodeId: 'ctrl-1' } }));
    const activate = await added(t, () => t.request('POST', '/v1/license/activate', { token: user.token, body: { key: licenses[0].key, activationIso: '2026-02-01T00:00:00Z' } }));
    assert.deepEqual(activate.entries.map((e) => [e.action, e.target, e.changes]), [['license.activate', { kind: 'license', id: licenses[0].id }, {
      activationDate: { before: null, after: '2026-02-01T00:00:00.000Z' }, deactivationDate: { before: null, after: '2026-03-03T00:00:00.000Z' },
    }]]);
    await refusedWithoutEntry(t, 400, () => t.request('POST', '/v1/license/activate', { token: user.token, body: { key: licenses[0].key } }));
    await refusedWithoutEntry(t, 404, () => t.request('POST', '/v1/license/activate', { token: user.token, body: { key: 'GK-NOPE' } }));
    for (const l of licenses) assert.ok(!(await auditText(t)).includes(l.key), 'no license key in the audit log');
    await t.close();
  });
});
