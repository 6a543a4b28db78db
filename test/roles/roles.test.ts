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
  test('happy: creates the role and the relation; answers both; the password is stored hashed and never returned', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const before = await count(app, 'roles');
    const res = await create(app, app.adminToken, ROOT_ROLE_ID, { manages: flags('roleManagement', 'deviceManagement'), role: input('installer', { password: 'join-secret-123' }) });
    assert.equal(res.status, 200, res.text);
    const id = res.body.role.id;
    assert.deepEqual(res.body, {
      manages: manages(res.body.manages.id, ROOT_ROLE_ID, id, flags('roleManagement', 'deviceManagement')),
      role: role(id, 'installer', flags('alarmManagement')),
    });
    assert.doesNotMatch(res.text, /join-secret|scrypt|password/i);
    assert.equal(await count(app, 'roles'), before + 1);
    const stored = await row(app, 'SELECT * FROM roles WHERE id = ?', id);
    assert.equal(stored.name, 'installer');
    assert.equal(stored.self_alarm_management, 1);
    assert.equal(stored.self_role_management, 0);
    assert.match(stored.password_hash, /^scrypt\$/);
    assert.ok(await verifySecret('join-secret-123', stored.password_hash));
    const rel = await row(app, 'SELECT * FROM manages WHERE child_role_id = ?', id);
    assert.equal(rel.parent_role_id, ROOT_ROLE_ID);
    assert.equal(rel.role_management, 1);
    assert.equal(rel.device_management, 1);
    assert.equal(rel.user_management, 0);
  });

  test('rights: direct (self flag, or flag on the relation into P) and indirect roleManagement over P are each enough', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const self = await addRole(app, 'self', flags('roleManagement'));
    const [viaRelParent] = await addChild(app, ROOT_ROLE_ID);
    const [viaRel] = await addChild(app, viaRelParent, flags('roleManagement'));
    const [top] = await addChild(app, ROOT_ROLE_ID);
    const [mid] = await addChild(app, top, flags('roleManagement'));
    const [deep] = await addChild(app, mid);
    for (const [member, target] of [[self, self], [viaRelParent, viaRel], [top, deep]]) {
      const u = await userIn(app, member);
      const res = await create(app, u.token, target, { manages: NONE, role: input(`under-${target}`) });
      assert.equal(res.status, 200, `member of ${member} creating under ${target}: ${res.text}`);
      assert.equal((await row(app, 'SELECT parent_role_id FROM manages WHERE child_role_id = ?', res.body.role.id)).parent_role_id, target);
    }
  });

  test('security: every other right is not enough (403); an invisible parent is 404; nothing is written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [g] = await addChild(app, ROOT_ROLE_ID);
    const [p] = await addChild(app, g, allBut('roleManagement'), allBut('roleManagement'));
    const u = await userIn(app, g);
    const before = await count(app, 'roles');
    const body = assertError(await create(app, u.token, p, { manages: ALL, role: input('x') }), 403, 'FORBIDDEN');
    assert.equal(body.message, `missing right: direct or indirect roleManagement over role ${p}`);
    const stranger = await userIn(app, await addRole(app));
    const nf = assertError(await create(app, stranger.token, p, { manages: ALL, role: input('x') }), 404, 'NOT_FOUND');
    assert.equal(nf.message, `role ${p} not found`);
    assertError(await create(app, app.adminToken, 999, { manages: ALL, role: input('x') }), 404, 'NOT_FOUND');
    assert.equal(await count(app, 'roles'), before + 1, 'only the stranger\'s own role was added');
  });

  test('validation: 400 names the field; god is reserved; unknown fields and parameters are refused', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
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
      const res = await app.request('POST', `/v1/role?${q}`, { token: app.adminToken, body });
      assert.equal(assertError(res, 400, 'BAD_REQUEST').message, message);
    }
    const missing = assertError(await app.request('POST', '/v1/role', { token: app.adminToken, body: { manages: NONE, role: input('a') } }), 400, 'BAD_REQUEST');
    assert.match(missing.message, /^query\.parentRoleId: /);
    const partial = assertError(await create(app, app.adminToken, 1, { manages: { roleManagement: true }, role: input('a') }), 400, 'BAD_REQUEST');
    assert.match(partial.message, /^manages\.userManagement: /);
    assert.equal(await count(app, 'roles'), 1);
  });
});

