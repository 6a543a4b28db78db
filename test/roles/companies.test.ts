// Companies: isCompany/uuid on roles, GET /v1/company, and the companyId filters of role and device queries.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID, type TestApp } from '../support/app.ts';
import { ALL, NONE, addChild, addDevice, addManages, addMonitors, addRole, flags, row, userIn } from './fixtures.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function markCompany(t: TestApp, roleId: number): Promise<string> {
  await t.deps.db.run(sql`UPDATE roles SET is_company = 1, uuid = coalesce(uuid, ${randomUUID()}) WHERE id = ${roleId}`);
  return (await row(t, 'SELECT uuid FROM roles WHERE id = ?', roleId)).uuid;
}

/**
 * root -> A (company) -> R1 -> R2 ;  root -> B (company) -> R3 ;  root -> X (company) with X -> R1 as well ;  root -> Y.
 * u is a member of R2: companies A and X manage R2 through R1; B does not. Devices: dA on A, d1 on R1, d2 on R2, d3 on R3,
 * dY on Y. u reads d2 only.
 */
async function world() {
  const t = await makeTestApp();
  const [A] = await addChild(t, ROOT_ROLE_ID, ALL, NONE, 'company A');
  const [R1] = await addChild(t, A, ALL, NONE, 'r1');
  const [R2] = await addChild(t, R1, NONE, NONE, 'r2');
  const [B] = await addChild(t, ROOT_ROLE_ID, ALL, NONE, 'company B');
  const [R3] = await addChild(t, B, ALL, NONE, 'r3');
  const [X] = await addChild(t, ROOT_ROLE_ID, ALL, NONE, 'company X');
  await addManages(t, X, R1);
  const [Y] = await addChild(t, ROOT_ROLE_ID, ALL, NONE, 'y');
  const uuids = { A: await markCompany(t, A), B: await markCompany(t, B), X: await markCompany(t, X) };
  const u = await userIn(t, R2);
  const dev = async (roleId: number) => { const d = await addDevice(t, { name: `on-${roleId}` }); await addMonitors(t, roleId, d, { mm: true }); return d; };
  const devices = { dA: await dev(A), d1: await dev(R1), d2: await dev(R2), d3: await dev(R3), dY: await dev(Y) };
  return { t, A, B, X, Y, R1, R2, R3, u, uuids, ...devices };
}

const companies = async (t: TestApp, token: string, q = '') => {
  const res = await t.request('GET', `/v1/company${q}`, { token });
  assert.equal(res.status, 200, res.text);
  return res.body;
};

describe('GET /v1/company', () => {
  test('happy: the companies the user is a direct or indirect member of, through manages chains, sorted by id', async () => {
    const { t, A, X, R1, u, uuids } = await world();
    assert.deepEqual(await companies(t, u.token), { company: [{ id: A, uuid: uuids.A, name: 'company A' }, { id: X, uuid: uuids.X, name: 'company X' }] });
    // a member role that is itself a company counts (direct membership)
    const r1uuid = await markCompany(t, R1);
    assert.deepEqual((await companies(t, u.token)).company.map((c: { id: number }) => c.id), [A, R1, X]);
    assert.equal((await companies(t, u.token)).company[1].uuid, r1uuid);
    // root's members sit above every company: root is no company, and companies below are not "theirs" as members
    assert.deepEqual(await companies(t, t.adminToken), { company: [] });
    await t.close();
  });

  test('happy: id, uuid and roleId filters combine with "and"; repeated or comma-separated', async () => {
    const { t, A, X, R1, R2, u, uuids } = await world();
    const ids = async (q: string) => (await companies(t, u.token, q)).company.map((c: { id: number }) => c.id);
    assert.deepEqual(await ids(`?id=${X}`), [X]);
    assert.deepEqual(await ids(`?id=${A},${X}&id=999`), [A, X]);
    assert.deepEqual(await ids(`?uuid=${uuids.A.toUpperCase()}`), [A]);
    assert.deepEqual(await ids(`?uuid=${uuids.B}`), [], 'a company the user is no member of is never listed');
    assert.deepEqual(await ids(`?roleId=${R2}`), [A, X]);
    assert.deepEqual(await ids(`?roleId=${R1}&id=${A}`), [A]);
    assert.deepEqual(await ids(`?roleId=${A}`), [], 'a company does not manage itself');
    await t.close();
  });

  test('security: roleId naming a role the user cannot see matches nothing (no hint that a company manages it)', async () => {
    const { t, A, X, R1, u } = await world();
    const hidden = await addRole(t, 'hidden below A');
    await addManages(t, A, hidden);
    assert.deepEqual(await companies(t, u.token, `?roleId=${hidden}`), { company: [] });
    assert.deepEqual(await companies(t, u.token, '?roleId=987654'), { company: [] });
    // the same user sees R1 (a company's chain names it), so the filter works there
    assert.deepEqual((await companies(t, u.token, `?roleId=${R1}`)).company.map((c: { id: number }) => c.id), [A, X]);
    await t.close();
  });

  test('validation: viewId / viewInsightsVersion -> 400 NOT_SUPPORTED; bad ids, bad uuids, unknown parameters -> 400', async () => {
    const { t, u } = await world();
    const get = (q: string) => t.request('GET', `/v1/company?${q}`, { token: u.token });
    assert.equal(assertError(await get('viewId=1'), 400, 'NOT_SUPPORTED').message, 'query.viewId: not supported (a gridkeeper appliance has no views)');
    assertError(await get('viewInsightsVersion=2'), 400, 'NOT_SUPPORTED');
    assert.equal(assertError(await get('id=x'), 400, 'BAD_REQUEST').message, 'query.id: expected integers >= 0');
    assert.equal(assertError(await get('uuid=not-a-uuid'), 400, 'BAD_REQUEST').message, 'query.uuid: expected uuids');
    assert.equal(assertError(await get('companyId=1'), 400, 'BAD_REQUEST').message, 'query.companyId: unknown field');
    assertError(await t.request('GET', '/v1/company'), 401, 'UNAUTHENTICATED');
    await t.close();
  });
});

