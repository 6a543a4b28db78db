// Check-then-write races, 50 concurrent clients each, on the backend under test (test/run.mjs runs this file on SQLite,
// then on PostgreSQL, where each app has its own database and a pool of 4 connections, so the requests really run
// concurrently and write units are SERIALIZABLE with retry; docs/api.md, src/db/postgres.ts). For every race: exactly
// the winners the rule allows, every loser the contract's error, never a 5xx, and the database consistent afterwards.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { assertError, makeTestApp, ROOT_ROLE_ID, T0, type TestApp, type TestResponse } from '../support/app.ts';
import { ALL, addChild, count, row, rows, userIn } from '../roles/fixtures.ts';
import { addDevice, addMonitors, iso, storedDevice, storedMonitors } from '../devices/fixtures.ts';
import { createLicense, datalinks, licenseRow } from '../licenses/fixtures.ts';

const N = 50;

/** A fresh app for one race (some races take the admin out of the root role); closed when the test ends. */
async function appFor(t: { after(fn: () => Promise<void>): void }): Promise<TestApp> {
  const app = await makeTestApp();
  t.after(() => app.close());
  return app;
}

/** Runs the requests all at once; none may be a 5xx (a deadlock, an unretried serialization failure, a defect). */
async function race(requests: Array<() => Promise<TestResponse>>): Promise<TestResponse[]> {
  const results = await Promise.all(requests.map((r) => r()));
  const broken = results.filter((r) => r.status >= 500);
  assert.deepEqual(broken.map((r) => `${r.status} ${r.text}`), [], `${broken.length} of ${results.length} answers were 5xx`);
  return results;
}

const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
const statuses = (rs: readonly TestResponse[]) => JSON.stringify(rs.map((r) => r.status));
const FLAGS_ALL = { roleManagement: true, userManagement: true, viewManagement: true, deviceManagement: true, reportManagement: true, alarmManagement: true };

/** Is there a cycle in the stored manages graph? (a bounded walk from every edge; the same SQL on both backends) */
async function cyclesInManages(app: TestApp): Promise<number> {
  return (await app.deps.db.get(sql<{ n: number }>`
    WITH RECURSIVE walk(start_id, id, depth) AS (
      SELECT parent_role_id, child_role_id, 1 FROM manages
      UNION ALL
      SELECT w.start_id, m.child_role_id, w.depth + 1 FROM walk w JOIN manages m ON m.parent_role_id = w.id WHERE w.depth < 64
    )
    SELECT count(*) AS n FROM walk WHERE start_id = id`))!.n;
}

