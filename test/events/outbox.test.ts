// The outbox: every audited change to the installation's data writes its events in the same unit of work (a refused
// request writes none), sign-ins and second factors write none, and each event waits as a pending delivery for every
// enabled subscription whose filter selects it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import fc from 'fast-check';
import { makeTestApp, ADMIN_EMAIL, ADMIN_PASSWORD, type TestApp } from '../support/app.ts';
import { ROOT_ROLE_ID } from '../../src/access/root.ts';
import { addRole, addManages, addDevice, addMonitors, userIn, ALL } from '../roles/fixtures.ts';
import { login } from '../support/auth-helpers.ts';
import { boundedData, MAX_DATA_BYTES, writeEvents, withEvents } from '../../src/events/outbox.ts';
import { eventTypes, filtersSelecting, isTypeFilter, minimalFilters } from '../../src/events/event-types.ts';
import { plainAuditLog, recordCommandAudit } from '../../src/audit/record.ts';
import { licenseCreated } from '../../src/licenses/licenses.schemas.ts';

interface StoredEvent { id: number; uid: string; type: string; subject_kind: string; subject_id: string | null; audience: string; role_id: number | null; device_id: number | null; data: string }

async function events(t: TestApp): Promise<StoredEvent[]> {
  return t.deps.db.all(sql<StoredEvent>`SELECT * FROM events ORDER BY id`);
}

/** The events `send` added (type, subject id), after checking its status. */
async function added(t: TestApp, send: () => Promise<{ status: number; text: string }>, status = 200): Promise<StoredEvent[]> {
  const before = (await events(t)).length;
  const res = await send();
  assert.equal(res.status, status, res.text);
  return (await events(t)).slice(before);
}

const FLAGS = { roleManagement: true, userManagement: true, viewManagement: true, deviceManagement: true, reportManagement: true, alarmManagement: true };
const brief = (e: StoredEvent) => ({ type: e.type, subject: e.subject_kind, id: e.subject_id });

