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
  test('happy: creates P -> C, then updates the same relation (same id)', async () => {
    const t = await makeTestApp();
    const [g] = addChild(t, ROOT_ROLE_ID);
    const [p] = addChild(t, g, flags('roleManagement'));
    const [c] = addChild(t, g, flags('roleManagement'));
    const u = await userIn(t, g);
    const res = await upsert(t, u.token, p, c, flags('deviceManagement'));
    assert.equal(res.status, 200, res.text);
    const id = res.body.manages.id;
    assert.deepEqual(res.body, { manages: manages(id, p, c, flags('deviceManagement')) });
    assert.deepEqual(rows(t, 'SELECT parent_role_id, child_role_id, device_management, role_management FROM manages WHERE id = ?', id),
      [{ parent_role_id: p, child_role_id: c, device_management: 1, role_management: 0 }]);
    const again = await upsert(t, u.token, p, c, ALL);
    assert.deepEqual(again.body, { manages: manages(id, p, c, ALL) });
    assert.equal(count(t, 'manages', 'parent_role_id = ? AND child_role_id = ?', p, c), 1);
    assert.equal(count(t, 'manages', 'id = ? AND alarm_management = 1', id), 1);
    t.close();
  });

  test('rights: direct roleManagement over P (self flag) and indirect over C, through ONE member role', async () => {
    const t = await makeTestApp();
    // g -> c carries roleManagement (indirect over c); g itself has the roleManagement selfRight (direct over g)
    const [g] = addChild(t, ROOT_ROLE_ID, NONE, flags('roleManagement'));
    const [c] = addChild(t, ROOT_ROLE_ID);
    addManages(t, g, c, flags('roleManagement'));
    const [c2] = addChild(t, g, flags('roleManagement'));
    const u = await userIn(t, g);
    // P = g (direct through selfRights), C = c2 (indirect): allowed
    const ok = await upsert(t, u.token, g, c2);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.manages.id, rows(t, 'SELECT id FROM manages WHERE parent_role_id = ? AND child_role_id = ?', g, c2)[0].id);
    t.close();
  });

  test('security: rights split over two member roles are not enough (403), nothing written', async () => {
    const t = await makeTestApp();
    const [a] = addChild(t, ROOT_ROLE_ID);
    const [b] = addChild(t, ROOT_ROLE_ID);
    const [p] = addChild(t, a, flags('roleManagement')); // a: roleManagement over p
    const [c] = addChild(t, b, flags('roleManagement')); // b: roleManagement over c
    const u = await userIn(t, a, b);
    const before = snapshot(t);
    const body = assertError(await upsert(t, u.token, p, c), 403, 'FORBIDDEN');
    assert.equal(body.message, `missing right: direct or indirect roleManagement over role ${p}, and through the same member role, indirect roleManagement over role ${c}`);
    assert.deepEqual(snapshot(t), before);
    t.close();
  });

  test('security: only direct roleManagement over C (its selfRights) is not enough; an invisible P or C is 404', async () => {
    const t = await makeTestApp();
    const [g] = addChild(t, ROOT_ROLE_ID);
    const [p] = addChild(t, g, flags('roleManagement'));
    const [c] = addChild(t, g, allBut('roleManagement'), ALL); // c: every selfRight, relation without roleManagement
    const u = await userIn(t, g, c);
    const before = snapshot(t);
    assertError(await upsert(t, u.token, p, c), 403, 'FORBIDDEN');
    const hidden = addRole(t);
    assert.equal(assertError(await upsert(t, u.token, p, hidden), 404, 'NOT_FOUND').message, `role ${hidden} not found`);
    assert.equal(assertError(await upsert(t, u.token, hidden, p), 404, 'NOT_FOUND').message, `role ${hidden} not found`);
    assertError(await upsert(t, u.token, p, 12345), 404, 'NOT_FOUND');
    assert.deepEqual(snapshot(t), before);
    t.close();
  });

  test('validation: childRoleId required, body is Flags6', async () => {
    const t = await makeTestApp();
    const put = (q: string, body: unknown) => t.request('PUT', `/v1/role/1/manages${q}`, { token: t.adminToken, body });
    assert.match(assertError(await put('', NONE), 400, 'BAD_REQUEST').message, /^query\.childRoleId: /);
    assert.equal(assertError(await put('?childRoleId=-1', NONE), 400, 'BAD_REQUEST').message, 'query.childRoleId: expected an integer >= 0');
    assert.match(assertError(await put('?childRoleId=2', { roleManagement: true }), 400, 'BAD_REQUEST').message, /^userManagement: /);
    assert.equal(assertError(await put('?childRoleId=2&childRolePassword=', NONE), 400, 'BAD_REQUEST').message, 'query.childRolePassword: expected a non-empty string');
    t.close();
  });
});

