// Manages relations: upsert with and without the child's join password (and its throttle), cycles refused with nothing
// written, query / deprecated GET, flag updates by id.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { hashSecret } from '../../src/auth/passwords.ts';
import { ALL, NONE, flags, addRole, addChild, addManages, userIn, count, rows, manages } from './fixtures.ts';

const upsert = (t: TestApp, token: string, parent: number, child: number, body: unknown = NONE, password?: string) =>
  t.request('PUT', `/v1/role/${parent}/manages?childRoleId=${child}${password === undefined ? '' : `&childRolePassword=${encodeURIComponent(password)}`}`, { token, body });
const snapshot = (t: TestApp) => rows(t, 'SELECT * FROM manages ORDER BY id');

describe('PUT /v1/role/{parentRoleId}/manages without a password', () => {
  test('happy: creates P -> C, then updates the same relation (same id)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [g] = await addChild(app, ROOT_ROLE_ID);
    const [p] = await addChild(app, g, flags('roleManagement'));
    const [c] = await addChild(app, g, flags('roleManagement'));
    const u = await userIn(app, g);
    const res = await upsert(app, u.token, p, c, flags('deviceManagement'));
    assert.equal(res.status, 200, res.text);
    const id = res.body.manages.id;
    assert.deepEqual(res.body, { manages: manages(id, p, c, flags('deviceManagement')) });
    assert.deepEqual(await rows(app, 'SELECT parent_role_id, child_role_id, device_management, role_management FROM manages WHERE id = ?', id),
      [{ parent_role_id: p, child_role_id: c, device_management: 1, role_management: 0 }]);
    const again = await upsert(app, u.token, p, c, ALL);
    assert.deepEqual(again.body, { manages: manages(id, p, c, ALL) });
    assert.equal(await count(app, 'manages', 'parent_role_id = ? AND child_role_id = ?', p, c), 1);
    assert.equal(await count(app, 'manages', 'id = ? AND alarm_management = 1', id), 1);
  });

  test('rights: direct roleManagement over P (self flag) and indirect over C, through ONE member role', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    // g -> c carries roleManagement (indirect over c); g itself has the roleManagement selfRight (direct over g)
    const [g] = await addChild(app, ROOT_ROLE_ID, NONE, flags('roleManagement'));
    const [c] = await addChild(app, ROOT_ROLE_ID);
    await addManages(app, g, c, flags('roleManagement'));
    const [c2] = await addChild(app, g, flags('roleManagement'));
    const u = await userIn(app, g);
    // P = g (direct through selfRights), C = c2 (indirect): allowed
    const ok = await upsert(app, u.token, g, c2);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.manages.id, (await rows(app, 'SELECT id FROM manages WHERE parent_role_id = ? AND child_role_id = ?', g, c2))[0].id);
  });

  test('security: rights split over two member roles are not enough (403), nothing written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a] = await addChild(app, ROOT_ROLE_ID);
    const [b] = await addChild(app, ROOT_ROLE_ID);
    const [p] = await addChild(app, a, flags('roleManagement')); // a: roleManagement over p
    const [c] = await addChild(app, b, flags('roleManagement')); // b: roleManagement over c
    const u = await userIn(app, a, b);
    const before = await snapshot(app);
    const body = assertError(await upsert(app, u.token, p, c), 403, 'FORBIDDEN');
    assert.equal(body.message, `missing right: direct or indirect roleManagement over role ${p}, and through the same member role, indirect roleManagement over role ${c}`);
    assert.deepEqual(await snapshot(app), before);
  });

  test('security: only direct roleManagement over C (its selfRights) is not enough; an invisible P or C is 404', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [g] = await addChild(app, ROOT_ROLE_ID);
    const [p] = await addChild(app, g, flags('roleManagement'));
    const [c] = await addChild(app, g, allBut('roleManagement'), ALL); // c: every selfRight, relation without roleManagement
    const u = await userIn(app, g, c);
    const before = await snapshot(app);
    assertError(await upsert(app, u.token, p, c), 403, 'FORBIDDEN');
    const hidden = await addRole(app);
    assert.equal(assertError(await upsert(app, u.token, p, hidden), 404, 'NOT_FOUND').message, `role ${hidden} not found`);
    assert.equal(assertError(await upsert(app, u.token, hidden, p), 404, 'NOT_FOUND').message, `role ${hidden} not found`);
    assertError(await upsert(app, u.token, p, 12345), 404, 'NOT_FOUND');
    assert.deepEqual(await snapshot(app), before);
  });

  test('validation: childRoleId required, body is Flags6', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const put = (q: string, body: unknown) => app.request('PUT', `/v1/role/1/manages${q}`, { token: app.adminToken, body });
    assert.match(assertError(await put('', NONE), 400, 'BAD_REQUEST').message, /^query\.childRoleId: /);
    assert.equal(assertError(await put('?childRoleId=-1', NONE), 400, 'BAD_REQUEST').message, 'query.childRoleId: expected an integer >= 0');
    assert.match(assertError(await put('?childRoleId=2', { roleManagement: true }), 400, 'BAD_REQUEST').message, /^userManagement: /);
    assert.equal(assertError(await put('?childRoleId=2&childRolePassword=', NONE), 400, 'BAD_REQUEST').message, 'query.childRolePassword: expected a non-empty string');
  });
});

