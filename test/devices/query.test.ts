// POST /v1/device/query and the deprecated GET /v1/device: visibility, filters, conditions, fields, skipHash, paging.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { makeTestApp, assertError, T0, type TestApp } from '../support/app.ts';
import { sql } from 'kysely';
import { addDevice, addManages, addMember, addMonitors, addRole, iso, ok, storedMonitors, userIn } from './fixtures.ts';

const query = (t: TestApp, token: string, body?: unknown) => t.request('POST', '/v1/device/query', { token, body });
const ids = (body: { device: { id: number }[] }) => body.device.map((d) => d.id);

/** Admin-visible devices 1..n on the root role with the given properties. */
async function seed(t: TestApp, list: Record<string, unknown>[]): Promise<number[]> {
  const ids: number[] = [];
  for (const properties of list) {
    const id = await addDevice(t, properties);
    await addMonitors(t, 1, id, { mm: true });
    ids.push(id);
  }
  return ids;
}

describe('device query: happy', () => {
  it('lists the devices u may read, sorted by id, with the full device shape', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r');
    const u = await userIn(app, r);
    const [d1, d2, d3] = [await addDevice(app, { b: 2, a: 1 }), await addDevice(app, { a: 'hidden' }), await addDevice(app, { x: 1 }, T0 + 5)];
    await addMonitors(app, r, d3, { reads: ['x'] });
    await addMonitors(app, r, d1, { mm: true });
    await addMonitors(app, 1, d2, { mm: true });
    const body = ok(await query(app, u.token, {}));
    assert.deepEqual(body, {
      device: [
        { id: d1, lastUpdate: iso(T0), properties: { b: 2, a: 1 }, userRights: { propertyEditabilities: { b: true, a: true }, monitorManagement: true } },
        { id: d3, lastUpdate: iso(T0 + 5), properties: { x: 1 }, userRights: { propertyEditabilities: { x: false }, monitorManagement: false } },
      ],
    });
    // a missing body is the empty query; the admin (root) does not reach r's devices unless root manages r
    assert.deepEqual(ids(ok(await query(app, u.token))), [d1, d3]);
    assert.deepEqual(ids(ok(await query(app, app.adminToken, {}))), [d2]);
    await addManages(app, 1, r);
    assert.deepEqual(ids(ok(await query(app, app.adminToken, {}))), [d1, d2, d3]);
  });

  it('a readable device without readable properties is listed with properties {}', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r');
    const u = await userIn(app, r);
    const d = await addDevice(app, { secret: 1 });
    await addMonitors(app, r, d, { reads: ['other'] });
    assert.deepEqual(ok(await query(app, u.token, {})).device, [
      { id: d, lastUpdate: iso(T0), properties: {}, userRights: { propertyEditabilities: {}, monitorManagement: false } },
    ]);
  });

  it('filters: id (one or many), nodeId, nodeType, isActive; all must match', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b, c, d] = await seed(app, [
      { nodeId: 'a', nodeType: 'battery', isActive: true },
      { nodeId: 'b', nodeType: 'battery', isActive: false },
      { nodeId: 'c', nodeType: 'powerMeter', isActive: true },
      { name: 'no well-known keys' },
    ]);
    const q = async (filter: unknown) => ids(ok(await query(app, app.adminToken, { filter })));
    assert.deepEqual(await q({ id: [d, a, 999] }), [a, d]);
    assert.deepEqual(await q({ id: b }), [b]);
    assert.deepEqual(await q({ nodeId: ['c', 'a'] }), [a, c]);
    assert.deepEqual(await q({ nodeId: 'b' }), [b]);
    assert.deepEqual(await q({ nodeType: 'battery' }), [a, b]);
    assert.deepEqual(await q({ isActive: true }), [a, c]);
    assert.deepEqual(await q({ isActive: false }), [b]);
    assert.deepEqual(await q({ nodeType: ['battery'], isActive: true }), [a]);
    assert.deepEqual(await q({ id: [c], nodeType: 'battery' }), []);
    assert.deepEqual(await q({}), [a, b, c, d]);
  });

  it('conditions keep devices whose property equals one of the values (deep JSON equality)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b, c] = await seed(app, [
      { zone: 'north', tags: { x: 1, y: [1, 2] } },
      { zone: 'south', tags: { y: [1, 2], x: 1 } },
      { zone: null },
    ]);
    const q = async (conditions: unknown) => ids(ok(await query(app, app.adminToken, { conditions })));
    assert.deepEqual(await q({ zone: ['north'] }), [a]);
    assert.deepEqual(await q({ zone: ['south', 'north'] }), [a, b]);
    assert.deepEqual(await q({ zone: [null] }), [c]);
    assert.deepEqual(await q({ tags: [{ x: 1, y: [1, 2] }] }), [a, b]);
    assert.deepEqual(await q({ tags: [{ x: 1, y: [2, 1] }] }), []);
    assert.deepEqual(await q({ zone: ['north'], tags: [{ x: 1, y: [1, 2] }] }), [a]);
    assert.deepEqual(await q({ missing: [null] }), []);
    assert.deepEqual(await q({ zone: [] }), []);
  });

  it('fields limits the returned properties and their editabilities', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a] = await seed(app, [{ a: 1, b: 2, c: 3 }]);
    const body = ok(await query(app, app.adminToken, { fields: ['c', 'a', 'zzz'] }));
    assert.deepEqual(body.device, [{ id: a, lastUpdate: iso(T0), properties: { a: 1, c: 3 }, userRights: { propertyEditabilities: { a: true, c: true }, monitorManagement: true } }]);
    assert.deepEqual(ok(await query(app, app.adminToken, { fields: [] })).device[0].properties, {});
  });

  it('limit and afterId page through the result in id order', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const all = await seed(app, [{ k: 1 }, { k: 2 }, { k: 1 }, { k: 1 }, { k: 2 }, { k: 1 }]);
    const page = async (body: object) => ids(ok(await query(app, app.adminToken, body)));
    assert.deepEqual(await page({ limit: 2 }), all.slice(0, 2));
    assert.deepEqual(await page({ limit: 2, afterId: all[1] }), all.slice(2, 4));
    assert.deepEqual(await page({ afterId: all[4] }), [all[5]]);
    assert.deepEqual(await page({ afterId: all[5] }), []);
    // paging applies after filtering
    assert.deepEqual(await page({ conditions: { k: [1] }, limit: 2 }), [all[0], all[2]]);
    assert.deepEqual(await page({ conditions: { k: [1] }, limit: 2, afterId: all[2] }), [all[3], all[5]]);
  });

  it('a small limit over sparse matches reads on until it has them (the slices grow), and pages agree with the whole', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    // 600 devices, one in 97 matching: a limit of 3 needs far more rows than its first slice
    const all = await seed(app, Array.from({ length: 600 }, (_, i) => ({ k: i % 97 === 5 ? 'hit' : 'miss', nodeType: i % 2 ? 'a' : 'b' })));
    const page = async (body: object) => ids(ok(await query(app, app.adminToken, body)));
    const hits = all.filter((_, i) => i % 97 === 5);
    assert.equal(hits.length, 7);
    assert.deepEqual(await page({ conditions: { k: ['hit'] } }), hits);
    assert.deepEqual(await page({ conditions: { k: ['hit'] }, limit: 3 }), hits.slice(0, 3));
    assert.deepEqual(await page({ conditions: { k: ['hit'] }, limit: 3, afterId: hits[2] }), hits.slice(3, 6));
    assert.deepEqual(await page({ conditions: { k: ['hit'] }, limit: 3, afterId: hits[5] }), hits.slice(6));
    // walking every page of 7 with a filter gives the whole, in order
    const whole = await page({ filter: { nodeType: ['a'] } });
    const walked: number[] = [];
    for (let after: number | undefined; ;) {
      const next = await page({ filter: { nodeType: ['a'] }, limit: 7, ...(after === undefined ? {} : { afterId: after }) });
      if (next.length === 0) break;
      walked.push(...next);
      after = next[next.length - 1];
    }
    assert.deepEqual(walked, whole);
    assert.equal(whole.length, 300);
  });

  it('skipHash: base64 SHA-256 of the selected lastUpdate strings joined by \\n; equal -> 204 without body', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b] = await seed(app, [{ k: 1 }, { k: 2 }]);
    await app.deps.db.run(app.deps.db.qb.updateTable('devices').set({ last_update: T0 + 7 }).where('id', '=', b));
    const expected = createHash('sha256').update(`${iso(T0)}\n${iso(T0 + 7)}`).digest('base64');
    assert.match(expected, /=$/);
    const fresh = await query(app, app.adminToken, { skipHash: expected });
    assert.equal(fresh.status, 204);
    assert.equal(fresh.text, '');
    assert.deepEqual(ids(ok(await query(app, app.adminToken, { skipHash: 'stale' }))), [a, b]);
    // the hash covers the selected devices only
    const onlyA = createHash('sha256').update(iso(T0)).digest('base64');
    assert.equal((await query(app, app.adminToken, { skipHash: onlyA, filter: { id: [a] } })).status, 204);
    // a change of any selected device changes the hash
    ok(await app.request('PATCH', `/v1/device/${a}`, { token: app.adminToken, body: [{ op: 'replace', path: '/k', value: 3 }] }));
    assert.equal((await query(app, app.adminToken, { skipHash: expected })).status, 200);
    // the empty selection hashes the empty string
    const empty = createHash('sha256').update('').digest('base64');
    assert.equal((await query(app, app.adminToken, { skipHash: empty, filter: { id: [999] } })).status, 204);
  });
});

