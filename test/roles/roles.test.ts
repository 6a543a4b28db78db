// Roles: create under a parent, update, query with userRights, the deprecated GET. Each rule is shown with a user who
// holds exactly the right (allowed) and one who lacks it (403, or 404 when the role is invisible).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { verifySecret } from '../../src/auth/passwords.ts';
import { ALL, NONE, flags, addRole, addChild, addManages, userIn, count, row, role, manages } from './fixtures.ts';

const ROOT = role(ROOT_ROLE_ID, 'root', ALL);
const input = (name: string, extra: Record<string, unknown> = {}) => ({ name, selfRights: flags('alarmManagement'), ...extra });
const create = (t: TestApp, token: string, parent: number, body: unknown) => t.request('POST', `/v1/role?parentRoleId=${parent}`, { token, body });
const allBut = (...off: (keyof typeof ALL)[]) => ({ ...ALL, ...Object.fromEntries(off.map((r) => [r, false])) });

describe('POST /v1/role', () => {
  test('happy: creates the role and the relation; answers both; the password is stored hashed and never returned', async () => {
    const t = await makeTestApp();
    const before = count(t, 'roles');
    const res = await create(t, t.adminToken, ROOT_ROLE_ID, { manages: flags('roleManagement', 'deviceManagement'), role: input('installer', { password: 'join-secret-123' }) });
    assert.equal(res.status, 200, res.text);
    const id = res.body.role.id;
    assert.deepEqual(res.body, {
      manages: manages(res.body.manages.id, ROOT_ROLE_ID, id, flags('roleManagement', 'deviceManagement')),
      role: role(id, 'installer', flags('alarmManagement')),
    });
    assert.doesNotMatch(res.text, /join-secret|scrypt|password/i);
    assert.equal(count(t, 'roles'), before + 1);
    const stored = row(t, 'SELECT * FROM roles WHERE id = ?', id);
    assert.equal(stored.name, 'installer');
    assert.equal(stored.self_alarm_management, 1);
    assert.equal(stored.self_role_management, 0);
    assert.match(stored.password_hash, /^scrypt\$/);
    assert.ok(await verifySecret('join-secret-123', stored.password_hash));
    const rel = row(t, 'SELECT * FROM manages WHERE child_role_id = ?', id);
    assert.equal(rel.parent_role_id, ROOT_ROLE_ID);
    assert.equal(rel.role_management, 1);
    assert.equal(rel.device_management, 1);
    assert.equal(rel.user_management, 0);
    t.close();
  });

  test('rights: direct (self flag, or flag on the relation into P) and indirect roleManagement over P are each enough', async () => {
    const t = await makeTestApp();
    const self = addRole(t, 'self', flags('roleManagement'));
    const [viaRelParent] = addChild(t, ROOT_ROLE_ID);
    const [viaRel] = addChild(t, viaRelParent, flags('roleManagement'));
    const [top] = addChild(t, ROOT_ROLE_ID);
    const [mid] = addChild(t, top, flags('roleManagement'));
    const [deep] = addChild(t, mid);
    for (const [member, target] of [[self, self], [viaRelParent, viaRel], [top, deep]]) {
      const u = await userIn(t, member);
      const res = await create(t, u.token, target, { manages: NONE, role: input(`under-${target}`) });
      assert.equal(res.status, 200, `member of ${member} creating under ${target}: ${res.text}`);
      assert.equal(row(t, 'SELECT parent_role_id FROM manages WHERE child_role_id = ?', res.body.role.id).parent_role_id, target);
    }
    t.close();
  });

  test('security: every other right is not enough (403); an invisible parent is 404; nothing is written', async () => {
    const t = await makeTestApp();
    const [g] = addChild(t, ROOT_ROLE_ID);
    const [p] = addChild(t, g, allBut('roleManagement'), allBut('roleManagement'));
    const u = await userIn(t, g);
    const before = count(t, 'roles');
    const body = assertError(await create(t, u.token, p, { manages: ALL, role: input('x') }), 403, 'FORBIDDEN');
    assert.equal(body.message, `missing right: direct or indirect roleManagement over role ${p}`);
    const stranger = await userIn(t, addRole(t));
    const nf = assertError(await create(t, stranger.token, p, { manages: ALL, role: input('x') }), 404, 'NOT_FOUND');
    assert.equal(nf.message, `role ${p} not found`);
    assertError(await create(t, t.adminToken, 999, { manages: ALL, role: input('x') }), 404, 'NOT_FOUND');
    assert.equal(count(t, 'roles'), before + 1, 'only the stranger\'s own role was added');
    t.close();
  });

  test('validation: 400 names the field; god is reserved; unknown fields and parameters are refused', async () => {
    const t = await makeTestApp();
    const cases: [string, unknown, string][] = [
      [`parentRoleId=${ROOT_ROLE_ID}`, { manages: NONE, role: input('god') }, 'role.name: the name "god" is reserved'],
      [`parentRoleId=${ROOT_ROLE_ID}`, { manages: NONE, role: input('GOD') }, 'role.name: the name "god" is reserved'],
      [`parentRoleId=${ROOT_ROLE_ID}`, { manages: NONE, role: input('') }, 'role.name: expected 1 to 100 characters'],
      [`parentRoleId=${ROOT_ROLE_ID}`, { manages: NONE, role: input('x'.repeat(101)) }, 'role.name: expected 1 to 100 characters'],
      [`parentRoleId=${ROOT_ROLE_ID}`, { manages: { ...NONE, roleManagement: 'yes' }, role: input('a') }, 'manages.roleManagement: expected true or false'],
      [`parentRoleId=${ROOT_ROLE_ID}`, { manages: NONE, role: input('a', { extra: 1 }) }, 'role.extra: unknown field'],
      [`parentRoleId=${ROOT_ROLE_ID}`, { manages: NONE, role: input('a', { password: 'short' }) }, 'role.password: expected at least 10 characters'],
      ['parentRoleId=x', { manages: NONE, role: input('a') }, 'query.parentRoleId: expected an integer >= 0'],
      [`parentRoleId=1&verbose=1`, { manages: NONE, role: input('a') }, 'query.verbose: unknown field'],
    ];
    for (const [q, body, message] of cases) {
      const res = await t.request('POST', `/v1/role?${q}`, { token: t.adminToken, body });
      assert.equal(assertError(res, 400, 'BAD_REQUEST').message, message);
    }
    const missing = assertError(await t.request('POST', '/v1/role', { token: t.adminToken, body: { manages: NONE, role: input('a') } }), 400, 'BAD_REQUEST');
    assert.match(missing.message, /^query\.parentRoleId: /);
    const partial = assertError(await create(t, t.adminToken, 1, { manages: { roleManagement: true }, role: input('a') }), 400, 'BAD_REQUEST');
    assert.match(partial.message, /^manages\.userManagement: /);
    assert.equal(count(t, 'roles'), 1);
    t.close();
  });
});