describe('roles as companies', () => {
  test('happy: POST /v1/role with isCompany draws a uuid; role objects carry isCompany (and uuid only for companies)', async () => {
    const t = await makeTestApp();
    const res = await t.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, {
      token: t.adminToken, body: { manages: ALL, role: { name: 'acme', selfRights: NONE, isCompany: true } },
    });
    assert.equal(res.status, 200, res.text);
    const { id, uuid } = res.body.role;
    assert.match(uuid, UUID);
    assert.deepEqual(res.body.role, { id, name: 'acme', selfRights: NONE, userRights: {}, isCompany: true, uuid });
    assert.deepEqual(await row(t, 'SELECT is_company, uuid FROM roles WHERE id = ?', id), { is_company: 1, uuid });
    const plain = await t.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, {
      token: t.adminToken, body: { manages: ALL, role: { name: 'plain', selfRights: NONE } },
    });
    assert.deepEqual(plain.body.role, { id: plain.body.role.id, name: 'plain', selfRights: NONE, userRights: {}, isCompany: false });
    const listed = await t.request('POST', '/v1/role/query', { token: t.adminToken, body: { filter: { id: [id, plain.body.role.id] } } });
    assert.deepEqual(listed.body.role.map((r: { isCompany: boolean; uuid?: string }) => [r.isCompany, r.uuid]), [[true, uuid], [false, undefined]]);
    await t.close();
  });

  test('happy: PUT toggles isCompany; the uuid is stable across toggles; absent isCompany keeps the mark', async () => {
    const t = await makeTestApp();
    const [r] = await addChild(t, ROOT_ROLE_ID, ALL);
    const put = (body: Record<string, unknown>) => t.request('PUT', `/v1/role/${r}`, { token: t.adminToken, body: { name: 'r', selfRights: NONE, ...body } });
    const on = await put({ isCompany: true });
    assert.equal(on.status, 200, on.text);
    const uuid = on.body.role.uuid;
    assert.match(uuid, UUID);
    assert.equal((await put({})).body.role.uuid, uuid, 'absent isCompany keeps the mark');
    const off = await put({ isCompany: false });
    assert.deepEqual(off.body.role, { id: r, name: 'r', selfRights: NONE, userRights: {}, isCompany: false });
    assert.deepEqual(await row(t, 'SELECT is_company, uuid FROM roles WHERE id = ?', r), { is_company: 0, uuid });
    assert.equal((await put({ isCompany: true })).body.role.uuid, uuid, 'marked again: the same uuid');
    await t.close();
  });

  test('rights: changing isCompany needs roleManagement over the role, like its name; 400 for a non-boolean', async () => {
    const t = await makeTestApp();
    const [p] = await addChild(t, ROOT_ROLE_ID, ALL);
    const [r] = await addChild(t, p, flags('userManagement'));
    const u = await userIn(t, p);
    const res = await t.request('PUT', `/v1/role/${r}`, { token: u.token, body: { name: 'r', selfRights: NONE, isCompany: true } });
    assertError(res, 403, 'FORBIDDEN');
    assert.deepEqual(await row(t, 'SELECT is_company, uuid FROM roles WHERE id = ?', r), { is_company: 0, uuid: null });
    const created = await t.request('POST', `/v1/role?parentRoleId=${r}`, { token: u.token, body: { manages: ALL, role: { name: 'c', selfRights: NONE, isCompany: true } } });
    assertError(created, 403, 'FORBIDDEN');
    assert.equal(assertError(await t.request('PUT', `/v1/role/${r}`, { token: t.adminToken, body: { name: 'r', selfRights: NONE, isCompany: 'yes' } }), 400, 'BAD_REQUEST').message,
      'isCompany: expected true or false');
    await t.close();
  });
});