describe('device query: rights that change between two requests (each node keeps readable sets while rights hold)', () => {
  it('the next page reflects monitors, members and manages changed since the previous page, through the API or not', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r');
    await addManages(app, 1, r, { userManagement: true });
    const u = await userIn(app, r);
    const d: number[] = [];
    for (let i = 0; i < 6; i++) {
      d.push(await addDevice(app, { n: i, secret: 's' }));
      await addMonitors(app, r, d[i], { reads: ['n'] });
    }
    const page = async (body: object) => ok(await query(app, u.token, body)).device as { id: number; properties: Record<string, unknown> }[];
    assert.deepEqual((await page({ limit: 3 })).map((x) => x.id), d.slice(0, 3));
    // between the pages: one relation deleted, a new device granted
    const [gone] = await storedMonitors(app, d[4]);
    await app.deps.db.run(sql`DELETE FROM monitors WHERE id = ${gone.id}`);
    const d7 = await addDevice(app, { n: 7 });
    await addMonitors(app, r, d7, { mm: true });
    assert.deepEqual((await page({ limit: 3, afterId: d[2] })).map((x) => x.id), [d[3], d[5], d7]);
    // a relation's readable properties widened: the next page shows them
    await app.deps.db.run(sql`UPDATE monitors SET reads = '["n","secret"]' WHERE role_id = ${r} AND device_id = ${d[3]}`);
    assert.deepEqual((await page({ limit: 1, afterId: d[2] }))[0].properties, { n: 3, secret: 's' });
    // membership removed through the API: nothing; given back through a manages relation from another role: everything
    const member = (await app.deps.db.get(sql<{ id: number }>`SELECT id FROM members WHERE role_id = ${r} AND user_id = ${u.id}`))!;
    assert.equal((await app.request('DELETE', `/v1/role/${r}/member/${member.id}`, { token: app.adminToken })).status, 200);
    assert.deepEqual(await page({}), []);
    const p = await addRole(app, 'p');
    await addManages(app, p, r);
    await addMember(app, p, u.id);
    assert.deepEqual((await page({})).map((x) => x.id), [d[0], d[1], d[2], d[3], d[5], d7]);
    // the role deleted (its relations cascade): nothing
    await app.deps.db.run(sql`DELETE FROM roles WHERE id = ${r}`);
    assert.deepEqual(await page({ filter: { id: d } }), []);
    assert.deepEqual(await page({}), []);
  });

  it('a skipHash that matched answers 200 with the new selection once rights add or remove a device', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r');
    const u = await userIn(app, r);
    const [a, b] = [await addDevice(app, { k: 1 }), await addDevice(app, { k: 2 }, T0 + 3)];
    await addMonitors(app, r, a, { mm: true });
    const hash = (...times: number[]) => createHash('sha256').update(times.map(iso).join('\n')).digest('base64');
    assert.equal((await query(app, u.token, { skipHash: hash(T0) })).status, 204);
    assert.equal((await query(app, u.token, { skipHash: hash(T0) })).status, 204);
    await addMonitors(app, r, b, { reads: ['k'] });
    assert.deepEqual(ids(ok(await query(app, u.token, { skipHash: hash(T0) }))), [a, b]);
    assert.equal((await query(app, u.token, { skipHash: hash(T0, T0 + 3) })).status, 204);
    await app.deps.db.run(sql`DELETE FROM monitors WHERE role_id = ${r} AND device_id = ${a}`);
    assert.deepEqual(ids(ok(await query(app, u.token, { skipHash: hash(T0, T0 + 3) }))), [b]);
    // another user with the same devices gets the same hash, and a user without them the empty one
    const v = await userIn(app, r);
    assert.equal((await query(app, v.token, { skipHash: hash(T0 + 3) })).status, 204);
    const w = await userIn(app);
    assert.equal((await query(app, w.token, { skipHash: hash() })).status, 204);
  });
});