describe('PUT /v1/role/{roleId}', () => {
  test('happy: updates name and selfRights; password absent keeps it, a string replaces it, null clears it', async () => {
    const t = await makeTestApp();
    const created = await create(t, t.adminToken, ROOT_ROLE_ID, { manages: flags('roleManagement'), role: input('site', { password: 'first-secret-1' }) });
    const id = created.body.role.id;
    const put = (body: unknown) => t.request('PUT', `/v1/role/${id}`, { token: t.adminToken, body });
    const hash = () => row(t, 'SELECT password_hash FROM roles WHERE id = ?', id).password_hash;
    const first = hash();

    let res = await put({ name: 'site 2', selfRights: flags('userManagement') });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { role: role(id, 'site 2', flags('userManagement')) });
    assert.equal(hash(), first, 'absent password: unchanged');

    res = await put({ name: 'site 2', selfRights: NONE, password: 'second-secret-2' });
    assert.deepEqual(res.body, { role: role(id, 'site 2', NONE) });
    assert.doesNotMatch(res.text, /secret|scrypt/);
    assert.ok(await verifySecret('second-secret-2', hash()));
    assert.notEqual(hash(), first);

    res = await put({ name: 'site 2', selfRights: NONE, password: null });
    assert.equal(res.status, 200);
    assert.equal(hash(), null);
    const stored = row(t, 'SELECT * FROM roles WHERE id = ?', id);
    assert.equal(stored.name, 'site 2');
    assert.equal(stored.self_user_management, 0);
    t.close();
  });

  test('rights: indirect roleManagement is needed — the role\'s own selfRights (direct) are not enough', async () => {
    const t = await makeTestApp();
    const [g] = addChild(t, ROOT_ROLE_ID);
    const [target] = addChild(t, g, flags('roleManagement'), ALL, 'target');
    const manager = await userIn(t, g);
    const res = await t.request('PUT', `/v1/role/${target}`, { token: manager.token, body: input('renamed') });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { role: role(target, 'renamed', flags('alarmManagement')) });

    const insider = await userIn(t, target); // member of target, which has every selfRight: direct only
    const body = assertError(await t.request('PUT', `/v1/role/${target}`, { token: insider.token, body: input('mine') }), 403, 'FORBIDDEN');
    assert.equal(body.message, `missing right: indirect roleManagement over role ${target}`);
    const [other] = addChild(t, g, allBut('roleManagement'));
    assertError(await t.request('PUT', `/v1/role/${other}`, { token: manager.token, body: input('mine') }), 403, 'FORBIDDEN');
    const stranger = await userIn(t, addRole(t));
    assertError(await t.request('PUT', `/v1/role/${target}`, { token: stranger.token, body: input('mine') }), 404, 'NOT_FOUND');
    assert.equal(row(t, 'SELECT name FROM roles WHERE id = ?', target).name, 'renamed');
    assert.equal(row(t, 'SELECT name FROM roles WHERE id = ?', other).name.startsWith('role-'), true);
    t.close();
  });

  test('validation: the body is a RoleInput', async () => {
    const t = await makeTestApp();
    const put = (body: unknown) => t.request('PUT', `/v1/role/${ROOT_ROLE_ID}`, { token: t.adminToken, body });
    assert.equal(assertError(await put({ name: 'x' }), 400, 'BAD_REQUEST').message.split(':')[0], 'selfRights');
    assert.equal(assertError(await put({ ...input('x'), password: 5 }), 400, 'BAD_REQUEST').message.split(':')[0], 'password');
    assert.equal(assertError(await t.request('PUT', '/v1/role/abc', { token: t.adminToken, body: input('x') }), 400, 'BAD_REQUEST').message,
      'path.roleId: expected an integer >= 0');
    t.close();
  });
});