const allBut = (...off: (keyof typeof ALL)[]) => ({ ...ALL, ...Object.fromEntries(off.map((r) => [r, false])) });

describe('PUT manages: cycles are 409 ROLE_CYCLE with nothing written', () => {
  test('P = C, a 2-cycle and a long cycle', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a] = await addChild(app, ROOT_ROLE_ID, flags('roleManagement'));
    const chain = [a];
    for (let i = 0; i < 6; i++) chain.push((await addChild(app, chain[chain.length - 1], flags('roleManagement')))[0]);
    const before = await snapshot(app);
    const cases: [number, number][] = [[a, a], [chain[1], chain[0]], [chain[6], chain[0]], [chain[6], chain[3]]];
    for (const [p, c] of cases) {
      const body = assertError(await upsert(app, app.adminToken, p, c, ALL), 409, 'ROLE_CYCLE');
      assert.equal(body.message, `a manages relation ${p} -> ${c} would create a cycle`);
      assert.deepEqual(await snapshot(app), before, `${p} -> ${c}: nothing written`);
    }
    // a shortcut in the same direction is no cycle
    assert.equal((await upsert(app, app.adminToken, chain[0], chain[6])).status, 200);
  });

  test('a cycle through another branch (diamond) and with a valid password is refused too', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a] = await addChild(app, ROOT_ROLE_ID, flags('roleManagement'));
    const [b] = await addChild(app, a, flags('roleManagement'));
    const [c] = await addChild(app, a, flags('roleManagement'));
    const d = await addRole(app, 'd', NONE, await hashSecret('join-password-d'));
    await addManages(app, b, d, flags('roleManagement'));
    await addManages(app, c, d, flags('roleManagement'));
    const before = await snapshot(app);
    assertError(await upsert(app, app.adminToken, d, a), 409, 'ROLE_CYCLE');
    assertError(await upsert(app, app.adminToken, d, d, NONE, 'join-password-d'), 409, 'ROLE_CYCLE');
    assert.deepEqual(await snapshot(app), before);
  });
});