describe('device query: skipHash over ids with and without gaps', () => {
  it('the hash is over the readable devices only, whether their ids leave gaps or fill a range', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r');
    const u = await userIn(app, r);
    const d: number[] = [];
    for (let i = 0; i < 5; i++) d.push(await addDevice(app, { i }, T0 + 10 * i));
    const hashOf = (ids: number[]) => createHash('sha256').update(ids.map((id) => iso(T0 + 10 * d.indexOf(id))).join('\n')).digest('base64');
    const poll = async (ids: number[]) => (await query(app, u.token, { skipHash: hashOf(ids) })).status;
    for (const i of [0, 2, 4]) await addMonitors(app, r, d[i], { reads: ['i'] });
    assert.equal(await poll([d[0], d[2], d[4]]), 204); // gaps: sought id by id
    assert.equal(await poll([d[0], d[1], d[2], d[3], d[4]]), 200);
    for (const i of [1, 3]) await addMonitors(app, r, d[i], { reads: ['i'] });
    assert.equal(await poll([d[0], d[1], d[2], d[3], d[4]]), 204); // a range: scanned
    assert.equal(await poll([d[0], d[2], d[4]]), 200);
    // a device outside the readable range's ends but inside another user's set changes nothing for u
    const e = await addDevice(app, {}, T0 + 99);
    await addMonitors(app, 1, e, { mm: true });
    assert.equal(await poll([d[0], d[1], d[2], d[3], d[4]]), 204);
    await app.deps.db.run(sql`UPDATE devices SET last_update = ${T0 + 1} WHERE id = ${d[3]}`);
    assert.equal(await poll([d[0], d[1], d[2], d[3], d[4]]), 200);
  });
});