/** root -> a (userManagement) -> b (selfRights: alarmManagement) ; root -> c ; an unreachable role z */
async function queryWorld() {
  const t = await makeTestApp();
  const [a] = addChild(t, ROOT_ROLE_ID, NONE, NONE, 'alpha');
  const [b] = addChild(t, a, flags('userManagement'), flags('alarmManagement'), 'beta');
  const [c] = addChild(t, ROOT_ROLE_ID, NONE, NONE, 'gamma');
  const z = addRole(t, 'zeta');
  const u = await userIn(t, a);
  return { t, a, b, c, z, u };
}

describe('POST /v1/role/query', () => {
  test('happy: Reach(u) ascending; userRights holds exactly the requested flags', async () => {
    const { t, a, b, u } = await queryWorld();
    let res = await t.request('POST', '/v1/role/query', { token: u.token, body: {} });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { role: [role(a, 'alpha'), role(b, 'beta', flags('alarmManagement'))] });
    res = await t.request('POST', '/v1/role/query', { token: u.token });
    assert.deepEqual(res.body.role.map((r: { id: number }) => r.id), [a, b], 'no body = {}');

    res = await t.request('POST', '/v1/role/query', {
      token: u.token, body: { userRights: { userManagement: true, alarmManagement: true, roleManagement: false } },
    });
    assert.deepEqual(res.body, {
      role: [
        role(a, 'alpha', NONE, { userManagement: false, alarmManagement: false }),
        // userManagement through the relation a -> b; alarmManagement from b's own selfRights (direct)
        role(b, 'beta', flags('alarmManagement'), { userManagement: true, alarmManagement: true }),
      ],
    });
    t.close();
  });

  test('filters: id, name, ancestorRoleId (strict descendants) combine with and; empty lists match nothing', async () => {
    const { t, a, b, c, z } = await queryWorld();
    const q = async (filter: unknown) => (await t.request('POST', '/v1/role/query', { token: t.adminToken, body: { filter } })).body.role.map((r: { id: number }) => r.id);
    assert.deepEqual(await q({ id: [b, a, 999, z] }), [a, b], 'invisible and unknown ids are simply not listed');
    assert.deepEqual(await q({ name: ['gamma', 'alpha', 'zeta'] }), [a, c]);
    assert.deepEqual(await q({ ancestorRoleId: [ROOT_ROLE_ID] }), [a, b, c]);
    assert.deepEqual(await q({ ancestorRoleId: [a] }), [b]);
    assert.deepEqual(await q({ ancestorRoleId: [a], name: ['alpha'] }), []);
    assert.deepEqual(await q({ id: [] }), []);
    t.close();
  });

  test('security: an ancestor the caller cannot see filters everything out (it must not reveal the hierarchy)', async () => {
    const { t, a, u } = await queryWorld();
    const res = await t.request('POST', '/v1/role/query', { token: u.token, body: { filter: { ancestorRoleId: [ROOT_ROLE_ID] } } });
    assert.deepEqual(res.body, { role: [] });
    const own = await t.request('POST', '/v1/role/query', { token: u.token, body: { filter: { id: [ROOT_ROLE_ID, a] } } });
    assert.deepEqual(own.body.role.map((r: { id: number }) => r.id), [a]);
    t.close();
  });

  test('validation: viewId is 400 NOT_SUPPORTED; other mistakes (a malformed companyId too) 400 naming the field', async () => {
    const t = await makeTestApp();
    const post = (body: unknown) => t.request('POST', '/v1/role/query', { token: t.adminToken, body });
    assert.equal(assertError(await post({ filter: { viewId: [1] } }), 400, 'NOT_SUPPORTED').message,
      'filter.viewId: not supported (a gridkeeper appliance has no views)');
    assert.equal(assertError(await post({ filter: { companyId: 'x' } }), 400, 'BAD_REQUEST').message, 'filter.companyId: expected an integer >= 0 or an array of them');
    assert.equal(assertError(await post({ filter: { id: [1, 'x'] } }), 400, 'BAD_REQUEST').message, 'filter.id[1]: expected an integer >= 0');
    assert.equal(assertError(await post({ filter: { id: [-1] } }), 400, 'BAD_REQUEST').message, 'filter.id[0]: expected an integer >= 0');
    assert.equal(assertError(await post({ userRights: { roleManagement: 1 } }), 400, 'BAD_REQUEST').message, 'userRights.roleManagement: expected true or false');
    assert.equal(assertError(await post({ filter: { parentId: [] } }), 400, 'BAD_REQUEST').message, 'filter.parentId: unknown field');
    assert.equal(assertError(await post({ userRights: { godMode: true } }), 400, 'BAD_REQUEST').message, 'userRights.godMode: unknown field');
    t.close();
  });
});

