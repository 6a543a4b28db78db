// Member relations: upsert by e-mail (creating unknown users), query / deprecated GET, PUT by id, delete (own membership,
// last root member).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, ROOT_ROLE_ID, ADMIN_EMAIL, type TestApp } from '../support/app.ts';
import { loginRefresh, login } from '../support/auth-helpers.ts';
import { verifySecret } from '../../src/auth/passwords.ts';
import { ALL, NONE, flags, addRole, addChild, addMember, userIn, count, row, rows } from './fixtures.ts';

const put = (t: TestApp, token: string, roleId: number, q: string, body: unknown = {}) =>
  t.request('PUT', `/v1/role/${roleId}/member?${q}`, { token, body });
const allBut = (...off: (keyof typeof ALL)[]) => ({ ...ALL, ...Object.fromEntries(off.map((r) => [r, false])) });

function captureLog(t: TestApp): { level: string; msg: string; fields?: Record<string, unknown> }[] {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const keep = (level: string) => (msg: string, fields?: Record<string, unknown>) => { lines.push({ level, msg, fields }); };
  t.deps.log = { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
  return lines;
}
/** the domain's own lines, without the one access-log line per request */
const own = (log: ReturnType<typeof captureLog>) => log.filter((l) => l.msg !== 'request');

describe('PUT /v1/role/{roleId}/member', () => {
  test('happy: adds an existing user (case-insensitive e-mail); repeating answers the same relation', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [r] = await addChild(app, ROOT_ROLE_ID, flags('userManagement'));
    const existing = await userIn(app);
    const res = await put(app, app.adminToken, r, `userEmail=${existing.email.toUpperCase()}`);
    assert.equal(res.status, 200, res.text);
    const id = res.body.member.id;
    assert.deepEqual(res.body, { member: { id, roleId: r, userEmail: existing.email } });
    assert.deepEqual(await rows(app, 'SELECT role_id, user_id FROM members WHERE id = ?', id), [{ role_id: r, user_id: existing.id }]);
    const again = await put(app, app.adminToken, r, `userEmail=${existing.email}`);
    assert.deepEqual(again.body, { member: { id, roleId: r, userEmail: existing.email } });
    assert.equal(await count(app, 'members', 'role_id = ?', r), 1);
  });

  test('an unknown e-mail creates the user with the given password, who can then log in', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [r] = await addChild(app, ROOT_ROLE_ID, flags('userManagement'));
    const log = captureLog(app);
    const res = await put(app, app.adminToken, r, 'userEmail=new.person@example.test&password=first-login-pw');
    assert.equal(res.status, 200, res.text);
    const user = await row(app, 'SELECT * FROM users WHERE email = ?', 'new.person@example.test');
    assert.deepEqual(res.body, { member: { id: res.body.member.id, roleId: r, userEmail: 'new.person@example.test' } });
    assert.match(user.password_hash, /^scrypt\$/);
    assert.ok(await verifySecret('first-login-pw', user.password_hash));
    assert.ok(await loginRefresh(app, 'new.person@example.test', 'first-login-pw'));
    assert.deepEqual(own(log), [{ level: 'info', msg: 'user created by a member relation', fields: { userId: user.id, roleId: r, byUserId: app.adminId } }]);
    assert.doesNotMatch(JSON.stringify(log), /first-login-pw/, 'not even in the access log (the query string is not logged)');
  });

  test('without a password the generated one is logged once (warn), usable, and nowhere in the response', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [r] = await addChild(app, ROOT_ROLE_ID, flags('userManagement'));
    const log = captureLog(app);
    const res = await put(app, app.adminToken, r, 'userEmail=gen@example.test');
    assert.equal(res.status, 200, res.text);
    const warns = own(log).filter((l) => l.level === 'warn');
    assert.equal(warns.length, 1);
    const password = warns[0].fields?.password as string;
    assert.match(password, /^[A-Za-z0-9]{20}$/);
    assert.deepEqual(Object.keys(warns[0].fields ?? {}).sort(), ['email', 'password', 'userId']);
    assert.ok(!res.text.includes(password));
    assert.ok(await loginRefresh(app, 'gen@example.test', password));
    // adding the same user elsewhere logs no password again
    const [r2] = await addChild(app, ROOT_ROLE_ID, flags('userManagement'));
    await put(app, app.adminToken, r2, 'userEmail=gen@example.test');
    assert.equal(log.filter((l) => l.level === 'warn').length, 1);
    assert.equal(log.filter((l) => JSON.stringify(l).includes(password)).length, 1, 'the password is in exactly one line');
  });

  test('security: a password never changes an existing user\'s password', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [r] = await addChild(app, ROOT_ROLE_ID, flags('userManagement'));
    const hash = (await row(app, 'SELECT password_hash FROM users WHERE id = ?', app.adminId)).password_hash;
    const res = await put(app, app.adminToken, r, `userEmail=${ADMIN_EMAIL}&password=attacker-choice-1`);
    assert.equal(res.status, 200);
    assert.equal((await row(app, 'SELECT password_hash FROM users WHERE id = ?', app.adminId)).password_hash, hash);
    assertError(await login(app, ADMIN_EMAIL, 'attacker-choice-1'), 401, 'PASSWORD_INCORRECT');
  });

  test('rights: userManagement direct (self or relation) or indirect, or indirect roleManagement, are each enough', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const target = await userIn(app);
    const selfUm = await addRole(app, 'selfUm', flags('userManagement'));
    const [g1] = await addChild(app, ROOT_ROLE_ID);
    const [relUm] = await addChild(app, g1, flags('userManagement'));
    const [g2] = await addChild(app, ROOT_ROLE_ID);
    const [mid2] = await addChild(app, g2, flags('userManagement'));
    const [indirectUm] = await addChild(app, mid2);
    const [g3] = await addChild(app, ROOT_ROLE_ID);
    const [mid3] = await addChild(app, g3, flags('roleManagement'));
    const [indirectRm] = await addChild(app, mid3);
    for (const [member, role] of [[selfUm, selfUm], [g1, relUm], [g2, indirectUm], [g3, indirectRm]]) {
      const u = await userIn(app, member);
      const res = await put(app, u.token, role, `userEmail=${target.email}`);
      assert.equal(res.status, 200, `member of ${member} adding to ${role}: ${res.text}`);
      assert.equal(await count(app, 'members', 'role_id = ? AND user_id = ?', role, target.id), 1);
    }
  });

  test('security: direct roleManagement only (selfRights) and other rights are 403; an invisible role 404; no user created', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r', allBut('userManagement'));
    const u = await userIn(app, r);
    const usersBefore = await count(app, 'users');
    const body = assertError(await put(app, u.token, r, 'userEmail=victim@example.test'), 403, 'FORBIDDEN');
    assert.equal(body.message, `missing right: direct or indirect userManagement over role ${r} or indirect roleManagement over role ${r}`);
    assertError(await put(app, u.token, ROOT_ROLE_ID, 'userEmail=victim@example.test'), 404, 'NOT_FOUND');
    assert.equal(await count(app, 'users'), usersBefore);
    assert.equal(await count(app, 'members', 'role_id = ?', r), 1);
  });

  test('validation: body exactly {}, userEmail required and an address, password length', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const cases: [string, unknown, string][] = [
      ['userEmail=a@b', { x: 1 }, 'x: unknown field'],
      ['userEmail=not-an-address', {}, 'query.userEmail: expected an e-mail address'],
      ['userEmail=a@b&password=short', {}, 'query.password: expected at least 10 characters'],
      ['userEmail=a@b&role=1', {}, 'query.role: unknown field'],
    ];
    for (const [q, body, message] of cases) assert.equal(assertError(await put(app, app.adminToken, ROOT_ROLE_ID, q, body), 400, 'BAD_REQUEST').message, message);
    assert.match(assertError(await put(app, app.adminToken, ROOT_ROLE_ID, '', {}), 400, 'BAD_REQUEST').message, /^query\.userEmail: /);
    const noBody = await app.request('PUT', `/v1/role/${ROOT_ROLE_ID}/member?userEmail=a@b`, { token: app.adminToken });
    assert.match(assertError(noBody, 400, 'BAD_REQUEST').message, /^body: /);
    assert.equal(await count(app, 'users'), 1);
  });
});

