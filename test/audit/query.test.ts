// POST /v1/audit/query: who sees which entries (root: all; others: what they can read today, and their own actions),
// device changes narrowed to readable properties, filters, keyset paging, validation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID, T0, type TestApp } from '../support/app.ts';
import { assertRequiresAuth, login } from '../support/auth-helpers.ts';
import { addChild, addMonitors, addDevice, addRole, flags, userIn, ALL } from '../roles/fixtures.ts';
import { allEntries } from './fixtures.ts';

async function query(t: TestApp, token: string, body: unknown = {}): Promise<any[]> {
  const res = await t.request('POST', '/v1/audit/query', { token, body });
  assert.equal(res.status, 200, res.text);
  return res.body.entries;
}

const ok = (res: { status: number; text: string }, status = 200) => assert.equal(res.status, status, res.text);

/**
 * Root -> A -> A1 (A holds userManagement over A1 through the relation), root -> B. Device d1 is monitored by A (with
 * monitorManagement) and by A1 (reads `name` only); dB by B; a controller ctrl by A1's tenant A. Entries are made by
 * the admin and by the users.
 */
async function scene() {
  const t = await makeTestApp();
  const [A] = await addChild(t, ROOT_ROLE_ID, ALL);
  const [A1] = await addChild(t, A, flags('userManagement'));
  const [B] = await addChild(t, ROOT_ROLE_ID, ALL);
  const a = await userIn(t, A);
  const a1 = await userIn(t, A1);
  const b = await userIn(t, B);
  const d1 = await addDevice(t, { name: 'meter', serial: 'SN-1' });
  await addMonitors(t, A, d1, { mm: true });
  await addMonitors(t, A1, d1, { reads: ['name'] });
  const dB = await addDevice(t, { name: 'b-meter' });
  await addMonitors(t, B, dB, { mm: true });
  const ctrl = await addDevice(t, { nodeId: 'ctrl-a', nodeType: 'smartgridController' });
  await addMonitors(t, A, ctrl, { mm: true });
  const admin = t.adminToken;
  const as = (token: string, method: string, path: string, body?: unknown, status = 200) => t.request(method, path, { token, body }).then((r) => ok(r, status));
  const step = () => t.clock.advance(1000);
  await as(admin, 'PUT', `/v1/role/${A}`, { name: 'A renamed', selfRights: ALL }); step();                              // role.update A
  await as(admin, 'PUT', `/v1/role/${A1}`, { name: 'A1 renamed', selfRights: flags() }); step();                        // role.update A1
  await as(admin, 'PATCH', `/v1/device/${d1}`, [{ op: 'replace', path: '/name', value: 'main' }, { op: 'replace', path: '/serial', value: 'SN-2' }]); step();
  await as(admin, 'PUT', `/v1/role/${A1}/member?userEmail=x@example.test&password=x-password-123`, {}); step();          // member.put A1
  await as(b.token, 'PATCH', `/v1/device/${dB}`, [{ op: 'add', path: '/b', value: 1 }]); step();                        // b's own
  await as(admin, 'PUT', `/v1/user/${encodeURIComponent(a1.email)}/tier`, { tier: 'free' }, 204); step();              // user.tier a1
  ok(await login(t, a1.email, 'wrong-password-1'), 401); step();                                                        // failed login a1
  const [claimed, loose] = (await t.request('POST', '/v1/license', { token: admin, body: { type: 'residential', duration: 10, count: 2 } })).body.licenses;
  step();
  await as(a.token, 'POST', '/v1/license/claim', { licenseKey: claimed.key, nodeId: 'ctrl-a' }); step();                // license.claim by a
  return { t, A, A1, B, a, a1, b, d1, dB, ctrl, claimed, loose };
}

const summary = (entries: any[]) => entries.map((e) => `${e.action} ${e.target.kind}:${e.target.id}`);