describe('PUT manages with childRolePassword', () => {
  async function world() {
    const t = await makeTestApp();
    const [p] = await addChild(t, ROOT_ROLE_ID, NONE, flags('roleManagement'));
    const u = await userIn(t, p);
    const hidden = await addRole(t, 'hidden', NONE, await hashSecret('correct-horse-1'));
    return { t, p, u, hidden };
  }

  test('happy: roleManagement over P and the right password join an invisible child', async (t) => {
    const { t: app, p, u, hidden } = await world();
    t.after(() => app.close());
    const res = await upsert(app, u.token, p, hidden, flags('userManagement'), 'correct-horse-1');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { manages: manages(res.body.manages.id, p, hidden, flags('userManagement')) });
    assert.equal(await count(app, 'manages', 'parent_role_id = ? AND child_role_id = ? AND user_management = 1', p, hidden), 1);
    // and now the child is in reach
    const q = await app.request('POST', '/v1/role/query', { token: u.token, body: { filter: { id: [hidden] } } });
    assert.equal(q.body.role.length, 1);
  });

  test('security: a wrong password, an unknown role and a role without password all answer 403 alike; no right over P is 403', async (t) => {
    const { t: app, p, u, hidden } = await world();
    t.after(() => app.close());
    const before = await snapshot(app);
    const wrong = assertError(await upsert(app, u.token, p, hidden, NONE, 'wrong-horse-1'), 403, 'ROLE_PASSWORD_INCORRECT');
    assert.equal(wrong.message, `childRolePassword is incorrect for role ${hidden}`);
    const noPassword = await addRole(app, 'open');
    assert.equal(assertError(await upsert(app, u.token, p, noPassword, NONE, 'anything-at-all'), 403, 'ROLE_PASSWORD_INCORRECT').message,
      `childRolePassword is incorrect for role ${noPassword}`);
    assert.equal(assertError(await upsert(app, u.token, p, 98765, NONE, 'anything-at-all'), 403, 'ROLE_PASSWORD_INCORRECT').message,
      'childRolePassword is incorrect for role 98765');
    const [q] = await addChild(app, p, allBut('roleManagement'));
    assert.equal(assertError(await upsert(app, u.token, q, hidden, NONE, 'correct-horse-1'), 403, 'FORBIDDEN').message,
      `missing right: direct or indirect roleManagement over role ${q}`);
    const stranger = await userIn(app, await addRole(app));
    assertError(await upsert(app, stranger.token, p, hidden, NONE, 'correct-horse-1'), 404, 'NOT_FOUND');
    assert.deepEqual((await snapshot(app)).filter((r) => r.child_role_id !== q), before);
  });
});