/** root -> a (userManagement) -> b ; root -> c ; u member of a and c; v member of c */
async function queryWorld() {
  const t = await makeTestApp();
  const [a] = await addChild(t, ROOT_ROLE_ID, NONE, flags('userManagement'));
  const [b] = await addChild(t, a, flags('userManagement'));
  const [c] = await addChild(t, ROOT_ROLE_ID);
  const u = await userIn(t, a, c);
  const v = await userIn(t, c, b);
  return { t, a, b, c, u, v };
}
const member = (id: number, roleId: number, userEmail: string) => ({ id, roleId, userEmail });

describe('member query and deprecated GET', () => {
  test('happy: relations of roles with userManagement plus the caller\'s own; filters', async (t) => {
    const { t: app, a, b, c, u, v } = await queryWorld();
    t.after(() => app.close());
    const q = (path: string, body?: unknown) => app.request('POST', `/v1/role/${path}/member/query`, { token: u.token, body });
    // a: selfRights userManagement; b: through a -> b; c: no right, so only u's own relation of c
    const all = [member(u.memberIds[0], a, u.email), member(u.memberIds[1], c, u.email), member(v.memberIds[1], b, v.email)];
    assert.deepEqual((await q('*', {})).body, { member: all });
    assert.deepEqual((await q('*')).body, { member: all });
    assert.deepEqual((await q(`${c}`, {})).body, { member: [all[1]] });
    assert.deepEqual((await q(`${b},${a}`, {})).body, { member: [all[0], all[2]] });
    assert.deepEqual((await q('*', { filter: { userEmail: [v.email.toUpperCase()] } })).body, { member: [all[2]] });
    assert.deepEqual((await q('*', { filter: { roleId: [a, c], id: [u.memberIds[1], v.memberIds[0]] } })).body, { member: [all[1]] });
    assert.deepEqual((await q('*', { filter: { id: [] } })).body, { member: [] });
  });

  test('security: an invisible path role is 404', async (t) => {
    const { t: app, v } = await queryWorld();
    t.after(() => app.close());
    const hidden = await addRole(app);
    assertError(await app.request('POST', `/v1/role/${hidden}/member/query`, { token: v.token, body: {} }), 404, 'NOT_FOUND');
    assertError(await app.request('POST', `/v1/role/${ROOT_ROLE_ID}/member/query`, { token: v.token, body: {} }), 404, 'NOT_FOUND');
  });

  test('deprecated GET: same answer, headers, query parameters', async (t) => {
    const { t: app, a, b, u, v } = await queryWorld();
    t.after(() => app.close());
    const res = await app.request('GET', `/v1/role/*/member?roleId=${a},${b}`, { token: u.token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('deprecation'), 'true');
    assert.equal(res.headers.get('link'), '</v1/role/*/member/query>; rel="successor-version"');
    assert.deepEqual(res.body, { member: [member(u.memberIds[0], a, u.email), member(v.memberIds[1], b, v.email)] });
    const byEmail = await app.request('GET', `/v1/role/${b}/member?userEmail=${v.email}`, { token: u.token });
    assert.deepEqual(byEmail.body, { member: [member(v.memberIds[1], b, v.email)] });
    assertError(await app.request('GET', `/v1/role/${b}/member?email=x`, { token: u.token }), 400, 'BAD_REQUEST');
  });
});

describe('PUT /v1/role/{roleId}/member/{memberId}', () => {
  test('answers the relations (object / array in request order) with the member right; 403 without; 404 for another role\'s', async (t) => {
    const { t: app, a, b, c, u, v } = await queryWorld();
    t.after(() => app.close());
    const one = await app.request('PUT', `/v1/role/${b}/member/${v.memberIds[1]}`, { token: u.token, body: {} });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, { member: member(v.memberIds[1], b, v.email) });
    const w = await userIn(app, b);
    const two = await app.request('PUT', `/v1/role/${b}/member/${w.memberIds[0]},${v.memberIds[1]}`, { token: u.token, body: {} });
    assert.deepEqual(two.body, { member: [member(w.memberIds[0], b, w.email), member(v.memberIds[1], b, v.email)] });
    assertError(await app.request('PUT', `/v1/role/${c}/member/${u.memberIds[1]}`, { token: u.token, body: {} }), 403, 'FORBIDDEN');
    assert.equal(assertError(await app.request('PUT', `/v1/role/${a}/member/${v.memberIds[1]}`, { token: u.token, body: {} }), 404, 'NOT_FOUND').message,
      `member relation ${v.memberIds[1]} of role ${a} not found`);
    assert.match(assertError(await app.request('PUT', `/v1/role/${b}/member/${w.memberIds[0]}`, { token: u.token, body: { a: 1 } }), 400, 'BAD_REQUEST').message, /^a: unknown field/);
  });
});