describe('POST /v1/audit/query: visibility', () => {
  it('a root member sees every entry, newest first', async () => {
    const s = await scene();
    const entries = await query(s.t, s.t.adminToken);
    assert.deepEqual(summary(entries), [
      `license.claim license:${s.claimed.id}`,
      `license.create license:${s.loose.id}`,
      `license.create license:${s.claimed.id}`,
      `auth.login.failed user:${s.a1.id}`,
      `user.tier user:${s.a1.id}`,
      `device.patch device:${s.dB}`,
      `member.put member:${entries[6].target.id}`,
      `device.patch device:${s.d1}`,
      `role.update role:${s.A1}`,
      `role.update role:${s.A}`,
    ]);
    assert.deepEqual(entries.map((e) => e.id), [...entries.map((e) => e.id)].sort((x, y) => y - x));
    await s.t.close();
  });

  it('others see entries about what they can read today, and their own actions; device changes only for readable properties', async () => {
    const s = await scene();
    const memberEntry = (await query(s.t, s.t.adminToken, { filter: { action: 'member.put' } }))[0];
    // a: reaches A and A1, holds userManagement over A1, reads d1 and ctrl (monitorManagement), own claim
    const forA = await query(s.t, s.a.token);
    assert.deepEqual(summary(forA), [
      `license.claim license:${s.claimed.id}`,
      // a license linked to a controller a can read: its whole history
      `license.create license:${s.claimed.id}`,
      `member.put member:${memberEntry.target.id}`,
      `device.patch device:${s.d1}`,
      `role.update role:${s.A1}`,
      `role.update role:${s.A}`,
    ]);
    assert.deepEqual(forA.find((e) => e.action === 'device.patch').changes, { name: { before: 'meter', after: 'main' }, serial: { before: 'SN-1', after: 'SN-2' } });
    // a1: reaches A1 only (no userManagement over it, not the controller), reads `name` of d1, and sees entries about
    // itself as a user
    const forA1 = await query(s.t, s.a1.token);
    assert.deepEqual(summary(forA1), [
      `auth.login.failed user:${s.a1.id}`,
      `user.tier user:${s.a1.id}`,
      `device.patch device:${s.d1}`,
      `role.update role:${s.A1}`,
    ]);
    assert.deepEqual(forA1.find((e) => e.action === 'device.patch').changes, { name: { before: 'meter', after: 'main' } });
    // b: only its own device and action — nothing of tenant A, no unclaimed license
    assert.deepEqual(summary(await query(s.t, s.b.token)), [`device.patch device:${s.dB}`]);
    // the new user x sees its own membership, and as a member of A1 what a1 sees of A1 and d1
    const x = (await s.t.deps.db.get(sql<{ id: number }>`SELECT id FROM users WHERE email = 'x@example.test'`))!.id;
    assert.deepEqual(summary(await query(s.t, await s.t.token(x))), [`member.put member:${memberEntry.target.id}`, `device.patch device:${s.d1}`, `role.update role:${s.A1}`]);

    // rights are those of today: without its monitors relation a1 no longer sees d1's entries
    await s.t.deps.db.run(sql`DELETE FROM monitors WHERE role_id = ${s.A1} AND device_id = ${s.d1}`);
    assert.deepEqual(summary(await query(s.t, s.a1.token)), [`auth.login.failed user:${s.a1.id}`, `user.tier user:${s.a1.id}`, `role.update role:${s.A1}`]);
    // without the controller, a sees its own claim (its own action) but no longer the license's creation
    await s.t.deps.db.run(sql`DELETE FROM monitors WHERE role_id = ${s.A} AND device_id = ${s.ctrl}`);
    await addMonitors(s.t, await addRole(s.t, 'keeper'), s.ctrl, { mm: true });
    const later = summary(await query(s.t, s.a.token));
    assert.ok(later.includes(`license.claim license:${s.claimed.id}`));
    assert.ok(!later.includes(`license.create license:${s.claimed.id}`));
    await s.t.close();
  });

  it('own actions on a device no longer readable show no property values', async () => {
    const t = await makeTestApp();
    const role = await addRole(t, 'r');
    const u = await userIn(t, role);
    const d = await addDevice(t, { name: 'a', pin: '1234' });
    const rel = await addMonitors(t, role, d, { mm: true });
    await addMonitors(t, await addRole(t, 'other'), d, { mm: true });
    ok(await t.request('PATCH', `/v1/device/${d}`, { token: u.token, body: [{ op: 'replace', path: '/pin', value: '9999' }] }));
    await t.deps.db.run(sql`DELETE FROM monitors WHERE id = ${rel}`);
    const [entry] = await query(t, u.token);
    assert.equal(entry.action, 'device.patch');
    assert.deepEqual(entry.changes, {});
    await t.close();
  });

  it('entries about one\'s own membership are visible while it lasts; a role\'s creation to those who reach the parent', async () => {
    const t = await makeTestApp();
    const [A] = await addChild(t, ROOT_ROLE_ID, ALL, ALL);
    const a = await userIn(t, A);
    const outsider = await userIn(t, await addRole(t, 'elsewhere'));
    const created = await t.request('POST', `/v1/role?parentRoleId=${A}`, { token: a.token, body: { manages: ALL, role: { name: 'child', selfRights: ALL } } });
    ok(created);
    const child = created.body.role.id;
    const put = await t.request('PUT', `/v1/role/${child}/member?userEmail=${encodeURIComponent(outsider.email)}`, { token: a.token, body: {} });
    ok(put);
    // the outsider now reaches `child`: it sees its membership, not the creation (made in A, which it does not reach)
    assert.deepEqual(summary(await query(t, outsider.token)), [`member.put member:${put.body.member.id}`]);
    ok(await t.request('DELETE', `/v1/role/${child}/member/${put.body.member.id}`, { token: a.token }));
    // removed: neither the membership's entries nor anything of a's tenant
    assert.deepEqual(await query(t, outsider.token), []);
    assert.deepEqual(summary(await query(t, a.token)), [
      `member.delete member:${put.body.member.id}`, `member.put member:${put.body.member.id}`, `role.create role:${child}`,
    ]);
    await t.close();
  });
});