describe('PUT /v1/role/{roleId}', () => {
  test('happy: updates name and selfRights; password absent keeps it, a string replaces it, null clears it', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const created = await create(app, app.adminToken, ROOT_ROLE_ID, { manages: flags('roleManagement'), role: input('site', { password: 'first-secret-1' }) });
    const id = created.body.role.id;
    const put = (body: unknown) => app.request('PUT', `/v1/role/${id}`, { token: app.adminToken, body });
    const hash = async () => (await row(app, 'SELECT password_hash FROM roles WHERE id = ?', id)).password_hash;
    const first = await hash();

    let res = await put({ name: 'site 2', selfRights: flags('userManagement') });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { role: role(id, 'site 2', flags('userManagement')) });
    assert.equal(await hash(), first, 'absent password: unchanged');

    res = await put({ name: 'site 2', selfRights: NONE, password: 'second-secret-2' });
    assert.deepEqual(res.body, { role: role(id, 'site 2', NONE) });
    assert.doesNotMatch(res.text, /secret|scrypt/);
    assert.ok(await verifySecret('second-secret-2', await hash()));
    assert.notEqual(await hash(), first);

    res = await put({ name: 'site 2', selfRights: NONE, password: null });
    assert.equal(res.status, 200);
    assert.equal(await hash(), null);
    const stored = await row(app, 'SELECT * FROM roles WHERE id = ?', id);
    assert.equal(stored.name, 'site 2');
    assert.equal(stored.self_user_management, 0);
  });

  test('rights: indirect roleManagement is needed — the role\'s own selfRights (direct) are not enough', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [g] = await addChild(app, ROOT_ROLE_ID);
    const [target] = await addChild(app, g, flags('roleManagement'), ALL, 'target');
    const manager = await userIn(app, g);
    const res = await app.request('PUT', `/v1/role/${target}`, { token: manager.token, body: input('renamed') });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { role: role(target, 'renamed', flags('alarmManagement')) });

    const insider = await userIn(app, target); // member of target, which has every selfRight: direct only
    const body = assertError(await app.request('PUT', `/v1/role/${target}`, { token: insider.token, body: input('mine') }), 403, 'FORBIDDEN');
    assert.equal(body.message, `missing right: indirect roleManagement over role ${target}`);
    const [other] = await addChild(app, g, allBut('roleManagement'));
    assertError(await app.request('PUT', `/v1/role/${other}`, { token: manager.token, body: input('mine') }), 403, 'FORBIDDEN');
    const stranger = await userIn(app, await addRole(app));
    assertError(await app.request('PUT', `/v1/role/${target}`, { token: stranger.token, body: input('mine') }), 404, 'NOT_FOUND');
    assert.equal((await row(app, 'SELECT name FROM roles WHERE id = ?', target)).name, 'renamed');
    assert.equal((await row(app, 'SELECT name FROM roles WHERE id = ?', other)).name.startsWith('role-'), true);
  });

  test('validation: the body is a RoleInput', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const put = (body: unknown) => app.request('PUT', `/v1/role/${ROOT_ROLE_ID}`, { token: app.adminToken, body });
    assert.equal(assertError(await put({ name: 'x' }), 400, 'BAD_REQUEST').message.split(':')[0], 'selfRights');
    assert.equal(assertError(await put({ ...input('x'), password: 5 }), 400, 'BAD_REQUEST').message.split(':')[0], 'password');
    assert.equal(assertError(await app.request('PUT', '/v1/role/abc', { token: app.adminToken, body: input('x') }), 400, 'BAD_REQUEST').message,
      'path.roleId: expected an integer >= 0');
  });
});

/** root -> a (userManagement) -> b (selfRights: alarmManagement) ; root -> c ; an unreachable role z */
async function queryWorld() {
  const t = await makeTestApp();
  const [a] = await addChild(t, ROOT_ROLE_ID, NONE, NONE, 'alpha');
  const [b] = await addChild(t, a, flags('userManagement'), flags('alarmManagement'), 'beta');
  const [c] = await addChild(t, ROOT_ROLE_ID, NONE, NONE, 'gamma');
  const z = await addRole(t, 'zeta');
  const u = await userIn(t, a);
  return { t, a, b, c, z, u };
}

