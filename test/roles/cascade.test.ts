// DELETE /v1/role/{parentRoleId}/manages/{managesId}: the recursive cascade of docs/api.md#cascade, checked row by row.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { NONE, flags, addRole, addChild, addManages, addMember, addDevice, addMonitors, userIn, count, rows } from './fixtures.ts';

const del = (t: TestApp, token: string, parent: number, ids: string | number) => t.request('DELETE', `/v1/role/${parent}/manages/${ids}`, { token });
const ids = async (t: TestApp, table: string) => (await rows(t, `SELECT id FROM ${table} ORDER BY id`)).map((r) => r.id as number);

async function addLicense(t: TestApp, deviceId: number, key: string): Promise<void> {
  await t.deps.db.run(sql`INSERT INTO licenses (id, key, type, duration, creation_date) VALUES (${`lic-${key}`}, ${key}, 'residential', 365, 0)`);
  await t.deps.db.run(sql`INSERT INTO license_datalink (license_id, device_id, created_at) VALUES (${`lic-${key}`}, ${deviceId}, 0)`);
}

/**
 *   root -> A -> B -> F          B and F hang on A -> B alone
 *           A -> C -> D -> E     D has two parents (B and C)
 *                B -> D
 *   devices: d1 (F, mm)            -> goes with F
 *            d2 (F, mm; A, mm)     -> stays (A still manages it)
 *            d3 (F, no mm; A, mm)  -> stays (it lost no monitorManagement)
 *            d4 (F, mm; Z, no mm)  -> goes, with Z's relation
 */
async function world() {
  const t = await makeTestApp();
  const [A, rA] = await addChild(t, ROOT_ROLE_ID, flags('roleManagement'));
  const [B, AB] = await addChild(t, A);
  const [C, AC] = await addChild(t, A);
  const [D, BD] = await addChild(t, B);
  const CD = await addManages(t, C, D);
  const [E, DE] = await addChild(t, D);
  const [F, BF] = await addChild(t, B);
  const Z = await addRole(t, 'z');
  const fUser = await userIn(t, F);
  const dUser = await userIn(t, D);
  const bMember = await addMember(t, B, dUser.id);
  const [d1, d2, d3, d4] = [await addDevice(t), await addDevice(t), await addDevice(t), await addDevice(t)];
  const mon = {
    f1: await addMonitors(t, F, d1, { mm: true }),
    f2: await addMonitors(t, F, d2, { mm: true }), a2: await addMonitors(t, A, d2, { mm: true }),
    f3: await addMonitors(t, F, d3, { reads: ['x'] }), a3: await addMonitors(t, A, d3, { mm: true }),
    f4: await addMonitors(t, F, d4, { mm: true }), z4: await addMonitors(t, Z, d4, { edits: ['y'] }),
  };
  await addLicense(t, d1, 'KEY-1');
  await addLicense(t, d2, 'KEY-2');
  return { t, A, B, C, D, E, F, Z, rA, AB, AC, BD, CD, DE, BF, fUser, dUser, bMember, d1, d2, d3, d4, mon };
}

