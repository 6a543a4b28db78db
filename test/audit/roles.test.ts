// Audit entries of roles, manages and member relations: one per successful change (per target for several ids), with
// the actor, the target and the changes; none for a refused request; never a password.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, ADMIN_EMAIL, ROOT_ROLE_ID } from '../support/app.ts';
import { addChild, addRole, userIn, flags } from '../roles/fixtures.ts';
import { added, auditText, core, refusedWithoutEntry, FLAGS_ALL, FLAGS_NONE } from './fixtures.ts';

describe('audit: roles', () => {
  it('role.create and role.update record name, selfRights, the relation and that a password was set — never the password', async () => {
    const t = await makeTestApp();
    const admin = { userId: t.adminId, email: ADMIN_EMAIL, token: 'access' };
    const create = await added(t, () => t.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, {
      token: t.adminToken, body: { manages: FLAGS_ALL, role: { name: 'site A', selfRights: FLAGS_NONE, password: 'join-secret-123' } },
    }));
    const roleId = create.res.body.role.id;
    const managesId = create.res.body.manages.id;
    assert.deepEqual(create.entries.map(core), [{
      actor: admin, action: 'role.create', target: { kind: 'role', id: roleId },
      changes: {
        name: { after: 'site A' }, selfRights: { after: FLAGS_NONE }, isCompany: { after: false }, password: { after: 'set' },
        manages: { after: { id: managesId, parentRoleId: ROOT_ROLE_ID, childRoleId: roleId, ...FLAGS_ALL } },
      },
    }]);

    const update = await added(t, () => t.request('PUT', `/v1/role/${roleId}`, {
      token: t.adminToken, body: { name: 'site B', selfRights: { ...FLAGS_NONE, alarmManagement: true }, password: null },
    }));
    assert.deepEqual(update.entries.map(core), [{
      actor: admin, action: 'role.update', target: { kind: 'role', id: roleId },
      changes: {
        name: { before: 'site A', after: 'site B' },
        selfRights: { before: FLAGS_NONE, after: { ...FLAGS_NONE, alarmManagement: true } },
        password: { before: 'set', after: 'cleared' },
      },
    }]);
    // the same values again change nothing and record nothing
    const same = await added(t, () => t.request('PUT', `/v1/role/${roleId}`, {
      token: t.adminToken, body: { name: 'site B', selfRights: { ...FLAGS_NONE, alarmManagement: true } },
    }));
    assert.deepEqual(same.entries, []);
    assert.doesNotMatch(await auditText(t), /join-secret-123|scrypt/);
    await t.close();
  });

  it('refused role writes (403, 404, 400) record nothing', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'plain');
    const user = await userIn(t, role);
    const body = { manages: FLAGS_ALL, role: { name: 'x', selfRights: FLAGS_NONE } };
    await refusedWithoutEntry(t, 403, () => t.request('POST', `/v1/role?parentRoleId=${role}`, { token: user.token, body }));
    await refusedWithoutEntry(t, 404, () => t.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, { token: user.token, body }));
    await refusedWithoutEntry(t, 403, () => t.request('PUT', `/v1/role/${role}`, { token: user.token, body: { name: 'y', selfRights: FLAGS_NONE } }));
    await refusedWithoutEntry(t, 400, () => t.request('PUT', `/v1/role/${role}`, { token: t.adminToken, body: { name: '', selfRights: FLAGS_NONE } }));
    await t.close();
  });
});