describe('device query: validation', () => {
  it('viewId, roleId -> 400 NOT_SUPPORTED (in filter or at the top level); a malformed companyId -> 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    assert.equal(assertError(await query(app, app.adminToken, { filter: { companyId: ['x'] } }), 400, 'BAD_REQUEST').message.split(':')[0], 'filter.companyId[0]');
    assertError(await app.request('GET', '/v1/device?companyId=x', { token: app.adminToken }), 400, 'BAD_REQUEST');
    for (const key of ['viewId', 'roleId']) {
      assertError(await query(app, app.adminToken, { filter: { [key]: [1] } }), 400, 'NOT_SUPPORTED');
      assertError(await query(app, app.adminToken, { [key]: 1 }), 400, 'NOT_SUPPORTED');
      assertError(await app.request('GET', `/v1/device?${key}=1`, { token: app.adminToken }), 400, 'NOT_SUPPORTED');
    }
  });

  it('wrong types and unknown fields -> 400 naming the field', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const bad = async (body: unknown, pattern: RegExp) => assert.match(assertError(await query(app, app.adminToken, body), 400, 'BAD_REQUEST').message, pattern);
    await bad({ filter: { id: [1, -2] } }, /^filter\.id/);
    await bad({ filter: { id: ['1'] } }, /^filter\.id/);
    await bad({ filter: { nodeType: 5 } }, /^filter\.nodeType/);
    await bad({ filter: { isActive: 'true' } }, /^filter\.isActive/);
    await bad({ filter: { name: 'x' } }, /^filter\.name: unknown field/);
    await bad({ conditions: { a: 1 } }, /^conditions\.a/);
    await bad({ conditions: [] }, /^conditions: expected an object/);
    await bad({ fields: 'a' }, /^fields/);
    await bad({ limit: 0 }, /^limit: expected an integer >= 1/);
    await bad({ afterId: 1.5 }, /^afterId/);
    await bad({ skipHash: 1 }, /^skipHash/);
    await bad({ sort: 'id' }, /^sort: unknown field/);
    await bad([], /expected Object|expected an object|Invalid type/);
  });
});