describe(`check-then-write races, ${N} concurrent clients each`, () => {
  test('If-Unmodified-Since: one PATCH wins, the others 412 DEVICE_MODIFIED, the winner\'s change stored once', async (t) => {
    const app = await appFor(t);
    const d = await addDevice(app, { owner: 'nobody' }, T0 - 60_000);
    await addMonitors(app, ROOT_ROLE_ID, d, { mm: true });
    const results = await race(times(N, (i) => () => app.request('PATCH', `/v1/device/${d}`, {
      token: app.adminToken, body: [{ op: 'replace', path: '/owner', value: `client-${i}` }],
      headers: { 'if-unmodified-since': iso(T0 - 60_000) },
    })));
    const won = results.filter((r) => r.status === 200);
    assert.equal(won.length, 1, statuses(results));
    for (const r of results.filter((x) => x.status !== 200)) assertError(r, 412, 'DEVICE_MODIFIED');
    const stored = (await storedDevice(app, d))!;
    assert.deepEqual(stored.properties, won[0].body.device.properties);
    assert.equal(stored.lastUpdate, T0);
    assert.equal(await count(app, 'audit_log', "action = 'device.patch'"), 1, 'one audit entry: one change');
  });

  test('last root member: two members removing themselves, 25 times each: one 200, the other side 409 LAST_ROOT_MEMBER', async (t) => {
    const app = await appFor(t);
    const adminMember = (await row(app, 'SELECT id FROM members WHERE role_id = ? AND user_id = ?', ROOT_ROLE_ID, app.adminId)).id as number;
    const second = await userIn(app, ROOT_ROLE_ID);
    const sides = [{ token: app.adminToken, member: adminMember }, { token: second.token, member: second.memberIds[0] }];
    const results = await race(times(N, (i) => () => {
      const side = sides[i % 2];
      return app.request('DELETE', `/v1/role/${ROOT_ROLE_ID}/member/${side.member}`, { token: side.token });
    }));
    const won = results.map((r, i) => ({ r, i })).filter(({ r }) => r.status === 200);
    assert.equal(won.length, 1, statuses(results));
    const winner = won[0].i % 2;
    results.forEach((r, i) => {
      if (i === won[0].i) return;
      // the loser's side is refused by the rule; the winner's repeats no longer see the root role (404)
      if (i % 2 === winner) assertError(r, 404, 'NOT_FOUND');
      else assertError(r, 409, 'LAST_ROOT_MEMBER');
    });
    assert.deepEqual(await rows(app, 'SELECT id FROM members WHERE role_id = ?', ROOT_ROLE_ID), [{ id: sides[1 - winner].member }]);
  });

  test('last monitorManagement: 25 + 25 PUTs taking it from both relations: one side 200, the other 409 LAST_MONITOR_MANAGEMENT', async (t) => {
    const app = await appFor(t);
    const [a] = await addChild(app, ROOT_ROLE_ID, ALL);
    const [b] = await addChild(app, ROOT_ROLE_ID, ALL);
    const d = await addDevice(app, { nodeId: 'watched' });
    const rels = [await addMonitors(app, a, d, { mm: true }), await addMonitors(app, b, d, { mm: true })];
    const roles = [a, b];
    const results = await race(times(N, (i) => () => app.request('PUT', `/v1/role/${roles[i % 2]}/monitors/${rels[i % 2]}`, {
      token: app.adminToken, body: { monitorManagement: false, reads: ['nodeId'], edits: [] },
    })));
    // the first to commit takes monitorManagement from its relation; its repeats change nothing (200), the other
    // relation's are refused: it holds the device's last monitorManagement
    const winner = results.findIndex((r) => r.status === 200) % 2;
    results.forEach((r, i) => {
      if (i % 2 === winner) assert.equal(r.status, 200, r.text);
      else assertError(r, 409, 'LAST_MONITOR_MANAGEMENT');
    });
    const stored = await storedMonitors(app, d);
    assert.deepEqual(stored.map((m) => [m.id, m.monitor_management]), [[rels[0], winner === 0 ? 0 : 1], [rels[1], winner === 1 ? 0 : 1]]);
  });

  test('last monitorManagement: 25 + 25 DELETEs of both relations: the device goes with the last one, exactly once', async (t) => {
    const app = await appFor(t);
    const [a] = await addChild(app, ROOT_ROLE_ID, ALL);
    const [b] = await addChild(app, ROOT_ROLE_ID, ALL);
    const d = await addDevice(app, { nodeId: 'doomed' });
    const rels = [await addMonitors(app, a, d, { mm: true }), await addMonitors(app, b, d, { mm: true })];
    const roles = [a, b];
    const results = await race(times(N, (i) => () => app.request('DELETE', `/v1/role/${roles[i % 2]}/monitors/${rels[i % 2]}`, { token: app.adminToken })));
    // one deletion of each relation succeeds; the later repeats find it (or the device) gone
    const ok = results.filter((r) => r.status === 200);
    assert.equal(ok.length, 2, statuses(results));
    for (const r of results.filter((x) => x.status !== 200)) assertError(r, 404, 'NOT_FOUND');
    assert.deepEqual(ok.map((r) => r.body.deletedNodeIds).sort((x, y) => x.length - y.length), [[], [d]], 'the device was deleted by exactly one');
    assert.equal(await count(app, 'devices', 'id = ?', d), 0);
    assert.equal(await count(app, 'monitors', 'device_id = ?', d), 0);
  });

  test('cycle refusal: A -> B against B -> A, and a ring of 5: only an acyclic subset stored, the rest 409 ROLE_CYCLE', async (t) => {
    const app = await appFor(t);
    const [a] = await addChild(app, ROOT_ROLE_ID, ALL);
    const [b] = await addChild(app, ROOT_ROLE_ID, ALL);
    const put = (parent: number, child: number) => () => app.request('PUT', `/v1/role/${parent}/manages?childRoleId=${child}`, { token: app.adminToken, body: FLAGS_ALL });

    // two opposite edges: one direction wins (every upsert of it answers the same relation), the other is a cycle
    const pair = await race(times(N, (i) => (i % 2 === 0 ? put(a, b) : put(b, a))));
    const winner = pair.findIndex((r) => r.status === 200) % 2;
    pair.forEach((r, i) => {
      if (i % 2 === winner) assert.equal(r.status, 200, r.text);
      else assertError(r, 409, 'ROLE_CYCLE');
    });
    assert.equal(new Set(pair.filter((r) => r.status === 200).map((r) => r.body.manages.id)).size, 1);
    assert.equal(await count(app, 'manages', '(parent_role_id = ? AND child_role_id = ?) OR (parent_role_id = ? AND child_role_id = ?)', a, b, b, a), 1);

    // a ring r0 -> r1 -> ... -> r4 -> r0, 10 clients per edge: any 4 edges are a path, all 5 a cycle
    const ring: number[] = [];
    for (let i = 0; i < 5; i++) ring.push((await addChild(app, ROOT_ROLE_ID, ALL))[0]);
    const edge = (i: number) => [ring[i % 5], ring[(i + 1) % 5]] as const;
    const results = await race(times(N, (i) => put(...edge(i))));
    const okEdges = new Set<number>();
    results.forEach((r, i) => {
      if (r.status === 200) okEdges.add(i % 5);
      else assertError(r, 409, 'ROLE_CYCLE');
    });
    assert.equal(okEdges.size, 4, statuses(results));
    // an edge is all 200 or all 409: the first upsert of an edge that is not refused makes the rest plain updates
    results.forEach((r, i) => assert.equal(r.status, okEdges.has(i % 5) ? 200 : 409, `edge ${i % 5}`));
    const stored = await rows(app, `SELECT parent_role_id AS p, child_role_id AS c FROM manages WHERE parent_role_id IN (${ring.join(', ')}) ORDER BY id`);
    assert.equal(stored.length, 4);
    assert.equal(await cyclesInManages(app), 0, 'the stored manages graph has no cycle');
  });

  test('50 different manages relations created at once: all 200, all stored (contention is no excuse for a 5xx)', async (t) => {
    const app = await appFor(t);
    const parents: number[] = [];
    for (let i = 0; i < 5; i++) parents.push((await addChild(app, ROOT_ROLE_ID, ALL))[0]);
    const children: number[] = [];
    for (let i = 0; i < 10; i++) children.push((await addChild(app, ROOT_ROLE_ID, ALL))[0]);
    // 5 x 10 distinct edges parent -> child: none closes a cycle, each conflicts with the others' rights checks
    const results = await race(times(N, (i) => () => app.request('PUT', `/v1/role/${parents[i % 5]}/manages?childRoleId=${children[Math.floor(i / 5)]}`, {
      token: app.adminToken, body: FLAGS_ALL,
    })));
    assert.deepEqual(results.filter((r) => r.status !== 200).map((r) => r.text), []);
    assert.equal(await count(app, 'manages', `parent_role_id IN (${parents.join(', ')})`), N);
  });

  test('license activation: one 200, the others 400 ALREADY_ACTIVATED; claim: one 200, the others 400 ALREADY_CLAIMED, one link', async (t) => {
    const app = await appFor(t);
    const license = await createLicense(app);
    const at = (i: number) => new Date(Date.UTC(2026, 1, 1) + i * 86_400_000).toISOString();
    const activations = await race(times(N, (i) => () => app.request('POST', '/v1/license/activate', {
      token: app.adminToken, body: { key: license.key, activationIso: at(i) },
    })));
    const won = activations.filter((r) => r.status === 200);
    assert.equal(won.length, 1, statuses(activations));
    for (const r of activations.filter((x) => x.status !== 200)) assertError(r, 400, 'ALREADY_ACTIVATED');
    assert.equal(new Date((await licenseRow(app, license.id))!.activation_date!).toISOString(), won[0].body.license.activationDate);

    // claims of another key to 5 controllers the admin manages (10 clients each)
    const controllers: { id: number; nodeId: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const nodeId = `ctrl-${i}`;
      const id = await addDevice(app, { nodeId, nodeType: 'smartgridController' });
      await addMonitors(app, ROOT_ROLE_ID, id, { mm: true });
      controllers.push({ id, nodeId });
    }
    const other = await createLicense(app);
    const claims = await race(times(N, (i) => () => app.request('POST', '/v1/license/claim', {
      token: app.adminToken, body: { licenseKey: other.key, nodeId: controllers[i % 5].nodeId },
    })));
    const claimed = claims.filter((r) => r.status === 200);
    assert.equal(claimed.length, 1, statuses(claims));
    for (const r of claims.filter((x) => x.status !== 200)) assertError(r, 400, 'ALREADY_CLAIMED');
    const links = await datalinks(app);
    assert.equal(links.length, 1);
    assert.equal(links[0].device_id, controllers.find((c) => c.nodeId === claimed[0].body.license.nodeId)!.id);
  });

  test('nodeId uniqueness: creates, PUTs and PATCHes setting the same nodeId: one device holds it, the others 409 NODE_ID_TAKEN', async (t) => {
    const app = await appFor(t);
    const existing: number[] = [];
    for (let i = 0; i < 30; i++) {
      const d = await addDevice(app, { nodeId: `own-${i}` });
      await addMonitors(app, ROOT_ROLE_ID, d, { mm: true });
      existing.push(d);
    }
    const before = await count(app, 'devices');
    const results = await race(times(N, (i) => () => {
      if (i % 5 < 2) return app.request('POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { properties: { nodeId: 'contested', by: i } } });
      const d = existing[i - 2 * Math.floor(i / 5) - 2]; // each PUT/PATCH on a device of its own
      if (i % 5 < 4) return app.request('PUT', `/v1/device/${d}`, { token: app.adminToken, body: { properties: { nodeId: 'contested' } } });
      return app.request('PATCH', `/v1/device/${d}`, { token: app.adminToken, body: [{ op: 'replace', path: '/nodeId', value: 'contested' }] });
    }));
    assert.equal(results.filter((r) => r.status === 200).length, 1, statuses(results));
    for (const r of results.filter((x) => x.status !== 200)) assertError(r, 409, 'NODE_ID_TAKEN');
    assert.equal(await count(app, 'devices', "node_id = 'contested'"), 1);
    const created = results.filter((r, i) => r.status === 200 && i % 5 < 2).length;
    assert.equal(await count(app, 'devices'), before + created, 'no device created by a refused request');
    assert.equal(await count(app, 'devices', "node_id LIKE 'own-%'"), 30 - (1 - created), 'a refused PUT/PATCH kept its nodeId');
  });

  test('member upsert: the same relation PUT by every client, for an existing and for a new user: one row each, all 200', async (t) => {
    const app = await appFor(t);
    const [club] = await addChild(app, ROOT_ROLE_ID, ALL);
    const user = await app.createUser('member@races.test');
    const existing = await race(times(N, () => () => app.request('PUT', `/v1/role/${club}/member?userEmail=member%40races.test`, { token: app.adminToken, body: {} })));
    assert.deepEqual(existing.map((r) => r.status), Array(N).fill(200), existing.find((r) => r.status !== 200)?.text);
    assert.equal(new Set(existing.map((r) => r.body.member.id)).size, 1);
    assert.equal(await count(app, 'members', 'role_id = ? AND user_id = ?', club, user.id), 1);
    assert.equal(await count(app, 'audit_log', "action = 'member.put'"), 1, 'one relation created, recorded once');

    // a user nobody knows yet: every client hashes a password, one insert wins, every answer names that user
    const fresh = await race(times(N, (i) => () => app.request('PUT', `/v1/role/${club}/member?userEmail=Newcomer%40Races.test&password=newcomer-pass-${i}`, { token: app.adminToken, body: {} })));
    assert.deepEqual(fresh.map((r) => r.status), Array(N).fill(200), fresh.find((r) => r.status !== 200)?.text);
    assert.equal(new Set(fresh.map((r) => r.body.member.id)).size, 1);
    assert.equal(await count(app, 'users', "lower(email) = 'newcomer@races.test'"), 1);
    assert.equal(await count(app, 'members', 'role_id = ?', club), 2);
  });
});