describe('events: the outbox', () => {
  it('each change of roles, relations, members, devices, monitors, licenses and customers writes its event', async () => {
    const t = await makeTestApp();
    const token = t.adminToken;
    const made = await added(t, () => t.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, { token, body: { manages: FLAGS, role: { name: 'site', selfRights: FLAGS } } }));
    assert.equal(made.length, 1);
    assert.equal(made[0].type, 'role.created');
    assert.equal(made[0].role_id, ROOT_ROLE_ID, 'seen by those who reach the parent');
    const roleId = Number(made[0].subject_id);
    assert.deepEqual(JSON.parse(made[0].data).changes.name, { after: 'site' });
    assert.match(made[0].uid, /^evt_[A-Za-z0-9_-]{22}$/);

    assert.deepEqual((await added(t, () => t.request('PUT', `/v1/role/${roleId}`, { token, body: { name: 'site 2', selfRights: FLAGS } }))).map(brief),
      [{ type: 'role.updated', subject: 'role', id: String(roleId) }]);
    const child = (await t.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, { token, body: { manages: FLAGS, role: { name: 'child', selfRights: FLAGS } } })).body.role.id;
    const put = await added(t, () => t.request('PUT', `/v1/role/${roleId}/manages?childRoleId=${child}`, { token, body: FLAGS }));
    assert.deepEqual(put.map((e) => e.type), ['role.manages.created']);
    const managesId = put[0].subject_id;
    assert.deepEqual((await added(t, () => t.request('PUT', `/v1/role/${roleId}/manages/${managesId}`, { token, body: { ...FLAGS, alarmManagement: false } }))).map((e) => e.type),
      ['role.manages.updated']);
    const member = await added(t, () => t.request('PUT', `/v1/role/${roleId}/member?userEmail=someone@example.com&password=long-password-1`, { token, body: {} }));
    assert.deepEqual(member.map((e) => [e.type, e.audience, e.role_id]), [['role.member.created', 'member', roleId]]);
    assert.deepEqual((await added(t, () => t.request('DELETE', `/v1/role/${roleId}/member/${member[0].subject_id}`, { token }))).map((e) => e.type), ['role.member.deleted']);

    const device = await added(t, () => t.request('POST', `/v1/device?roleId=${roleId}`, { token, body: { properties: { name: 'meter', nodeId: 'n-1', nodeType: 'smartgridController' } } }));
    assert.deepEqual(device.map((e) => [e.type, e.audience]), [['device.created', 'device']]);
    const deviceId = Number(device[0].subject_id);
    assert.equal(device[0].device_id, deviceId);
    const patched = await added(t, () => t.request('PATCH', `/v1/device/${deviceId}`, { token, body: [{ op: 'replace', path: '/name', value: 'meter 2' }] }));
    assert.deepEqual(patched.map((e) => e.type), ['device.updated']);
    assert.deepEqual(JSON.parse(patched[0].data), { changes: { name: { before: 'meter', after: 'meter 2' } } });
    assert.deepEqual((await added(t, () => t.request('PUT', `/v1/device/${deviceId}`, { token, body: { properties: { isActive: true } } }))).map((e) => e.type), ['device.updated']);
    // a write that changes nothing records nothing, and so tells nothing
    assert.deepEqual(await added(t, () => t.request('PUT', `/v1/device/${deviceId}`, { token, body: { properties: { isActive: true } } })), []);

    const mon = await added(t, () => t.request('PUT', `/v1/role/${child}/monitors?deviceId=${deviceId}`, { token, body: { monitorManagement: false, reads: ['name'], edits: [] } }));
    assert.deepEqual(mon.map((e) => [e.type, e.role_id]), [['monitors.created', child]]);
    assert.deepEqual((await added(t, () => t.request('PUT', `/v1/role/${child}/monitors/${mon[0].subject_id}`, { token, body: { monitorManagement: false, reads: [], edits: [] } }))).map((e) => e.type), ['monitors.updated']);

    const lic = await added(t, () => t.request('POST', '/v1/license', { token, body: { type: 'residential', duration: 30 } }));
    assert.deepEqual(lic.map((e) => [e.type, e.audience]), [['license.created', 'license']]);
    const licenseRow = (await t.deps.db.get(sql<{ key: string }>`SELECT key FROM licenses WHERE id = ${lic[0].subject_id}`))!;
    assert.deepEqual((await added(t, () => t.request('POST', '/v1/license/claim', { token, body: { licenseKey: licenseRow.key, nodeId: 'n-1' } }))).map((e) => e.type), ['license.claimed']);
    assert.deepEqual((await added(t, () => t.request('POST', '/v1/license/activate', { token, body: { key: licenseRow.key } }))).map((e) => e.type), ['license.activated']);
    assert.doesNotMatch(JSON.stringify(await events(t)), new RegExp(licenseRow.key), 'a license key is never in an event');

    const customer = await added(t, () => t.request('POST', `/v1/customer?roleId=${roleId}`, { token, body: { name: 'ACME' } }));
    assert.deepEqual(customer.map((e) => e.type), ['customer.created']);
    assert.deepEqual((await added(t, () => t.request('POST', `/v1/customer/${customer[0].subject_id}/order`, { token, body: { licenseIds: [lic[0].subject_id] } }))).map((e) => e.type),
      ['customer.order.created']);

    // deleting the last monitors relation with monitorManagement takes the device: monitors.deleted, then device.deleted
    const own = (await t.deps.db.get(sql<{ id: number }>`SELECT id FROM monitors WHERE role_id = ${roleId} AND device_id = ${deviceId}`))!.id;
    await t.request('DELETE', `/v1/role/${child}/monitors/${mon[0].subject_id}`, { token });
    const gone = await added(t, () => t.request('DELETE', `/v1/role/${roleId}/monitors/${own}`, { token }));
    assert.deepEqual(gone.map((e) => [e.type, e.subject_id, e.audience, e.role_id]), [['monitors.deleted', String(own), 'role', roleId], ['device.deleted', String(deviceId), 'role', roleId]]);
    await t.close();
  });

  it('a cascade tells of each role and device it took; the relation\'s parent decides who hears of them', async () => {
    const t = await makeTestApp();
    const parent = await addRole(t, 'parent');
    const child = await addRole(t, 'child');
    const managesId = await addManages(t, parent, child, ALL);
    await addManages(t, ROOT_ROLE_ID, parent, ALL);
    const device = await addDevice(t, { name: 'd' });
    await addMonitors(t, child, device, { mm: true });
    const gone = await added(t, () => t.request('DELETE', `/v1/role/${parent}/manages/${managesId}`, { token: t.adminToken }));
    assert.deepEqual(gone.map((e) => [e.type, e.subject_id, e.role_id]), [
      ['role.manages.deleted', String(managesId), parent], ['role.deleted', String(child), parent], ['device.deleted', String(device), parent],
    ]);
    assert.deepEqual(JSON.parse(gone[1].data), { via: { kind: 'manages', id: managesId } });
    await t.close();
  });

  it('refused writes, sign-ins, token refreshes and user settings write no event', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'plain');
    const user = await userIn(t, role);
    assert.deepEqual(await added(t, () => t.request('POST', `/v1/role?parentRoleId=${role}`, { token: user.token, body: { manages: FLAGS, role: { name: 'x', selfRights: FLAGS } } }), 403), []);
    assert.deepEqual(await added(t, () => t.request('PATCH', '/v1/device/999', { token: t.adminToken, body: [{ op: 'add', path: '/a', value: 1 }] }), 404), []);
    assert.deepEqual(await added(t, () => login(t, ADMIN_EMAIL, 'wrong-password-1'), 401), []);
    const refresh = await added(t, () => login(t, ADMIN_EMAIL, ADMIN_PASSWORD));
    assert.deepEqual(refresh, []);
    assert.deepEqual(await added(t, () => t.request('PUT', `/v1/user/${encodeURIComponent(ADMIN_EMAIL)}/tier`, { token: t.adminToken, body: { tier: 'premium' } }), 204), []);
    const audited = (await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM audit_log`))!.n;
    assert.ok(audited >= 3, 'the audit log recorded those');
    await t.close();
  });

  it('a change and its events commit together: a unit that fails after writing them leaves neither', async () => {
    const t = await makeTestApp();
    const audit = withEvents(plainAuditLog);
    await assert.rejects(t.deps.db.write(async (tx) => {
      await recordCommandAudit(tx, t.clock.now(), { action: 'role.update', target: { kind: 'role', id: 1 }, changes: { name: { before: 'a', after: 'b' } } }, audit);
      throw new Error('the change fails after its audit entry');
    }));
    assert.deepEqual(await events(t), []);
    assert.equal((await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM audit_log`))!.n, 0);
    await assert.rejects(writeEvents(t.deps.db, []), /outside a unit of work/);
    await t.close();
  });

  it('licenses made by the command line have their events too', async () => {
    const t = await makeTestApp();
    const row = { id: '00000000-0000-4000-8000-000000000001', key: 'GK-KEY', type: 'residential', duration: 30, grid_kw: null, solar_kw: null, battery_kw: null, ev_kw: null, creation_date: t.clock.now(), activation_date: null };
    await t.deps.db.tx((tx) => recordCommandAudit(tx, t.clock.now(), [licenseCreated(row as never)], withEvents(plainAuditLog)));
    assert.deepEqual((await events(t)).map(brief), [{ type: 'license.created', subject: 'license', id: row.id }]);
    await t.close();
  });

  it('fans out one pending delivery per enabled subscription whose filter selects the type', async () => {
    const t = await makeTestApp();
    const db = t.deps.db;
    const sub = async (types: string[], enabled = 1) => {
      const row = (await db.get(sql<{ id: number }>`INSERT INTO event_subscriptions (role_id, kind, name, url, types, enabled, created_at, updated_at)
        VALUES (1, 'webhook', 'x', 'http://example.test/', ${JSON.stringify(types)}, ${enabled}, 0, 0) RETURNING id`))!;
      for (const type of minimalFilters(types)) await db.run(sql`INSERT INTO event_subscription_types (type, subscription_id) VALUES (${type}, ${row.id})`);
      return row.id;
    };
    const all = await sub(['*', 'device.*']);
    const devices = await sub(['device.*']);
    const roles = await sub(['role.updated']);
    await sub(['*'], 0);
    const role = (await t.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, { token: t.adminToken, body: { manages: FLAGS, role: { name: 'r', selfRights: FLAGS } } })).body.role.id;
    await db.run(sql`DELETE FROM event_deliveries`);
    assert.equal((await t.request('PUT', `/v1/role/${role}`, { token: t.adminToken, body: { name: 'r 2', selfRights: FLAGS } })).status, 200);
    await t.request('POST', '/v1/device?roleId=1', { token: t.adminToken, body: { properties: { name: 'd' } } });
    const rows = await db.all(sql<{ subscription_id: number; type: string; state: string }>`SELECT d.subscription_id, e.type, d.state
      FROM event_deliveries d JOIN events e ON e.id = d.event_id ORDER BY e.id, d.subscription_id`);
    assert.deepEqual(rows, [
      { subscription_id: all, type: 'role.updated', state: 'pending' }, { subscription_id: roles, type: 'role.updated', state: 'pending' },
      { subscription_id: all, type: 'device.created', state: 'pending' }, { subscription_id: devices, type: 'device.created', state: 'pending' },
    ]);
    await t.close();
  });
});

