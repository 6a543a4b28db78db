// Monitors relations: upsert on devices, update/delete by id, query and deprecated GET; the two-part rule; the
// monitorManagement invariant (409 on update, device deletion on delete).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, type TestApp } from '../support/app.ts';
import { addDevice, addManages, addMonitors, addRole, count, ok, storedDevice, storedMonitors, userIn } from './fixtures.ts';

const grant = (mm: boolean, reads: string[] = [], edits: string[] = []) => ({ monitorManagement: mm, reads, edits });
const upsert = (t: TestApp, token: string, roleId: number, deviceIds: string, body: unknown = grant(false, ['a'], ['b'])) =>
  t.request('PUT', `/v1/role/${roleId}/monitors?${deviceIds}`, { token, body });

/**
 * u is a member of A; A -> R with the given flags (R is the role of the relations changed); D is a device on which A
 * has monitorManagement when `mm` is true (else a plain read relation); A's own selfRights as given.
 */
async function world(t: TestApp, opts: { flags?: Parameters<typeof addManages>[3]; mm?: boolean; selfRights?: Parameters<typeof addRole>[2] } = {}) {
  const a = await addRole(t, 'A', opts.selfRights);
  const r = await addRole(t, 'R');
  await addManages(t, a, r, opts.flags ?? { deviceManagement: true });
  const u = await userIn(t, a);
  const d = await addDevice(t, { a: 1, b: 2 });
  const own = await addMonitors(t, a, d, { mm: opts.mm ?? true });
  return { a, r, u, d, own };
}