describe('device query: deprecated GET /v1/device', () => {
  it('answers like the query with Deprecation and Link headers', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b, c] = await seed(app, [{ nodeId: 'a', nodeType: 'battery', isActive: true, zone: 'n' }, { nodeId: 'b', nodeType: 'battery', zone: 's' }, { nodeId: 'c' }]);
    const get = async (qs: string) => {
      const res = await app.request('GET', `/v1/device${qs}`, { token: app.adminToken });
      assert.equal(res.headers.get('deprecation'), 'true');
      assert.equal(res.headers.get('link'), '</v1/device/query>; rel="successor-version"');
      return res;
    };
    assert.deepEqual(ok(await get('')), ok(await query(app, app.adminToken, {})));
    assert.deepEqual(ids(ok(await get(`?id=${a}&id=${c}`))), [a, c]);
    assert.deepEqual(ids(ok(await get(`?id=${b},${c}`))), [b, c]);
    assert.deepEqual(ids(ok(await get('?nodeId=a,b&nodeType=battery&isActive=true'))), [a]);
    assert.deepEqual(ids(ok(await get(`?conditions=${encodeURIComponent('{"zone":["s"]}')}`))), [b]);
    assert.deepEqual(ids(ok(await get(`?limit=1&afterId=${a}`))), [b]);
    assert.deepEqual(ok(await get('?fields=nodeType&id=' + a)).device[0].properties, { nodeType: 'battery' });
    const hash = createHash('sha256').update([iso(T0), iso(T0), iso(T0)].join('\n')).digest('base64');
    const skipped = await get(`?skipHash=${encodeURIComponent(hash)}`);
    assert.equal(skipped.status, 204);
    const bad = async (qs: string, pattern: RegExp) =>
      assert.match(assertError(await app.request('GET', `/v1/device${qs}`, { token: app.adminToken }), 400, 'BAD_REQUEST').message, pattern);
    await bad('?conditions=notjson', /^query\.conditions: expected a JSON object/);
    await bad(`?conditions=${encodeURIComponent('{"__proto__":["x"]}')}`, /^query\.conditions: expected a JSON object/);
    await bad(`?conditions=${encodeURIComponent('{"a":"x"}')}`, /^query\.conditions\.a/);
    await bad('?isActive=yes', /^query\.isActive/);
    await bad('?limit=0', /^query\.limit/);
    await bad('?id=x', /^query\.id/);
    await bad('?colour=red', /^query\.colour: unknown field/);
  });

  it('is in the OpenAPI document as deprecated', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const doc = (await app.request('GET', '/openapi.json')).body;
    assert.equal(doc.paths['/v1/device'].get.deprecated, true);
    assert.equal(doc.paths['/v1/device/query'].post.deprecated, undefined);
    assert.equal(doc.paths['/v1/role/{roleId}/monitors'].get.deprecated, true);
  });
});