describe('companyId filters', () => {
  test('role query and GET /v1/role: roles directly or indirectly managed by the companies', async () => {
    const { t, A, B, X, R1, R2, R3, u } = await world();
    const q = async (token: string, companyId: unknown) =>
      (await t.request('POST', '/v1/role/query', { token, body: { filter: { companyId } } })).body.role.map((r: { id: number }) => r.id);
    assert.deepEqual(await q(t.adminToken, A), [R1, R2]);
    assert.deepEqual(await q(t.adminToken, [B]), [R3]);
    assert.deepEqual(await q(t.adminToken, [A, B]), [R1, R2, R3]);
    assert.deepEqual(await q(t.adminToken, [X]), [R1, R2]);
    assert.deepEqual(await q(t.adminToken, [R1]), [], 'a role that is no company manages nothing as a company');
    assert.deepEqual(await q(u.token, [A]), [R2], 'only roles the user reaches');
    assert.deepEqual(await q(u.token, [B]), [], 'a company the user cannot see: nothing');
    assert.deepEqual(await q(u.token, [987654]), [], 'the same answer as for a company that does not exist');
    const get = await t.request('GET', `/v1/role?companyId=${A},${B}`, { token: t.adminToken });
    assert.deepEqual(get.body.role.map((r: { id: number }) => r.id), [R1, R2, R3]);
    // a company below the user (in its reach, not one it belongs to) filters too, and is not listed as the user's company
    await markCompany(t, R1);
    const v = await userIn(t, A);
    assert.deepEqual(await q(v.token, [R1]), [R2]);
    assert.deepEqual((await companies(t, v.token)).company.map((c: { id: number }) => c.id), [A]);
    await t.close();
  });

  test('device query and GET /v1/device: devices directly or indirectly monitored by the companies', async () => {
    const { t, A, B, X, u, dA, d1, d2, d3 } = await world();
    const q = async (token: string, body: unknown) => {
      const res = await t.request('POST', '/v1/device/query', { token, body });
      assert.equal(res.status, 200, res.text);
      return res.body.device.map((d: { id: number }) => d.id);
    };
    assert.deepEqual(await q(t.adminToken, { filter: { companyId: [A] } }), [dA, d1, d2]);
    assert.deepEqual(await q(t.adminToken, { filter: { companyId: B } }), [d3]);
    assert.deepEqual(await q(t.adminToken, { companyId: [X] }), [d1, d2], 'top level too');
    assert.deepEqual(await q(t.adminToken, { companyId: [A], filter: { companyId: [X] } }), [d1, d2], 'both given: both hold');
    assert.deepEqual(await q(u.token, { filter: { companyId: [A] } }), [d2], 'only devices the user may read');
    assert.deepEqual(await q(u.token, { filter: { companyId: [B] } }), []);
    assert.deepEqual(await q(u.token, { filter: { companyId: [987654] } }), []);
    const get = await t.request('GET', `/v1/device?companyId=${B}&companyId=${X}`, { token: t.adminToken });
    assert.equal(get.status, 200, get.text);
    assert.deepEqual(get.body.device.map((d: { id: number }) => d.id), [d1, d2, d3]);
    await t.close();
  });
});