describe('audit: manages', () => {
  it('manages.put records new relations in full and updates as before/after; a cycle (409) records nothing', async () => {
    const t = await makeTestApp();
    const [a] = await addChild(t, ROOT_ROLE_ID, flags('roleManagement'));
    const [b] = await addChild(t, ROOT_ROLE_ID, flags('roleManagement'));
    const put = await added(t, () => t.request('PUT', `/v1/role/${a}/manages?childRoleId=${b}`, { token: t.adminToken, body: FLAGS_NONE }));
    const id = put.res.body.manages.id;
    assert.deepEqual(put.entries.map(core), [{
      actor: { userId: t.adminId, email: ADMIN_EMAIL, token: 'access' }, action: 'manages.put', target: { kind: 'manages', id },
      changes: { parentRoleId: { after: a }, childRoleId: { after: b }, ...Object.fromEntries(Object.keys(FLAGS_NONE).map((k) => [k, { after: false }])) },
    }]);
    const again = await added(t, () => t.request('PUT', `/v1/role/${a}/manages?childRoleId=${b}`, { token: t.adminToken, body: { ...FLAGS_NONE, userManagement: true } }));
    assert.deepEqual(again.entries.map((e) => e.changes), [{ userManagement: { before: false, after: true } }]);
    await refusedWithoutEntry(t, 409, () => t.request('PUT', `/v1/role/${b}/manages?childRoleId=${a}`, { token: t.adminToken, body: FLAGS_NONE }));
    await refusedWithoutEntry(t, 409, () => t.request('PUT', `/v1/role/${a}/manages?childRoleId=${a}`, { token: t.adminToken, body: FLAGS_NONE }));
    await t.close();
  });

  it('PUT on several relation ids records one entry per relation; a 404 among them records none', async () => {
    const t = await makeTestApp();
    const [, m1] = await addChild(t, ROOT_ROLE_ID);
    const [, m2] = await addChild(t, ROOT_ROLE_ID);
    const res = await added(t, () => t.request('PUT', `/v1/role/${ROOT_ROLE_ID}/manages/${m1},${m2}`, { token: t.adminToken, body: flags('viewManagement') }));
    assert.deepEqual(res.entries.map((e) => [e.action, e.target, e.changes]), [
      ['manages.put', { kind: 'manages', id: m1 }, { viewManagement: { before: false, after: true } }],
      ['manages.put', { kind: 'manages', id: m2 }, { viewManagement: { before: false, after: true } }],
    ]);
    await refusedWithoutEntry(t, 404, () => t.request('PUT', `/v1/role/${ROOT_ROLE_ID}/manages/${m1},987654`, { token: t.adminToken, body: FLAGS_NONE }));
    await t.close();
  });

  it('manages.delete records the relation and what its cascade removed', async () => {
    const t = await makeTestApp();
    const [child, m] = await addChild(t, ROOT_ROLE_ID, flags('roleManagement'));
    const [grandchild, m2] = await addChild(t, child);
    const user = await userIn(t, grandchild);
    const res = await added(t, () => t.request('DELETE', `/v1/role/${ROOT_ROLE_ID}/manages/${m}`, { token: t.adminToken }));
    assert.deepEqual(res.entries.map(core), [{
      actor: { userId: t.adminId, email: ADMIN_EMAIL, token: 'access' }, action: 'manages.delete', target: { kind: 'manages', id: m },
      changes: {
        parentRoleId: { before: ROOT_ROLE_ID }, childRoleId: { before: child },
        roleManagement: { before: true }, userManagement: { before: false }, viewManagement: { before: false },
        deviceManagement: { before: false }, reportManagement: { before: false }, alarmManagement: { before: false },
        cascade: { roles: [child, grandchild], devices: [], manages: [m, m2], members: user.memberIds, monitors: [] },
      },
    }]);
    await t.close();
  });
});

describe('audit: members', () => {
  it('member.put records the e-mail and a created user; an existing relation records nothing; member.delete records the removal', async () => {
    const t = await makeTestApp();
    const [role] = await addChild(t, ROOT_ROLE_ID, flags('userManagement'));
    const put = await added(t, () => t.request('PUT', `/v1/role/${role}/member?userEmail=new.person@example.test&password=first-password-1`, { token: t.adminToken, body: {} }));
    const memberId = put.res.body.member.id;
    assert.deepEqual(put.entries.map(core), [{
      actor: { userId: t.adminId, email: ADMIN_EMAIL, token: 'access' }, action: 'member.put', target: { kind: 'member', id: memberId },
      changes: { roleId: { after: role }, userEmail: { after: 'new.person@example.test' }, userCreated: true },
    }]);
    assert.doesNotMatch(await auditText(t), /first-password-1/);
    assert.deepEqual((await added(t, () => t.request('PUT', `/v1/role/${role}/member?userEmail=new.person@example.test`, { token: t.adminToken, body: {} }))).entries, []);
    const del = await added(t, () => t.request('DELETE', `/v1/role/${role}/member/${memberId}`, { token: t.adminToken }));
    assert.deepEqual(del.entries.map(core), [{
      actor: { userId: t.adminId, email: ADMIN_EMAIL, token: 'access' }, action: 'member.delete', target: { kind: 'member', id: memberId },
      changes: { roleId: { before: role }, userEmail: { before: 'new.person@example.test' } },
    }]);
    await t.close();
  });

  it('refused member writes (403, 409 LAST_ROOT_MEMBER) record nothing', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'no rights');
    const other = await userIn(t, role);
    const rootMember = (await t.deps.db.get(sql<{ id: number }>`SELECT id FROM members WHERE role_id = 1`))!.id;
    await refusedWithoutEntry(t, 403, () => t.request('PUT', `/v1/role/${role}/member?userEmail=x@example.test`, { token: other.token, body: {} }));
    await refusedWithoutEntry(t, 409, () => t.request('DELETE', `/v1/role/${ROOT_ROLE_ID}/member/${rootMember}`, { token: t.adminToken }));
    await t.close();
  });
});