const allBut = (...off: (keyof typeof ALL)[]) => ({ ...ALL, ...Object.fromEntries(off.map((r) => [r, false])) });

describe('PUT manages: cycles are 409 ROLE_CYCLE with nothing written', () => {
  test('P = C, a 2-cycle and a long cycle', async () => {
    const t = await makeTestApp();
    const [a] = addChild(t, ROOT_ROLE_ID, flags('roleManagement'));
    const chain = [a];
    for (let i = 0; i < 6; i++) chain.push(addChild(t, chain[chain.length - 1], flags('roleManagement'))[0]);
    const before = snapshot(t);
    const cases: [number, number][] = [[a, a], [chain[1], chain[0]], [chain[6], chain[0]], [chain[6], chain[3]]];
    for (const [p, c] of cases) {
      const body = assertError(await upsert(t, t.adminToken, p, c, ALL), 409, 'ROLE_CYCLE');
      assert.equal(body.message, `a manages relation ${p} -> ${c} would create a cycle`);
      assert.deepEqual(snapshot(t), before, `${p} -> ${c}: nothing written`);
    }
    // a shortcut in the same direction is no cycle
    assert.equal((await upsert(t, t.adminToken, chain[0], chain[6])).status, 200);
    t.close();
  });

  test('a cycle through another branch (diamond) and with a valid password is refused too', async () => {
    const t = await makeTestApp();
    const [a] = addChild(t, ROOT_ROLE_ID, flags('roleManagement'));
    const [b] = addChild(t, a, flags('roleManagement'));
    const [c] = addChild(t, a, flags('roleManagement'));
    const d = addRole(t, 'd', NONE, await hashSecret('join-password-d'));
    addManages(t, b, d, flags('roleManagement'));
    addManages(t, c, d, flags('roleManagement'));
    const before = snapshot(t);
    assertError(await upsert(t, t.adminToken, d, a), 409, 'ROLE_CYCLE');
    assertError(await upsert(t, t.adminToken, d, d, NONE, 'join-password-d'), 409, 'ROLE_CYCLE');
    assert.deepEqual(snapshot(t), before);
    t.close();
  });
});