describe('DELETE /v1/role/{roleId}/member/{memberId}', () => {
  test('with the member right: deletes; answers the deletion info; the user stays', async (t) => {
    const { t: app, b, u, v } = await queryWorld();
    t.after(() => app.close());
    const res = await app.request('DELETE', `/v1/role/${b}/member/${v.memberIds[1]}`, { token: u.token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      deletedNodeIds: [], deletedRelationIds: [v.memberIds[1]],
      deleted: { roles: [], devices: [], manages: [], members: [v.memberIds[1]], monitors: [] },
    });
    assert.equal(await count(app, 'members', 'id = ?', v.memberIds[1]), 0);
    assert.equal(await count(app, 'users', 'id = ?', v.id), 1);
  });

  test('own membership without any right is allowed; someone else\'s is 403 whether or not it exists', async (t) => {
    const { t: app, c, u, v } = await queryWorld();
    t.after(() => app.close());
    assert.equal(assertError(await app.request('DELETE', `/v1/role/${c}/member/${u.memberIds[1]}`, { token: v.token }), 403, 'FORBIDDEN').message,
      `missing right: direct or indirect userManagement over role ${c} or indirect roleManagement over role ${c}`);
    assertError(await app.request('DELETE', `/v1/role/${c}/member/99999`, { token: v.token }), 403, 'FORBIDDEN');
    assertError(await app.request('DELETE', `/v1/role/${c}/member/${v.memberIds[0]},${u.memberIds[1]}`, { token: v.token }), 403, 'FORBIDDEN');
    assert.equal(await count(app, 'members', 'id IN (?, ?)', v.memberIds[0], u.memberIds[1]), 2, 'nothing deleted');
    const own = await app.request('DELETE', `/v1/role/${c}/member/${v.memberIds[0]}`, { token: v.token });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.body.deletedRelationIds, [v.memberIds[0]]);
    assert.equal(await count(app, 'members', 'id = ?', v.memberIds[0]), 0);
    // and a role the caller no longer reaches is 404
    assertError(await app.request('DELETE', `/v1/role/${c}/member/${u.memberIds[1]}`, { token: v.token }), 404, 'NOT_FOUND');
  });

  test('the last member of the root role cannot be removed (409), by itself or by anyone; the one before can', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const adminMember = (await row(app, 'SELECT id FROM members WHERE user_id = ?', app.adminId)).id;
    const body = assertError(await app.request('DELETE', `/v1/role/${ROOT_ROLE_ID}/member/${adminMember}`, { token: app.adminToken }), 409, 'LAST_ROOT_MEMBER');
    assert.equal(body.message, 'the last member of the root role cannot be removed');
    const second = await userIn(app, ROOT_ROLE_ID);
    assertError(await app.request('DELETE', `/v1/role/${ROOT_ROLE_ID}/member/${adminMember},${second.memberIds[0]}`, { token: app.adminToken }), 409, 'LAST_ROOT_MEMBER');
    assert.equal(await count(app, 'members', 'role_id = ?', ROOT_ROLE_ID), 2);
    const ok = await app.request('DELETE', `/v1/role/${ROOT_ROLE_ID}/member/${adminMember}`, { token: second.token });
    assert.equal(ok.status, 200, ok.text);
    assertError(await app.request('DELETE', `/v1/role/${ROOT_ROLE_ID}/member/${second.memberIds[0]}`, { token: second.token }), 409, 'LAST_ROOT_MEMBER');
    assert.deepEqual(await rows(app, 'SELECT user_id FROM members WHERE role_id = ?', ROOT_ROLE_ID), [{ user_id: second.id }]);
  });

  test('members of other roles may all be removed; a member id of another role is 404', async (t) => {
    const { t: app, a, b, u, v } = await queryWorld();
    t.after(() => app.close());
    assertError(await app.request('DELETE', `/v1/role/${a}/member/${v.memberIds[1]}`, { token: u.token }), 404, 'NOT_FOUND');
    await addMember(app, ROOT_ROLE_ID, v.id);
    const res = await app.request('DELETE', `/v1/role/${b}/member/${v.memberIds[1]}`, { token: u.token });
    assert.equal(res.status, 200);
  });
});