describe('POST /v1/role/query', () => {
  test('happy: Reach(u) ascending; userRights holds exactly the requested flags', async (t) => {
    const { t: app, a, b, u } = await queryWorld();
    t.after(() => app.close());
    let res = await app.request('POST', '/v1/role/query', { token: u.token, body: {} });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { role: [role(a, 'alpha'), role(b, 'beta', flags('alarmManagement'))] });
    res = await app.request('POST', '/v1/role/query', { token: u.token });
    assert.deepEqual(res.body.role.map((r: { id: number }) => r.id), [a, b], 'no body = {}');

    res = await app.request('POST', '/v1/role/query', {
      token: u.token, body: { userRights: { userManagement: true, alarmManagement: true, roleManagement: false } },
    });
    assert.deepEqual(res.body, {
      role: [
        role(a, 'alpha', NONE, { userManagement: false, alarmManagement: false }),
        // userManagement through the relation a -> b; alarmManagement from b's own selfRights (direct)
        role(b, 'beta', flags('alarmManagement'), { userManagement: true, alarmManagement: true }),
      ],
    });
  });

  test('filters: id, name, ancestorRoleId (strict descendants) combine with and; empty lists match nothing', async (t) => {
    const { t: app, a, b, c, z } = await queryWorld();
    t.after(() => app.close());
    const q = async (filter: unknown) => (await app.request('POST', '/v1/role/query', { token: app.adminToken, body: { filter } })).body.role.map((r: { id: number }) => r.id);
    assert.deepEqual(await q({ id: [b, a, 999, z] }), [a, b], 'invisible and unknown ids are simply not listed');
    assert.deepEqual(await q({ name: ['gamma', 'alpha', 'zeta'] }), [a, c]);
    assert.deepEqual(await q({ ancestorRoleId: [ROOT_ROLE_ID] }), [a, b, c]);
    assert.deepEqual(await q({ ancestorRoleId: [a] }), [b]);
    assert.deepEqual(await q({ ancestorRoleId: [a], name: ['alpha'] }), []);
    assert.deepEqual(await q({ id: [] }), []);
  });

  test('security: an ancestor the caller cannot see filters everything out (it must not reveal the hierarchy)', async (t) => {
    const { t: app, a, u } = await queryWorld();
    t.after(() => app.close());
    const res = await app.request('POST', '/v1/role/query', { token: u.token, body: { filter: { ancestorRoleId: [ROOT_ROLE_ID] } } });
    assert.deepEqual(res.body, { role: [] });
    const own = await app.request('POST', '/v1/role/query', { token: u.token, body: { filter: { id: [ROOT_ROLE_ID, a] } } });
    assert.deepEqual(own.body.role.map((r: { id: number }) => r.id), [a]);
  });

  test('validation: viewId is 400 NOT_SUPPORTED; other mistakes (a malformed companyId too) 400 naming the field', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const post = (body: unknown) => app.request('POST', '/v1/role/query', { token: app.adminToken, body });
    assert.equal(assertError(await post({ filter: { viewId: [1] } }), 400, 'NOT_SUPPORTED').message,
      'filter.viewId: not supported (a gridkeeper appliance has no views)');
    assert.equal(assertError(await post({ filter: { companyId: 'x' } }), 400, 'BAD_REQUEST').message, 'filter.companyId: expected an integer >= 0 or an array of them');
    assert.equal(assertError(await post({ filter: { id: [1, 'x'] } }), 400, 'BAD_REQUEST').message, 'filter.id[1]: expected an integer >= 0');
    assert.equal(assertError(await post({ filter: { id: [-1] } }), 400, 'BAD_REQUEST').message, 'filter.id[0]: expected an integer >= 0');
    assert.equal(assertError(await post({ userRights: { roleManagement: 1 } }), 400, 'BAD_REQUEST').message, 'userRights.roleManagement: expected true or false');
    assert.equal(assertError(await post({ filter: { parentId: [] } }), 400, 'BAD_REQUEST').message, 'filter.parentId: unknown field');
    assert.equal(assertError(await post({ userRights: { godMode: true } }), 400, 'BAD_REQUEST').message, 'userRights.godMode: unknown field');
  });
});

describe('GET /v1/role (deprecated)', () => {
  test('answers like the query, with Deprecation and Link headers; filters as query parameters', async (t) => {
    const { t: app, a, b, c } = await queryWorld();
    t.after(() => app.close());
    const res = await app.request('GET', `/v1/role?id=${a},${c}&id=${b}&userRights.userManagement=true`, { token: app.adminToken });
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
    const named = await app.request('GET', `/v1/role?name=beta&ancestorRoleId=${a}`, { token: app.adminToken });
    assert.deepEqual(named.body, { role: [role(b, 'beta', flags('alarmManagement'))] });
    const all = await app.request('GET', '/v1/role', { token: app.adminToken });
    assert.deepEqual(all.body.role.map((r: { id: number }) => r.id), [ROOT_ROLE_ID, a, b, c]);
    assert.deepEqual(all.body.role[0], ROOT);
  });

  test('validation: NOT_SUPPORTED filters, unknown parameters, bad flag values', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const get = (q: string) => app.request('GET', `/v1/role?${q}`, { token: app.adminToken });
    assert.equal(assertError(await get('viewId=4'), 400, 'NOT_SUPPORTED').message, 'query.viewId: not supported (a gridkeeper appliance has no views)');
    assert.equal(assertError(await get('companyId=x'), 400, 'BAD_REQUEST').message, 'query.companyId: expected integers >= 0');
    assert.equal(assertError(await get('userRights.roleManagement=yes'), 400, 'BAD_REQUEST').message, 'query.userRights.roleManagement: expected true or false');
    assert.equal(assertError(await get('id=1,x'), 400, 'BAD_REQUEST').message, 'query.id: expected integers >= 0');
    assert.equal(assertError(await get('parent=1'), 400, 'BAD_REQUEST').message, 'query.parent: unknown field');
  });
});

describe('roles: selfRights never reach descendants', () => {
  test('a member of a role with every selfRight has no right over its children unless a relation carries it', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [p] = await addChild(app, ROOT_ROLE_ID, NONE, ALL, 'parent');
    const child = await addRole(app, 'child');
    await addManages(app, p, child, flags('deviceManagement'));
    const u = await userIn(app, p);
    const res = await app.request('POST', '/v1/role/query', { token: u.token, body: { userRights: ALL } });
    assert.deepEqual(res.body, {
      role: [role(p, 'parent', ALL, ALL), role(child, 'child', NONE, flags('deviceManagement'))],
    });
  });
});