describe('PUT manages with childRolePassword', () => {
  async function world() {
    const t = await makeTestApp();
    const [p] = addChild(t, ROOT_ROLE_ID, NONE, flags('roleManagement'));
    const u = await userIn(t, p);
    const hidden = addRole(t, 'hidden', NONE, await hashSecret('correct-horse-1'));
    return { t, p, u, hidden };
  }

  test('happy: roleManagement over P and the right password join an invisible child', async () => {
    const { t, p, u, hidden } = await world();
    const res = await upsert(t, u.token, p, hidden, flags('userManagement'), 'correct-horse-1');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { manages: manages(res.body.manages.id, p, hidden, flags('userManagement')) });
    assert.equal(count(t, 'manages', 'parent_role_id = ? AND child_role_id = ? AND user_management = 1', p, hidden), 1);
    // and now the child is in reach
    const q = await t.request('POST', '/v1/role/query', { token: u.token, body: { filter: { id: [hidden] } } });
    assert.equal(q.body.role.length, 1);
    t.close();
  });

  test('security: a wrong password, an unknown role and a role without password all answer 403 alike; no right over P is 403', async () => {
    const { t, p, u, hidden } = await world();
    const before = snapshot(t);
    const wrong = assertError(await upsert(t, u.token, p, hidden, NONE, 'wrong-horse-1'), 403, 'ROLE_PASSWORD_INCORRECT');
    assert.equal(wrong.message, `childRolePassword is incorrect for role ${hidden}`);
    const noPassword = addRole(t, 'open');
    assert.equal(assertError(await upsert(t, u.token, p, noPassword, NONE, 'anything-at-all'), 403, 'ROLE_PASSWORD_INCORRECT').message,
      `childRolePassword is incorrect for role ${noPassword}`);
    assert.equal(assertError(await upsert(t, u.token, p, 98765, NONE, 'anything-at-all'), 403, 'ROLE_PASSWORD_INCORRECT').message,
      'childRolePassword is incorrect for role 98765');
    const [q] = addChild(t, p, allBut('roleManagement'));
    assert.equal(assertError(await upsert(t, u.token, q, hidden, NONE, 'correct-horse-1'), 403, 'FORBIDDEN').message,
      `missing right: direct or indirect roleManagement over role ${q}`);
    const stranger = await userIn(t, addRole(t));
    assertError(await upsert(t, stranger.token, p, hidden, NONE, 'correct-horse-1'), 404, 'NOT_FOUND');
    assert.deepEqual(snapshot(t).filter((r) => r.child_role_id !== q), before);
    t.close();
  });

  test('throttle: the 6th wrong password for a role within 15 minutes is 429 with the exact retryAfter; a right one does not count', async () => {
    const { t, p, u, hidden } = await world();
    // a fresh access token each time: they live 10 minutes and the clock moves on
    const attempt = async (password: string) => upsert(t, await t.token(u.id), p, hidden, NONE, password);
    const t0 = t.clock.now();
    assert.equal((await attempt('correct-horse-1')).status, 200, 'a right password is no failure');
    for (let i = 0; i < 5; i++) {
      t.clock.set(t0 + i * 60_000);
      assertError(await attempt(`wrong-${i}-xxxxxxx`), 403, 'ROLE_PASSWORD_INCORRECT');
    }
    t.clock.set(t0 + 300_000);
    for (const password of ['wrong-again-xx', 'correct-horse-1']) {
      const res = await attempt(password);
      const body = assertError(res, 429, 'TOO_MANY_PASSWORD_CHECKS');
      // the oldest failure (t0) ages out at t0 + 15 min: 600 s from now
      assert.deepEqual(body, {
        statusCode: 429, error: 'Too Many Requests', code: 'TOO_MANY_PASSWORD_CHECKS',
        message: `too many wrong passwords for role ${hidden}: try again in 600 s`, retryAfter: 600,
      });
      assert.equal(res.headers.get('retry-after'), '600');
    }
    t.clock.set(t0 + 900_000 - 1);
    assert.equal(assertError(await attempt('correct-horse-1'), 429, 'TOO_MANY_PASSWORD_CHECKS').retryAfter, 1);
    t.clock.set(t0 + 900_000);
    assert.equal((await attempt('correct-horse-1')).status, 200);
    // the throttle is per role: another role is unaffected
    const other = addRole(t, 'other', NONE, await hashSecret('other-secret-1'));
    assert.equal((await upsert(t, await t.token(u.id), p, other, NONE, 'other-secret-1')).status, 200);
    t.close();
  });
});