describe('POST /v1/audit/query: filters and paging', () => {
  it('filters by actor, action, target and time; pages with afterId without gaps or repeats', async () => {
    const s = await scene();
    const { t } = s;
    assert.deepEqual(summary(await query(t, t.adminToken, { filter: { actorId: s.a.id } })), [`license.claim license:${s.claimed.id}`]);
    assert.deepEqual(summary(await query(t, t.adminToken, { filter: { action: 'role.update' } })), [`role.update role:${s.A1}`, `role.update role:${s.A}`]);
    assert.deepEqual(summary(await query(t, t.adminToken, { filter: { targetKind: 'device', targetId: s.d1 } })), [`device.patch device:${s.d1}`]);
    assert.deepEqual(summary(await query(t, t.adminToken, { filter: { targetKind: 'license', targetId: s.loose.id } })), [`license.create license:${s.loose.id}`]);
    // from inclusive, to exclusive: the second and third entries (one second apart from T0)
    const from = new Date(T0 + 1000).toISOString();
    const to = new Date(T0 + 3000).toISOString().replace('Z', '+00:00');
    assert.deepEqual(summary(await query(t, t.adminToken, { filter: { from, to } })), [`device.patch device:${s.d1}`, `role.update role:${s.A1}`]);
    // filters combine with the visibility rules: b filtering on a's device gets nothing
    assert.deepEqual(await query(t, s.b.token, { filter: { targetKind: 'device', targetId: s.d1 } }), []);

    const all = await allEntries(t);
    const paged: any[] = [];
    let afterId: number | undefined;
    for (let i = 0; i < 20; i++) {
      const page = await query(t, t.adminToken, { limit: 3, ...(afterId !== undefined ? { afterId } : {}) });
      paged.push(...page);
      if (page.length < 3) break;
      afterId = page.at(-1).id;
    }
    assert.deepEqual(paged, all);
    assert.equal(all.length, 10);
    await s.t.close();
  });

  it('validation: 400 for bad filters, limits and times; 401 without an access token', async () => {
    const t = await makeTestApp();
    for (const [body, message] of [
      [{ filter: { targetKind: 'planet' } }, /filter\.targetKind/],
      [{ filter: { targetId: 'not-a-uuid' } }, /filter\.targetId/],
      [{ filter: { from: 'yesterday' } }, /filter\.from/],
      [{ filter: { actorId: -1 } }, /filter\.actorId/],
      [{ limit: 0 }, /limit/],
      [{ limit: 1001 }, /limit/],
      [{ afterId: 1.5 }, /afterId/],
      [{ filter: { colour: 'red' } }, /colour/],
      [{ filter: [] }, /filter/],
    ] as const) {
      const res = await t.request('POST', '/v1/audit/query', { token: t.adminToken, body });
      assert.match(assertError(res, 400, 'BAD_REQUEST').message, message, JSON.stringify(body));
    }
    ok(await t.request('POST', '/v1/audit/query', { token: t.adminToken }));
    await assertRequiresAuth(t, 'POST', '/v1/audit/query', {});
    await t.close();
  });
});