describe('monitors: happy', () => {
  it('PUT ?deviceId=D creates (R, D), a second PUT updates the same relation', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { r, u, d } = await world(app);
    const created = ok(await upsert(app, u.token, r, `deviceId=${d}`)).monitors;
    assert.deepEqual(created, { id: created.id, roleId: r, deviceId: d, monitorManagement: false, reads: ['a'], edits: ['b'] });
    const updated = ok(await upsert(app, u.token, r, `deviceId=${d}`, grant(true, ['x', 'x'], []))).monitors;
    assert.deepEqual(updated, { id: created.id, roleId: r, deviceId: d, monitorManagement: true, reads: ['x'], edits: [] });
    assert.equal((await storedMonitors(app, d)).length, 2);
  });

  it('several deviceId values (repeated or comma-separated) answer with an array in request order', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { a, r, u, d } = await world(app);
    const d2 = await addDevice(app, {});
    await addMonitors(app, a, d2, { mm: true });
    const list = ok(await upsert(app, u.token, r, `deviceId=${d2}&deviceId=${d}`)).monitors;
    assert.deepEqual(list.map((m: { deviceId: number }) => m.deviceId), [d2, d]);
    assert.deepEqual(ok(await upsert(app, u.token, r, `deviceId=${d},${d2}`)).monitors.map((m: { deviceId: number }) => m.deviceId), [d, d2]);
  });

  it('PUT /monitors/{ids} updates by id; one id -> object, several -> array', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { a, r, u, d } = await world(app);
    const d2 = await addDevice(app, {});
    await addMonitors(app, a, d2, { mm: true });
    const m1 = await addMonitors(app, r, d, {});
    const m2 = await addMonitors(app, r, d2, {});
    const one = ok(await app.request('PUT', `/v1/role/${r}/monitors/${m1}`, { token: u.token, body: grant(false, ['q'], ['w']) })).monitors;
    assert.deepEqual(one, { id: m1, roleId: r, deviceId: d, monitorManagement: false, reads: ['q'], edits: ['w'] });
    const both = ok(await app.request('PUT', `/v1/role/${r}/monitors/${m2},${m1}`, { token: u.token, body: grant(true) })).monitors;
    assert.deepEqual(both.map((m: { id: number; monitorManagement: boolean }) => [m.id, m.monitorManagement]), [[m2, true], [m1, true]]);
  });

  it('DELETE of a relation that is not the last with monitorManagement keeps the device', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { r, u, d, own } = await world(app);
    const m = await addMonitors(app, r, d, { mm: true });
    assert.deepEqual(ok(await app.request('DELETE', `/v1/role/${r}/monitors/${m}`, { token: u.token })), { deletedNodeIds: [], deletedRelationIds: [m] });
    assert.deepEqual((await storedMonitors(app, d)).map((x) => x.id), [own]);
  });

  it('DELETE of the last monitorManagement relation deletes the device, its other relations and license links', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { a, u, d, own } = await world(app, { selfRights: { deviceManagement: true } });
    const reader = await addMonitors(app, await addRole(app, 'reader'), d, { reads: ['a'] });
    const { db } = app.deps;
    await db.run(sql`INSERT INTO licenses (id, key, type, duration, creation_date) VALUES ('l-1', 'K-1', 'residential', 365, 0)`);
    await db.run(sql`INSERT INTO license_datalink (license_id, device_id, created_at) VALUES ('l-1', ${d}, 0)`);
    const res = ok(await app.request('DELETE', `/v1/role/${a}/monitors/${own}`, { token: u.token }));
    assert.deepEqual(res, { deletedNodeIds: [d], deletedRelationIds: [own, reader].sort((x, y) => x - y) });
    assert.equal(await storedDevice(app, d), undefined);
    assert.equal(await count(app, 'monitors'), 0);
    assert.equal(await count(app, 'license_datalink'), 0);
    assert.equal((await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM licenses`))!.n, 1); // the license can be claimed again
  });

  it('query by id, ids or *, with filters, over roles in Reach(u) only; deprecated GET alike', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { a, r, u, d, own } = await world(app);
    const m = await addMonitors(app, r, d, {});
    const outside = await addRole(app, 'outside');
    await addMonitors(app, outside, d, { mm: true });
    const q = async (path: string, body: unknown = {}) =>
      ok(await app.request('POST', `/v1/role/${path}/monitors/query`, { token: u.token, body })).monitors.map((x: { id: number }) => x.id);
    assert.deepEqual(await q('*'), [own, m]);
    assert.deepEqual(await q(`${r}`), [m]);
    assert.deepEqual(await q(`${a},${r}`), [own, m]);
    assert.deepEqual(await q(`${outside}`), []);
    assert.deepEqual(await q('*', { filter: { roleId: [r] } }), [m]);
    assert.deepEqual(await q('*', { filter: { id: own } }), [own]);
    assert.deepEqual(await q('*', { filter: { deviceId: [d], roleId: [a] } }), [own]);
    assert.deepEqual(await q('*', { filter: { deviceId: [999] } }), []);
    assert.deepEqual(ok(await app.request('POST', `/v1/role/*/monitors/query`, { token: u.token })).monitors.length, 2);
    const full = ok(await app.request('POST', `/v1/role/${r}/monitors/query`, { token: u.token, body: {} })).monitors;
    assert.deepEqual(full, [{ id: m, roleId: r, deviceId: d, monitorManagement: false, reads: [], edits: [] }]);
    const get = await app.request('GET', `/v1/role/*/monitors?roleId=${r}`, { token: u.token });
    assert.deepEqual(ok(get).monitors, full);
    assert.equal(get.headers.get('deprecation'), 'true');
    assert.equal(get.headers.get('link'), '</v1/role/*/monitors/query>; rel="successor-version"');
    assert.deepEqual(ok(await app.request('GET', `/v1/role/${a}/monitors?id=${own},${m}`, { token: u.token })).monitors.map((x: { id: number }) => x.id), [own]);
  });
});

describe('monitors: validation and state', () => {
  it('bodies and parameters are validated (400)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { r, u, d } = await world(app);
    const bad = async (method: string, path: string, body: unknown, pattern: RegExp) =>
      assert.match(assertError(await app.request(method, path, { token: u.token, body }), 400, 'BAD_REQUEST').message, pattern);
    await bad('PUT', `/v1/role/${r}/monitors?deviceId=${d}`, { monitorManagement: true, reads: [] }, /^edits/);
    await bad('PUT', `/v1/role/${r}/monitors?deviceId=${d}`, { monitorManagement: 'yes', reads: [], edits: [] }, /^monitorManagement/);
    await bad('PUT', `/v1/role/${r}/monitors?deviceId=${d}`, { ...grant(true), reads: 'a' }, /^reads/);
    await bad('PUT', `/v1/role/${r}/monitors?deviceId=${d}`, { ...grant(true), reads: [1] }, /^reads\[0\]/);
    await bad('PUT', `/v1/role/${r}/monitors?deviceId=${d}`, { ...grant(true), extra: 1 }, /^extra: unknown field/);
    await bad('PUT', `/v1/role/${r}/monitors`, grant(true), /deviceId/);
    await bad('PUT', `/v1/role/${r}/monitors?deviceId=`, grant(true), /deviceId/);
    await bad('PUT', `/v1/role/${r}/monitors?deviceId=x`, grant(true), /deviceId/);
    await bad('PUT', `/v1/role/x/monitors?deviceId=${d}`, grant(true), /roleId/);
    await bad('PUT', `/v1/role/${r}/monitors/a,b`, grant(true), /ids/);
    await bad('DELETE', `/v1/role/${r}/monitors/-1`, undefined, /ids/);
    await bad('POST', `/v1/role/${r}/monitors/query`, { filter: { name: 'x' } }, /^filter\.name: unknown field/);
    await bad('POST', `/v1/role/${r}/monitors/query`, { filter: { id: ['1'] } }, /^filter\.id/);
    await bad('POST', `/v1/role/**/monitors/query`, {}, /roleId/);
    await bad('GET', `/v1/role/${r}/monitors?device=1`, undefined, /device: unknown field/);
    assert.equal((await storedMonitors(app, d)).length, 1);
  });

  it('409 LAST_MONITOR_MANAGEMENT when an update would leave a device without monitorManagement', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { a, u, d, own } = await world(app, { selfRights: { deviceManagement: true } });
    const res = await upsert(app, u.token, a, `deviceId=${d}`, grant(false, ['a']));
    assertError(res, 409, 'LAST_MONITOR_MANAGEMENT');
    assertError(await app.request('PUT', `/v1/role/${a}/monitors/${own}`, { token: u.token, body: grant(false) }), 409, 'LAST_MONITOR_MANAGEMENT');
    assert.deepEqual((await storedMonitors(app, d)).map((m) => [m.id, m.monitor_management]), [[own, 1]]);
    // with a second monitorManagement relation the first may drop it
    const other = await addMonitors(app, await addRole(app, 'other'), d, { mm: true });
    ok(await app.request('PUT', `/v1/role/${a}/monitors/${own}`, { token: u.token, body: grant(false, ['a']) }));
    assert.deepEqual((await storedMonitors(app, d)).map((m) => [m.id, m.monitor_management]), [[own, 0], [other, 1]]);
  });

  it('several ids: one device losing its last monitorManagement refuses the whole request', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { r, u, d } = await world(app); // d: A's relation has monitorManagement
    const lone = await addDevice(app, {});
    const m1 = await addMonitors(app, r, lone, { mm: true }); // the only monitorManagement relation of `lone`
    const m2 = await addMonitors(app, r, d, { mm: true });
    const res = await app.request('PUT', `/v1/role/${r}/monitors/${m2},${m1}`, { token: u.token, body: grant(false) });
    assert.match(assertError(res, 409, 'LAST_MONITOR_MANAGEMENT').message, new RegExp(`device ${lone}`));
    assert.deepEqual([...await storedMonitors(app, d), ...await storedMonitors(app, lone)].map((m) => m.monitor_management), [1, 1, 1]);
    ok(await app.request('PUT', `/v1/role/${r}/monitors/${m2}`, { token: u.token, body: grant(false) }));
  });
});

describe('monitors: security (one authorizing role must meet both parts)', () => {
  it('allowed: deviceManagement over R (direct through the relation) and monitorManagement on D', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { r, u, d } = await world(app);
    ok(await upsert(app, u.token, r, `deviceId=${d}`));
  });

  it('allowed: indirect roleManagement over R and monitorManagement on D through a managed role', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await addRole(app, 'A');
    const mid = await addRole(app, 'mid');
    const r = await addRole(app, 'R');
    await addManages(app, a, mid, { roleManagement: true });
    await addManages(app, mid, r);
    const u = await userIn(app, a);
    const d = await addDevice(app, {});
    await addMonitors(app, mid, d, { mm: true }); // mm through a role A reaches
    ok(await upsert(app, u.token, r, `deviceId=${d}`));
  });

  it('denied 403: only part (a), only part (b), and (a) and (b) through two different member roles', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const noMm = await world(app, { mm: false });
    assert.match(assertError(await upsert(app, noMm.u.token, noMm.r, `deviceId=${noMm.d}`), 403, 'FORBIDDEN').message, /monitorManagement on device/);
    const noRight = await world(app, { flags: { userManagement: true } });
    assertError(await upsert(app, noRight.u.token, noRight.r, `deviceId=${noRight.d}`), 403, 'FORBIDDEN');
    // split: A1 has deviceManagement over R, A2 has monitorManagement on D; u is a member of both
    const [a1, a2, r] = [await addRole(app, 'A1'), await addRole(app, 'A2'), await addRole(app, 'R')];
    await addManages(app, a1, r, { deviceManagement: true });
    const u = await userIn(app, a1, a2);
    const d = await addDevice(app, {});
    await addMonitors(app, a2, d, { mm: true });
    assertError(await upsert(app, u.token, r, `deviceId=${d}`), 403, 'FORBIDDEN');
    assert.equal((await storedMonitors(app, d)).length, 1);
  });

  it('denied 403: direct roleManagement over R alone does not count (only indirect)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await addRole(app, 'A', { roleManagement: true });
    const u = await userIn(app, a);
    const d = await addDevice(app, {});
    await addMonitors(app, a, d, { mm: true });
    assertError(await upsert(app, u.token, a, `deviceId=${d}`, grant(true)), 403, 'FORBIDDEN');
  });

  it('denied 404: role outside Reach(u), device u cannot read, relation of another role or missing', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { a, r, u, d } = await world(app);
    const outside = await addRole(app, 'outside');
    const om = await addMonitors(app, outside, d, {});
    assertError(await upsert(app, u.token, outside, `deviceId=${d}`), 404, 'NOT_FOUND');
    const hidden = await addDevice(app, {});
    await addMonitors(app, outside, hidden, { mm: true });
    assert.equal(assertError(await upsert(app, u.token, r, `deviceId=${hidden}`), 404, 'NOT_FOUND').message, `device ${hidden} not found`);
    assertError(await upsert(app, u.token, r, `deviceId=${d},${hidden}`), 404, 'NOT_FOUND');
    assertError(await app.request('PUT', `/v1/role/${outside}/monitors/${om}`, { token: u.token, body: grant(false) }), 404, 'NOT_FOUND');
    const rm = await addMonitors(app, r, d, {});
    assertError(await app.request('PUT', `/v1/role/${a}/monitors/${rm}`, { token: u.token, body: grant(false) }), 404, 'NOT_FOUND');
    assertError(await app.request('DELETE', `/v1/role/${r}/monitors/${om}`, { token: u.token }), 404, 'NOT_FOUND');
    assertError(await app.request('DELETE', `/v1/role/${r}/monitors/99999`, { token: u.token }), 404, 'NOT_FOUND');
    assertError(await app.request('DELETE', `/v1/role/${r}/monitors/${rm},99999`, { token: u.token }), 404, 'NOT_FOUND');
    assert.equal((await storedMonitors(app, d)).length, 3);
    assert.equal((await storedMonitors(app, hidden)).length, 1);
  });

  it('update and delete by id follow the same rule', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { r, u, d } = await world(app, { flags: { viewManagement: true } });
    const m = await addMonitors(app, r, d, { reads: ['a'] });
    assertError(await app.request('PUT', `/v1/role/${r}/monitors/${m}`, { token: u.token, body: grant(true) }), 403, 'FORBIDDEN');
    assertError(await app.request('DELETE', `/v1/role/${r}/monitors/${m}`, { token: u.token }), 403, 'FORBIDDEN');
    assert.equal((await storedMonitors(app, d)).length, 2);
  });
});