describe('device query: security', () => {
  it('devices reached only through roles outside Reach(u) are invisible, also by id filter', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [p, c, other] = [await addRole(app, 'p'), await addRole(app, 'c'), await addRole(app, 'other')];
    await addManages(app, p, c);
    await addManages(app, other, p); // a parent of u's role is not reached
    const u = await userIn(app, p);
    const [dc, dother] = [await addDevice(app, { v: 1 }), await addDevice(app, { v: 2 })];
    await addMonitors(app, c, dc, { reads: ['v'] });
    await addMonitors(app, other, dother, { mm: true });
    assert.deepEqual(ids(ok(await query(app, u.token, {}))), [dc]);
    assert.deepEqual(ids(ok(await query(app, u.token, { filter: { id: [dother] } }))), []);
    const none = await app.createUser('none@test');
    assert.deepEqual(ok(await query(app, none.token, {})), { device: [] });
  });

  it('readable and editable properties are the union over all of u\'s relations', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [r1, r2] = [await addRole(app, 'r1'), await addRole(app, 'r2')];
    const u = await userIn(app, r1, r2);
    const d = await addDevice(app, { a: 1, b: 2, c: 3, d: 4 });
    await addMonitors(app, r1, d, { reads: ['a'], edits: ['b'] });
    await addMonitors(app, r2, d, { reads: ['b', 'c'] });
    assert.deepEqual(ok(await query(app, u.token, {})).device[0].userRights, {
      propertyEditabilities: { a: false, b: true, c: false }, monitorManagement: false,
    });
  });

  it('filters on nodeId / nodeType / isActive never match a device whose property u cannot read', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r');
    const u = await userIn(app, r);
    const hidden = await addDevice(app, { nodeId: 'h', nodeType: 'battery', isActive: true, name: 'n' });
    const shown = await addDevice(app, { nodeId: 's', nodeType: 'battery', isActive: true, name: 'n' });
    await addMonitors(app, r, hidden, { reads: ['name'] });
    await addMonitors(app, r, shown, { reads: ['name', 'nodeId', 'nodeType', 'isActive'] });
    for (const filter of [{ nodeId: ['h', 's'] }, { nodeType: 'battery' }, { isActive: true }]) {
      assert.deepEqual(ids(ok(await query(app, u.token, { filter }))), [shown], JSON.stringify(filter));
    }
    // the hidden device is still listed without the filters, with only its readable property
    assert.deepEqual(ok(await query(app, u.token, { filter: { id: [hidden] } })).device[0].properties, { name: 'n' });
  });
});

describe('device query: listings of several slices', () => {
  it('thousands of devices, with gaps and a filter: every one in id order, each with its own row (PostgreSQL reads a slice ahead)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { db } = app.deps;
    const r = await addRole(app, 'r');
    const u = await userIn(app, r);
    // 4,700 devices (more than two slices of PostgreSQL's 2,000 and many of SQLite's 500), inserted in chunks
    const n = 4_700;
    for (let from = 0; from < n; from += 500) {
      const rows = Array.from({ length: Math.min(500, n - from) }, (_, k) => {
        const i = from + k;
        return { properties: JSON.stringify({ i, nodeType: i % 3 === 0 ? 'battery' : 'inverter' }), last_update: T0 + i, created_at: T0 };
      });
      await db.run(db.qb.insertInto('devices').values(rows));
    }
    const all = (await db.all(db.qb.selectFrom('devices').select('id').orderBy('id'))).map((row) => row.id);
    assert.equal(all.length, n);
    // u reads all but every seventh device (gaps: some slices are sought id by id, others are ranges)
    const granted = all.filter((_, i) => i % 7 !== 3);
    for (let from = 0; from < granted.length; from += 500) {
      await db.run(db.qb.insertInto('monitors').values(granted.slice(from, from + 500).map((id) => ({
        role_id: r, device_id: id, monitor_management: 0, reads: JSON.stringify(['i', 'nodeType']), edits: '[]',
      }))));
    }
    type Listed = { id: number; lastUpdate: string; properties: { i: number; nodeType: string } };
    const listed = ok(await query(app, u.token, {})).device as Listed[];
    assert.deepEqual(listed.map((d) => d.id), granted);
    // each device carries its own row: i matches its position among all devices, and so does lastUpdate
    for (const d of listed) {
      const i = all.indexOf(d.id);
      assert.equal(d.properties.i, i);
      assert.equal(d.lastUpdate, iso(T0 + i));
    }
    const batteries = ok(await query(app, u.token, { filter: { nodeType: ['battery'] } })).device as Listed[];
    assert.deepEqual(batteries.map((d) => d.id), granted.filter((id) => all.indexOf(id) % 3 === 0));
    const matched = ok(await query(app, u.token, { conditions: { nodeType: ['inverter'] }, afterId: granted[1000] })).device as Listed[];
    assert.deepEqual(matched.map((d) => d.id), granted.filter((id) => id > granted[1000]! && all.indexOf(id) % 3 !== 0));
  });
});