describe('manages query and deprecated GET', () => {
  async function world() {
    const t = await makeTestApp();
    const [a, ra] = addChild(t, ROOT_ROLE_ID);
    const [b, ab] = addChild(t, a, flags('viewManagement'));
    const [c, ac] = addChild(t, a);
    const bc = addManages(t, b, c, flags('alarmManagement'));
    const z = addRole(t);
    const [, zx] = addChild(t, z);
    const u = await userIn(t, a);
    return { t, a, b, c, z, ra, ab, ac, bc, zx, u };
  }

  test('happy: id, ids and * select parents within reach; filters; {} or no body', async () => {
    const { t, a, b, c, ab, ac, bc, u } = await world();
    const q = (path: string, body?: unknown) => t.request('POST', `/v1/role/${path}/manages/query`, { token: u.token, body });
    const expectAll = [manages(ab, a, b, flags('viewManagement')), manages(ac, a, c), manages(bc, b, c, flags('alarmManagement'))];
    assert.deepEqual((await q('*', {})).body, { manages: expectAll });
    assert.deepEqual((await q('*')).body, { manages: expectAll });
    assert.deepEqual((await q(`${a}`, {})).body, { manages: expectAll.slice(0, 2) });
    assert.deepEqual((await q(`${b},${a}`, { filter: { childRoleId: [c] } })).body, { manages: [expectAll[1], expectAll[2]] });
    assert.deepEqual((await q('*', { filter: { id: [bc, 999], parentRoleId: [b] } })).body, { manages: [expectAll[2]] });
    assert.deepEqual((await q('*', { filter: { id: [] } })).body, { manages: [] });
    t.close();
  });

  test('security: a path role outside reach is 404 (even with visible ones); * never lists foreign relations', async () => {
    const { t, a, z, ra, zx, u } = await world();
    assert.equal(assertError(await t.request('POST', `/v1/role/${a},${z}/manages/query`, { token: u.token, body: {} }), 404, 'NOT_FOUND').message, `role ${z} not found`);
    assertError(await t.request('POST', `/v1/role/${ROOT_ROLE_ID}/manages/query`, { token: u.token, body: {} }), 404, 'NOT_FOUND');
    const all = await t.request('POST', '/v1/role/*/manages/query', { token: u.token, body: {} });
    const ids = all.body.manages.map((m: { id: number }) => m.id);
    assert.ok(!ids.includes(ra) && !ids.includes(zx));
    t.close();
  });

  test('validation: bad path segment and filters', async () => {
    const { t, u } = await world();
    assert.equal(assertError(await t.request('POST', '/v1/role/1;2/manages/query', { token: u.token, body: {} }), 400, 'BAD_REQUEST').message.split(':')[0], 'path.parentRoleId');
    assert.equal(assertError(await t.request('POST', '/v1/role/*/manages/query', { token: u.token, body: { filter: { child: [1] } } }), 400, 'BAD_REQUEST').message, 'filter.child: unknown field');
    t.close();
  });

  test('deprecated GET answers like the query with Deprecation and Link headers', async () => {
    const { t, a, b, c, ac, bc, u } = await world();
    const res = await t.request('GET', `/v1/role/${a},${b}/manages?childRoleId=${c}`, { token: u.token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('deprecation'), 'true');
    assert.equal(res.headers.get('link'), `</v1/role/${a},${b}/manages/query>; rel="successor-version"`);
    assert.deepEqual(res.body, { manages: [manages(ac, a, c), manages(bc, b, c, flags('alarmManagement'))] });
    const star = await t.request('GET', `/v1/role/*/manages?id=${bc}`, { token: u.token });
    assert.deepEqual(star.body, { manages: [manages(bc, b, c, flags('alarmManagement'))] });
    assert.equal(star.headers.get('link'), '</v1/role/*/manages/query>; rel="successor-version"');
    assertError(await t.request('GET', `/v1/role/${a}/manages?parentRoleId=1`, { token: u.token }), 400, 'BAD_REQUEST');
    t.close();
  });
});

describe('PUT /v1/role/{parentRoleId}/manages/{managesId}', () => {
  test('happy: one id -> object; several -> array in request order', async () => {
    const t = await makeTestApp();
    const [p] = addChild(t, ROOT_ROLE_ID, NONE, flags('roleManagement'));
    const [c1, m1] = addChild(t, p);
    const [c2, m2] = addChild(t, p);
    const u = await userIn(t, p);
    const one = await t.request('PUT', `/v1/role/${p}/manages/${m1}`, { token: u.token, body: flags('reportManagement') });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, { manages: manages(m1, p, c1, flags('reportManagement')) });
    const two = await t.request('PUT', `/v1/role/${p}/manages/${m2},${m1}`, { token: u.token, body: ALL });
    assert.deepEqual(two.body, { manages: [manages(m2, p, c2, ALL), manages(m1, p, c1, ALL)] });
    assert.equal(count(t, 'manages', 'parent_role_id = ? AND role_management = 1 AND report_management = 1', p), 2);
    t.close();
  });

  test('security: needs roleManagement over P; a relation of another parent is 404 and nothing is written', async () => {
    const t = await makeTestApp();
    const [g] = addChild(t, ROOT_ROLE_ID);
    const [p] = addChild(t, g, allBut('roleManagement'));
    const [, m] = addChild(t, p);
    const [, other] = addChild(t, g);
    const u = await userIn(t, g);
    assert.equal(assertError(await t.request('PUT', `/v1/role/${p}/manages/${m}`, { token: u.token, body: ALL }), 403, 'FORBIDDEN').message,
      `missing right: direct or indirect roleManagement over role ${p}`);
    const admin = (path: string) => t.request('PUT', path, { token: t.adminToken, body: ALL });
    const [q] = addChild(t, ROOT_ROLE_ID, flags('roleManagement'));
    const [, qm] = addChild(t, q);
    assert.equal(assertError(await admin(`/v1/role/${q}/manages/${qm},${other}`), 404, 'NOT_FOUND').message, `manages relation ${other} of role ${q} not found`);
    assert.equal(count(t, 'manages', 'id IN (?, ?) AND alarm_management = 1', qm, other), 0, 'all or nothing');
    const stranger = await userIn(t, addRole(t));
    assertError(await t.request('PUT', `/v1/role/${p}/manages/${m}`, { token: stranger.token, body: ALL }), 404, 'NOT_FOUND');
    t.close();
  });
});