describe('DELETE manages: the cascade', () => {
  test('a child losing its last incoming relation goes with its members, monitors and outgoing relations, recursively', async (t) => {
    const w = await world();
    const { t: app } = w;
    t.after(() => app.close());
    const usersBefore = await count(app, 'users');
    const res = await del(app, app.adminToken, w.A, w.AB);
    assert.equal(res.status, 200, res.text);
    const deleted = {
      roles: [w.B, w.F],
      devices: [w.d1, w.d4],
      manages: [w.AB, w.BD, w.BF].sort((a, b) => a - b),
      members: [w.fUser.memberIds[0], w.bMember].sort((a, b) => a - b),
      monitors: [w.mon.f1, w.mon.f2, w.mon.f3, w.mon.f4, w.mon.z4],
    };
    assert.deepEqual(res.body, {
      deletedNodeIds: [...deleted.roles, ...deleted.devices],
      deletedRelationIds: [...deleted.manages, ...deleted.members, ...deleted.monitors],
      deleted,
    });
    // the database agrees
    assert.deepEqual(await ids(app, 'roles'), [ROOT_ROLE_ID, w.A, w.C, w.D, w.E, w.Z], 'D survives through C; E through D');
    assert.deepEqual(await ids(app, 'manages'), [w.rA, w.AC, w.DE, w.CD].sort((a, b) => a - b));
    assert.deepEqual(await ids(app, 'devices'), [w.d2, w.d3]);
    assert.deepEqual(await ids(app, 'monitors'), [w.mon.a2, w.mon.a3]);
    assert.deepEqual(await rows(app, 'SELECT license_id FROM license_datalink'), [{ license_id: 'lic-KEY-2' }], 'd1\'s license can be claimed again');
    assert.equal(await count(app, 'licenses'), 2, 'licenses themselves stay');
    assert.equal(await count(app, 'users'), usersBefore, 'users are never deleted, only their member relations');
    assert.equal(await count(app, 'members', 'user_id = ?', w.dUser.id), 1, 'dUser keeps its membership of D');
  });

  test('deleting the second path deletes the shared descendant and everything below it', async (t) => {
    const w = await world();
    const { t: app } = w;
    t.after(() => app.close());
    await del(app, app.adminToken, w.A, w.AB);
    const res = await del(app, app.adminToken, w.A, w.AC);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.deleted, {
      roles: [w.C, w.D, w.E], devices: [], manages: [w.AC, w.CD, w.DE].sort((a, b) => a - b), members: [w.dUser.memberIds[0]], monitors: [],
    });
    assert.deepEqual(await ids(app, 'roles'), [ROOT_ROLE_ID, w.A, w.Z]);
    assert.equal(await count(app, 'members', 'user_id = ?', w.dUser.id), 0);
  });

  test('a child with another parent stays; only the relation goes', async (t) => {
    const w = await world();
    const { t: app } = w;
    t.after(() => app.close());
    const res = await del(app, app.adminToken, w.C, w.CD);
    assert.deepEqual(res.body, {
      deletedNodeIds: [], deletedRelationIds: [w.CD],
      deleted: { roles: [], devices: [], manages: [w.CD], members: [], monitors: [] },
    });
    assert.equal(await count(app, 'roles', 'id = ?', w.D), 1);
  });

  test('the root role is never deleted, even when it loses its only incoming relation', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const x = await addRole(app, 'x', flags('roleManagement'));
    const xr = await addManages(app, x, ROOT_ROLE_ID);
    const u = await userIn(app, x);
    const res = await del(app, u.token, x, xr);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.deleted, { roles: [], devices: [], manages: [xr], members: [], monitors: [] });
    assert.equal(await count(app, 'roles', 'id = ?', ROOT_ROLE_ID), 1);
    assert.equal(await count(app, 'members', 'role_id = ?', ROOT_ROLE_ID), 1);
  });

  test('several ids: an array in request order, each with its own deletions, in one transaction', async (t) => {
    const w = await world();
    const { t: app } = w;
    t.after(() => app.close());
    const res = await del(app, app.adminToken, w.A, `${w.AC},${w.AB}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.length, 2);
    assert.deepEqual(res.body[0].deleted.roles, [w.C], 'D still had B when C went');
    assert.deepEqual(res.body[1].deleted.roles, [w.B, w.D, w.E, w.F]);
    assert.deepEqual(await ids(app, 'roles'), [ROOT_ROLE_ID, w.A, w.Z]);
  });
});

describe('DELETE manages: rights and failures write nothing', () => {
  test('roleManagement over P is needed (403); invisible P 404; a relation of another parent 404; all or nothing', async (t) => {
    const w = await world();
    const { t: app } = w;
    t.after(() => app.close());
    const snapshot = async () => [await ids(app, 'roles'), await ids(app, 'manages'), await ids(app, 'members'), await ids(app, 'monitors'), await ids(app, 'devices')];
    const before = await snapshot();
    // fUser is a member of F: F is visible but has no roleManagement over A, and A is not in its reach
    assertError(await del(app, w.fUser.token, w.A, w.AB), 404, 'NOT_FOUND');
    // B is visible to dUser (member of B) but dUser has no roleManagement over B
    assert.equal(assertError(await del(app, w.dUser.token, w.B, w.BF), 403, 'FORBIDDEN').message, `missing right: direct or indirect roleManagement over role ${w.B}`);
    assert.equal(assertError(await del(app, app.adminToken, w.A, `${w.AB},${w.BD}`), 404, 'NOT_FOUND').message, `manages relation ${w.BD} of role ${w.A} not found`);
    assertError(await del(app, app.adminToken, w.A, 9999), 404, 'NOT_FOUND');
    assert.deepEqual(await snapshot(), before);
    // exactly the right: a member of A's parent through a roleManagement relation (here: root's admin) — and a member of A
    // with the roleManagement selfRight
    const selfA = await addRole(app, 'selfA', flags('roleManagement'));
    const [child, rel] = await addChild(app, selfA);
    const u = await userIn(app, selfA);
    const ok = await del(app, u.token, selfA, rel);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.deleted.roles, [child]);
  });

  test('a failing cascade rolls everything back', async (t) => {
    const w = await world();
    const { t: app } = w;
    t.after(() => app.close());
    // make the device delete fail inside the transaction: a trigger that aborts (each backend has its own trigger syntax)
    await app.deps.db.script(app.deps.db.backend === 'sqlite'
      ? `CREATE TRIGGER no_device_delete BEFORE DELETE ON devices BEGIN SELECT RAISE(ABORT, 'boom'); END`
      : `CREATE FUNCTION no_device_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$;
         CREATE TRIGGER no_device_delete BEFORE DELETE ON devices FOR EACH ROW EXECUTE FUNCTION no_device_delete();`);
    const logged: string[] = [];
    app.deps.log = { ...app.deps.log, error: (msg) => { logged.push(msg); } };
    const before = [await ids(app, 'roles'), await ids(app, 'manages'), await ids(app, 'members'), await ids(app, 'monitors')];
    const res = await del(app, app.adminToken, w.A, w.AB);
    assert.equal(res.status, 500);
    assert.deepEqual(logged, ['unhandled error']);
    assert.deepEqual(res.body.code, 'INTERNAL');
    assert.doesNotMatch(res.text, /boom/);
    assert.deepEqual([await ids(app, 'roles'), await ids(app, 'manages'), await ids(app, 'members'), await ids(app, 'monitors')], before);
  });
});

describe('DELETE manages: NONE flags still reach', () => {
  test('relations without flags are deleted like any other', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [p] = await addChild(app, ROOT_ROLE_ID, flags('roleManagement'));
    const [c, pc] = await addChild(app, p, NONE);
    const res = await del(app, app.adminToken, p, pc);
    assert.deepEqual(res.body.deletedNodeIds, [c]);
  });
});