describe('manages query and deprecated GET', () => {
  async function world() {
    const t = await makeTestApp();
    const [a, ra] = await addChild(t, ROOT_ROLE_ID);
    const [b, ab] = await addChild(t, a, flags('viewManagement'));
    const [c, ac] = await addChild(t, a);
    const bc = await addManages(t, b, c, flags('alarmManagement'));
    const z = await addRole(t);
    const [, zx] = await addChild(t, z);
    const u = await userIn(t, a);
    return { t, a, b, c, z, ra, ab, ac, bc, zx, u };
  }

  test('happy: id, ids and * select parents within reach; filters; {} or no body', async (t) => {
    const { t: app, a, b, c, ab, ac, bc, u } = await world();
    t.after(() => app.close());
    const q = (path: string, body?: unknown) => app.request('POST', `/v1/role/${path}/manages/query`, { token: u.token, body });
    const expectAll = [manages(ab, a, b, flags('viewManagement')), manages(ac, a, c), manages(bc, b, c, flags('alarmManagement'))];
    assert.deepEqual((await q('*', {})).body, { manages: expectAll });
    assert.deepEqual((await q('*')).body, { manages: expectAll });
    assert.deepEqual((await q(`${a}`, {})).body, { manages: expectAll.slice(0, 2) });
    assert.deepEqual((await q(`${b},${a}`, { filter: { childRoleId: [c] } })).body, { manages: [expectAll[1], expectAll[2]] });
    assert.deepEqual((await q('*', { filter: { id: [bc, 999], parentRoleId: [b] } })).body, { manages: [expectAll[2]] });
    assert.deepEqual((await q('*', { filter: { id: [] } })).body, { manages: [] });
  });

  test('security: a path role outside reach is 404 (even with visible ones); * never lists foreign relations', async (t) => {
    const { t: app, a, z, ra, zx, u } = await world();
    t.after(() => app.close());
    assert.equal(assertError(await app.request('POST', `/v1/role/${a},${z}/manages/query`, { token: u.token, body: {} }), 404, 'NOT_FOUND').message, `role ${z} not found`);
    assertError(await app.request('POST', `/v1/role/${ROOT_ROLE_ID}/manages/query`, { token: u.token, body: {} }), 404, 'NOT_FOUND');
    const all = await app.request('POST', '/v1/role/*/manages/query', { token: u.token, body: {} });
    const ids = all.body.manages.map((m: { id: number }) => m.id);
    assert.ok(!ids.includes(ra) && !ids.includes(zx));
  });

  test('validation: bad path segment and filters', async (t) => {
    const { t: app, u } = await world();
    t.after(() => app.close());
    assert.equal(assertError(await app.request('POST', '/v1/role/1;2/manages/query', { token: u.token, body: {} }), 400, 'BAD_REQUEST').message.split(':')[0], 'path.parentRoleId');
    assert.equal(assertError(await app.request('POST', '/v1/role/*/manages/query', { token: u.token, body: { filter: { child: [1] } } }), 400, 'BAD_REQUEST').message, 'filter.child: unknown field');
  });

  test('deprecated GET answers like the query with Deprecation and Link headers', async (t) => {
    const { t: app, a, b, c, ac, bc, u } = await world();
    t.after(() => app.close());
    const res = await app.request('GET', `/v1/role/${a},${b}/manages?childRoleId=${c}`, { token: u.token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('deprecation'), 'true');
    assert.equal(res.headers.get('link'), `</v1/role/${a},${b}/manages/query>; rel="successor-version"`);
    assert.deepEqual(res.body, { manages: [manages(ac, a, c), manages(bc, b, c, flags('alarmManagement'))] });
    const star = await app.request('GET', `/v1/role/*/manages?id=${bc}`, { token: u.token });
    assert.deepEqual(star.body, { manages: [manages(bc, b, c, flags('alarmManagement'))] });
    assert.equal(star.headers.get('link'), '</v1/role/*/manages/query>; rel="successor-version"');
    assertError(await app.request('GET', `/v1/role/${a}/manages?parentRoleId=1`, { token: u.token }), 400, 'BAD_REQUEST');
  });
});

describe('PUT /v1/role/{parentRoleId}/manages/{managesId}', () => {
  test('happy: one id -> object; several -> array in request order', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [p] = await addChild(app, ROOT_ROLE_ID, NONE, flags('roleManagement'));
    const [c1, m1] = await addChild(app, p);
    const [c2, m2] = await addChild(app, p);
    const u = await userIn(app, p);
    const one = await app.request('PUT', `/v1/role/${p}/manages/${m1}`, { token: u.token, body: flags('reportManagement') });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, { manages: manages(m1, p, c1, flags('reportManagement')) });
    const two = await app.request('PUT', `/v1/role/${p}/manages/${m2},${m1}`, { token: u.token, body: ALL });
    assert.deepEqual(two.body, { manages: [manages(m2, p, c2, ALL), manages(m1, p, c1, ALL)] });
    assert.equal(await count(app, 'manages', 'parent_role_id = ? AND role_management = 1 AND report_management = 1', p), 2);
  });

  test('security: needs roleManagement over P; a relation of another parent is 404 and nothing is written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [g] = await addChild(app, ROOT_ROLE_ID);
    const [p] = await addChild(app, g, allBut('roleManagement'));
    const [, m] = await addChild(app, p);
    const [, other] = await addChild(app, g);
    const u = await userIn(app, g);
    assert.equal(assertError(await app.request('PUT', `/v1/role/${p}/manages/${m}`, { token: u.token, body: ALL }), 403, 'FORBIDDEN').message,
      `missing right: direct or indirect roleManagement over role ${p}`);
    const admin = (path: string) => app.request('PUT', path, { token: app.adminToken, body: ALL });
    const [q] = await addChild(app, ROOT_ROLE_ID, flags('roleManagement'));
    const [, qm] = await addChild(app, q);
    assert.equal(assertError(await admin(`/v1/role/${q}/manages/${qm},${other}`), 404, 'NOT_FOUND').message, `manages relation ${other} of role ${q} not found`);
    assert.equal(await count(app, 'manages', 'id IN (?, ?) AND alarm_management = 1', qm, other), 0, 'all or nothing');
    const stranger = await userIn(app, await addRole(app));
    assertError(await app.request('PUT', `/v1/role/${p}/manages/${m}`, { token: stranger.token, body: ALL }), 404, 'NOT_FOUND');
  });
});