describe('GET /v1/role (deprecated)', () => {
  test('answers like the query, with Deprecation and Link headers; filters as query parameters', async () => {
    const { t, a, b, c } = await queryWorld();
    const res = await t.request('GET', `/v1/role?id=${a},${c}&id=${b}&userRights.userManagement=true`, { token: t.adminToken });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('deprecation'), 'true');
    assert.equal(res.headers.get('link'), '</v1/role/query>; rel="successor-version"');
    // root's selfRights are root's alone; only the relation a -> b carries userManagement
    assert.deepEqual(res.body, {
      role: [
        role(a, 'alpha', NONE, { userManagement: false }),
        role(b, 'beta', flags('alarmManagement'), { userManagement: true }),
        role(c, 'gamma', NONE, { userManagement: false }),
      ],
    });
    const named = await t.request('GET', `/v1/role?name=beta&ancestorRoleId=${a}`, { token: t.adminToken });
    assert.deepEqual(named.body, { role: [role(b, 'beta', flags('alarmManagement'))] });
    const all = await t.request('GET', '/v1/role', { token: t.adminToken });
    assert.deepEqual(all.body.role.map((r: { id: number }) => r.id), [ROOT_ROLE_ID, a, b, c]);
    assert.deepEqual(all.body.role[0], ROOT);
    t.close();
  });

  test('validation: NOT_SUPPORTED filters, unknown parameters, bad flag values', async () => {
    const t = await makeTestApp();
    const get = (q: string) => t.request('GET', `/v1/role?${q}`, { token: t.adminToken });
    assert.equal(assertError(await get('viewId=4'), 400, 'NOT_SUPPORTED').message, 'query.viewId: not supported (a gridkeeper appliance has no views)');
    assert.equal(assertError(await get('companyId=x'), 400, 'BAD_REQUEST').message, 'query.companyId: expected integers >= 0');
    assert.equal(assertError(await get('userRights.roleManagement=yes'), 400, 'BAD_REQUEST').message, 'query.userRights.roleManagement: expected true or false');
    assert.equal(assertError(await get('id=1,x'), 400, 'BAD_REQUEST').message, 'query.id: expected integers >= 0');
    assert.equal(assertError(await get('parent=1'), 400, 'BAD_REQUEST').message, 'query.parent: unknown field');
    t.close();
  });
});

describe('roles: selfRights never reach descendants', () => {
  test('a member of a role with every selfRight has no right over its children unless a relation carries it', async () => {
    const t = await makeTestApp();
    const [p] = addChild(t, ROOT_ROLE_ID, NONE, ALL, 'parent');
    const child = addRole(t, 'child');
    addManages(t, p, child, flags('deviceManagement'));
    const u = await userIn(t, p);
    const res = await t.request('POST', '/v1/role/query', { token: u.token, body: { userRights: ALL } });
    assert.deepEqual(res.body, {
      role: [role(p, 'parent', ALL, ALL), role(child, 'child', NONE, flags('deviceManagement'))],
    });
    t.close();
  });
});