describe('events: types and data', () => {
  it('every type is noun.verb and every filter that selects it is one the API accepts', () => {
    for (const { type } of eventTypes()) {
      assert.match(type, /^[a-z0-9_]+(\.[a-z0-9_]+)+$/);
      for (const f of filtersSelecting(type)) assert.ok(isTypeFilter(f), f);
    }
    assert.deepEqual(filtersSelecting('role.manages.updated'), ['role.manages.updated', 'role.manages.*', 'role.*', '*']);
    assert.deepEqual(minimalFilters(['device.updated', 'device.*', 'role.manages.updated', 'device.*']), ['device.*', 'role.manages.updated']);
    assert.deepEqual(minimalFilters(['role.*', '*', 'device.created']), ['*']);
    assert.equal(isTypeFilter('nothing.*'), false);
    assert.equal(isTypeFilter('device'), false);
  });

  it('stored data is valid JSON within the bound, and keeps what fits (property)', () => {
    fc.assert(fc.property(fc.dictionary(fc.string({ maxLength: 40 }), fc.oneof(fc.string({ maxLength: 3000 }), fc.integer(), fc.constant(null)), { maxKeys: 30 }), (changes) => {
      const stored = boundedData({ changes });
      assert.ok(Buffer.byteLength(stored) <= MAX_DATA_BYTES);
      const parsed = JSON.parse(stored);
      if (Buffer.byteLength(JSON.stringify({ changes })) <= MAX_DATA_BYTES) assert.deepEqual(parsed, JSON.parse(JSON.stringify({ changes })));
      else assert.equal(parsed.truncated, true);
    }), { seed: 40, numRuns: 300 });
    const names = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`property-with-a-long-name-${i}`, 'x']));
    assert.deepEqual(JSON.parse(boundedData({ changes: names })), { truncated: true });
  });
});
