// PATCH /v1/device/{ids}: RFC 6902 on properties, rights per touched property, If-Unmodified-Since, all-or-nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, T0, type TestApp } from '../support/app.ts';
import { addDevice, addMonitors, addRole, iso, ok, storedDevice, userIn } from './fixtures.ts';

const patch = (t: TestApp, token: string, ids: string | number, body: unknown, headers?: Record<string, string>, query = '') =>
  t.request('PATCH', `/v1/device/${ids}${query}`, { token, body, headers });

/** A device on the root role (admin has monitorManagement). */
async function rootDevice(t: TestApp, properties: Record<string, unknown>, lastUpdate = T0): Promise<number> {
  const id = await addDevice(t, properties, lastUpdate);
  await addMonitors(t, 1, id, { mm: true });
  return id;
}

describe('device PATCH: happy', () => {
  it('applies the operations to properties and answers { device } with a new lastUpdate', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, { name: 'old', info: { model: 'X' }, list: [1, 2] }, T0 - 1000);
    const body = ok(await patch(app, app.adminToken, d, [
      { op: 'replace', path: '/name', value: 'new' },
      { op: 'add', path: '/info/currency', value: 'EUR' },
      { op: 'remove', path: '/list/0' },
      { op: 'copy', from: '/name', path: '/alias' },
      { op: 'move', from: '/alias', path: '/label' },
      { op: 'test', path: '/label', value: 'new' },
    ]));
    const properties = { name: 'new', info: { model: 'X', currency: 'EUR' }, list: [2], label: 'new' };
    assert.deepEqual(body, {
      device: {
        id: d, lastUpdate: iso(T0), properties,
        userRights: { propertyEditabilities: { name: true, info: true, list: true, label: true }, monitorManagement: true },
      },
    });
    assert.deepEqual(await storedDevice(app, d), { properties, lastUpdate: T0 });
  });

  it('several ids: one transaction, { device: [...] } in request order', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b] = [await rootDevice(app, { n: 1 }), await rootDevice(app, { n: 2 })];
    const body = ok(await patch(app, app.adminToken, `${b},${a}`, [{ op: 'add', path: '/flag', value: true }]));
    assert.deepEqual(body.device.map((x: { id: number; properties: object }) => [x.id, x.properties]), [[b, { n: 2, flag: true }], [a, { n: 1, flag: true }]]);
  });

  it('lastUpdate strictly increases, also for two changes in the same millisecond', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, { n: 0 });
    const times: string[] = [];
    for (let i = 1; i <= 3; i++) times.push(ok(await patch(app, app.adminToken, d, [{ op: 'replace', path: '/n', value: i }])).device.lastUpdate);
    assert.deepEqual(times, [iso(T0 + 1), iso(T0 + 2), iso(T0 + 3)]); // the clock never moved
    app.clock.advance(1000);
    assert.equal(ok(await patch(app, app.adminToken, d, [{ op: 'replace', path: '/n', value: 9 }])).device.lastUpdate, iso(T0 + 1000));
    assert.equal((await storedDevice(app, d))!.lastUpdate, T0 + 1000);
  });

  it('a patch that changes nothing (only tests) keeps lastUpdate', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, { n: 1 }, T0 - 50);
    assert.equal(ok(await patch(app, app.adminToken, d, [{ op: 'test', path: '/n', value: 1 }])).device.lastUpdate, iso(T0 - 50));
    assert.equal(ok(await patch(app, app.adminToken, d, [])).device.lastUpdate, iso(T0 - 50));
    assert.equal((await storedDevice(app, d))!.lastUpdate, T0 - 50);
  });

  it('If-Unmodified-Since at or after lastUpdate lets the patch through (ISO and HTTP-date)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, { n: 0 }, Date.UTC(2025, 11, 31, 23, 0, 0));
    ok(await patch(app, app.adminToken, d, [{ op: 'replace', path: '/n', value: 1 }], { 'if-unmodified-since': '2025-12-31T23:00:00.000Z' }));
    // that write set lastUpdate to T0 (2026-01-01T00:00:00.000Z)
    ok(await patch(app, app.adminToken, d, [{ op: 'replace', path: '/n', value: 2 }], { 'if-unmodified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' }));
    app.clock.advance(60_000);
    ok(await patch(app, app.adminToken, d, [{ op: 'replace', path: '/n', value: 3 }], { 'if-unmodified-since': '2026-01-01T01:01:00+01:00' }));
    // the same header again is now stale: the previous write moved lastUpdate past it
    assertError(await patch(app, app.adminToken, d, [{ op: 'replace', path: '/n', value: 4 }], { 'if-unmodified-since': '2026-01-01T01:00:59.999+01:00' }), 412, 'DEVICE_MODIFIED');
  });
});

describe('device PATCH: validation and state', () => {
  it('malformed patches are 400; __proto__/constructor/prototype segments are refused', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, { n: 0 });
    const bad = async (body: unknown, pattern: RegExp) => assert.match(assertError(await patch(app, app.adminToken, d, body), 400, 'BAD_REQUEST').message, pattern);
    await bad({ op: 'add', path: '/a', value: 1 }, /Invalid type|expected/);
    await bad([{ op: 'explode', path: '/a' }], /^\[0\]\.op/);
    await bad([{ op: 'add', path: 'a', value: 1 }], /^\[0\]\.path: a JSON pointer must start with "\/"/);
    await bad([{ op: 'add', path: '/a' }], /^\[0\]\.value: required for add/);
    await bad([{ op: 'move', path: '/a' }], /^\[0\]\.from: required for move/);
    await bad([{ op: 'add', path: '/a', value: 1, extra: 1 }], /^\[0\]\.extra: unknown field/);
    for (const segment of ['__proto__', 'constructor', 'prototype']) {
      await bad([{ op: 'add', path: `/info/${segment}/x`, value: 1 }], new RegExp(`segment "${segment}" is refused`));
      await bad([{ op: 'copy', from: `/${segment}`, path: '/x' }], new RegExp(`^\\[0\\]\\.from: segment "${segment}" is refused`));
    }
    await bad([{ op: 'add', path: '/a', value: 1 }, { op: 'add', path: '/a', value: 1 }, ...Array.from({ length: 999 }, () => ({ op: 'test', path: '/a', value: 1 }))], /1000/);
    assertError(await patch(app, app.adminToken, 'x', []), 400, 'BAD_REQUEST');
    assertError(await patch(app, app.adminToken, d, [], undefined, '?validate=1'), 400, 'BAD_REQUEST');
    assertError(await patch(app, app.adminToken, d, [], undefined, '?mode=merge'), 400, 'BAD_REQUEST');
    for (const header of ['yesterday', '2026-01-01', '2026-01-01T00:00:00', 'Thu, 32 Jan 2026 00:00:00 GMT', '2026-02-30T00:00:00Z']) {
      const res = await patch(app, app.adminToken, d, [], { 'if-unmodified-since': header });
      assert.match(assertError(res, 400, 'BAD_REQUEST').message, /^If-Unmodified-Since/, header);
    }
    assert.deepEqual(await storedDevice(app, d), { properties: { n: 0 }, lastUpdate: T0 });
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).includes('x'), false);
  });

  it('a failing operation is 422 PATCH_FAILED with the contract\'s message; nothing written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, { info: { model: 'X' } });
    const res = await patch(app, app.adminToken, d, [{ op: 'add', path: '/info/x', value: 1 }, { op: 'add', path: '/missing/currency', value: 'EUR' }]);
    assert.deepEqual(assertError(res, 422, 'PATCH_FAILED'), {
      statusCode: 422, error: 'Unprocessable Entity', code: 'PATCH_FAILED',
      message: `Operation 1 (add) failed for device ${d} at path "/missing/currency"`,
    });
    const failedTest = await patch(app, app.adminToken, d, [{ op: 'test', path: '/info/model', value: 'Y' }]);
    assert.equal(assertError(failedTest, 422, 'PATCH_FAILED').message, `Operation 0 (test) failed for device ${d} at path "/info/model"`);
    assert.deepEqual(await storedDevice(app, d), { properties: { info: { model: 'X' } }, lastUpdate: T0 });
  });

  it('several ids are all-or-nothing: a failure on the second device leaves the first unchanged', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b] = [await rootDevice(app, { x: 1 }), await rootDevice(app, {})];
    const res = await patch(app, app.adminToken, `${a},${b}`, [{ op: 'replace', path: '/x', value: 2 }]);
    assert.equal(assertError(res, 422, 'PATCH_FAILED').message, `Operation 0 (replace) failed for device ${b} at path "/x"`);
    assert.deepEqual(await storedDevice(app, a), { properties: { x: 1 }, lastUpdate: T0 });
  });

  it('If-Unmodified-Since before lastUpdate of ANY target -> 412 DEVICE_MODIFIED, exact message, nothing written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const a = await rootDevice(app, { n: 0 }, T0 - 10_000);
    const b = await rootDevice(app, { n: 0 }, T0 - 500);
    const stale = iso(T0 - 1000);
    for (const header of [stale, 'Thu, 31 Dec 2025 23:59:59 GMT', 'Thursday, 31-Dec-25 23:59:59 GMT', 'Thu Dec 31 23:59:59 2025']) {
      const res = await patch(app, app.adminToken, `${a},${b}`, [{ op: 'replace', path: '/n', value: 1 }], { 'if-unmodified-since': header });
      assert.deepEqual(assertError(res, 412, 'DEVICE_MODIFIED'), {
        statusCode: 412, error: 'Precondition Failed', code: 'DEVICE_MODIFIED', message: 'At least one device was modified after the specified time',
      }, header);
    }
    assert.deepEqual([await storedDevice(app, a), await storedDevice(app, b)], [{ properties: { n: 0 }, lastUpdate: T0 - 10_000 }, { properties: { n: 0 }, lastUpdate: T0 - 500 }]);
    // the precondition is checked before the operations: a stale header wins over a failing operation
    assertError(await patch(app, app.adminToken, a, [{ op: 'remove', path: '/nope' }], { 'if-unmodified-since': iso(T0 - 20_000) }), 412, 'DEVICE_MODIFIED');
  });

  it('validate=true: 422 SCHEMA_VIOLATION naming the path; the well-known keys are always typed', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const d = await rootDevice(app, { nodeType: 'evCharger', phases: 3 });
    const res = await patch(app, app.adminToken, d, [{ op: 'replace', path: '/phases', value: 2 }], undefined, '?validate=true');
    assert.equal(assertError(res, 422, 'SCHEMA_VIOLATION').message, 'properties.phases: Invalid type: Expected (1 | 3) but received 2');
    ok(await patch(app, app.adminToken, d, [{ op: 'replace', path: '/phases', value: 1 }], undefined, '?validate=true'));
    ok(await patch(app, app.adminToken, d, [{ op: 'replace', path: '/phases', value: 2 }])); // not validated without the flag
    const id = await patch(app, app.adminToken, d, [{ op: 'add', path: '/nodeId', value: 42 }]);
    assert.equal(assertError(id, 422, 'SCHEMA_VIOLATION').message, 'properties.nodeId: expected a string');
    const active = await patch(app, app.adminToken, d, [{ op: 'add', path: '/isActive', value: 'yes' }]);
    assert.equal(assertError(active, 422, 'SCHEMA_VIOLATION').message, 'properties.isActive: expected a boolean');
    assert.deepEqual((await storedDevice(app, d))!.properties, { nodeType: 'evCharger', phases: 2 });
  });

  it('a nodeId already used is 409 NODE_ID_TAKEN, also between two devices of one request', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [a, b, c] = [await rootDevice(app, { nodeId: 'a' }), await rootDevice(app, { nodeId: 'b' }), await rootDevice(app, {})];
    assertError(await patch(app, app.adminToken, b, [{ op: 'replace', path: '/nodeId', value: 'a' }]), 409, 'NODE_ID_TAKEN');
    assertError(await patch(app, app.adminToken, `${c},${b}`, [{ op: 'add', path: '/nodeId', value: 'same' }]), 409, 'NODE_ID_TAKEN');
    assert.deepEqual([(await storedDevice(app, b))!.properties, (await storedDevice(app, c))!.properties], [{ nodeId: 'b' }, {}]);
    // keeping one's own nodeId, or swapping it away and back, is fine
    ok(await patch(app, app.adminToken, a, [{ op: 'replace', path: '/nodeId', value: 'a' }]));
    ok(await patch(app, app.adminToken, b, [{ op: 'remove', path: '/nodeId' }]));
    ok(await patch(app, app.adminToken, a, [{ op: 'replace', path: '/nodeId', value: 'b' }]));
  });
});

describe('device PATCH: security', () => {
  async function editor(t: TestApp, grant: { reads?: string[]; edits?: string[]; mm?: boolean }, properties: Record<string, unknown>) {
    const r = await addRole(t, 'r');
    const u = await userIn(t, r);
    const d = await addDevice(t, properties);
    await addMonitors(t, r, d, grant);
    return { u, d };
  }

  it('monitorManagement allows every property', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { u, d } = await editor(app, { mm: true }, { a: 1 });
    ok(await patch(app, u.token, d, [{ op: 'remove', path: '/a' }, { op: 'add', path: '/z', value: 1 }]));
  });

  it('without it, every written property must be editable (add of a new editable property included)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { u, d } = await editor(app, { reads: ['a'], edits: ['b', 'nb'] }, { a: 1, b: 2 });
    ok(await patch(app, u.token, d, [{ op: 'replace', path: '/b', value: 3 }, { op: 'add', path: '/nb', value: { x: 1 } }, { op: 'add', path: '/nb/y', value: 2 }]));
    ok(await patch(app, u.token, d, [{ op: 'copy', from: '/a', path: '/b' }, { op: 'test', path: '/a', value: 1 }]));
    const denied = [
      [{ op: 'replace', path: '/a', value: 3 }],
      [{ op: 'add', path: '/new', value: 1 }],
      [{ op: 'replace', path: '/b', value: 4 }, { op: 'remove', path: '/a' }],
      [{ op: 'move', from: '/a', path: '/b' }],
      [{ op: 'copy', from: '/b', path: '/a' }],
      [{ op: 'copy', from: '/hidden', path: '/b' }],
      [{ op: 'test', path: '/hidden', value: 1 }],
    ];
    for (const body of denied) assertError(await patch(app, u.token, d, body), 403, 'FORBIDDEN');
    assert.deepEqual((await storedDevice(app, d))!.properties, { a: 1, b: 1, nb: { x: 1, y: 2 } });
  });

  it('403 names the properties; it comes before 412 and 422', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { u, d } = await editor(app, { edits: ['b'] }, { a: 1 });
    const res = await patch(app, u.token, d, [{ op: 'remove', path: '/a/deep' }, { op: 'add', path: '/c', value: 1 }], { 'if-unmodified-since': iso(T0 - 1) });
    assert.equal(assertError(res, 403, 'FORBIDDEN').message, `no edit right on properties "a", "c" of device ${d} (needs monitorManagement or the properties in edits)`);
  });

  it('invisible and missing devices are 404, before anything else; nothing written for the visible ones', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { u, d } = await editor(app, { mm: true }, { a: 1 });
    const foreign = await rootDevice(app, { a: 1 });
    assert.equal(assertError(await patch(app, u.token, foreign, [{ op: 'replace', path: '/a', value: 2 }]), 404, 'NOT_FOUND').message, `device ${foreign} not found`);
    assertError(await patch(app, u.token, 9999, []), 404, 'NOT_FOUND');
    assertError(await patch(app, u.token, `${d},${foreign}`, [{ op: 'replace', path: '/a', value: 2 }]), 404, 'NOT_FOUND');
    assertError(await patch(app, u.token, foreign, [{ op: 'replace', path: '/a', value: 2 }], { 'if-unmodified-since': iso(0) }), 404, 'NOT_FOUND');
    assert.deepEqual([(await storedDevice(app, d))!.properties, (await storedDevice(app, foreign))!.properties], [{ a: 1 }, { a: 1 }]);
  });

  it('several ids: rights are checked on every device', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const r = await addRole(app, 'r');
    const u = await userIn(app, r);
    const [d1, d2] = [await addDevice(app, { b: 1 }), await addDevice(app, { b: 1 })];
    await addMonitors(app, r, d1, { edits: ['b'] });
    await addMonitors(app, r, d2, { reads: ['b'] });
    const res = await patch(app, u.token, `${d1},${d2}`, [{ op: 'replace', path: '/b', value: 2 }]);
    assert.match(assertError(res, 403, 'FORBIDDEN').message, new RegExp(`device ${d2}`));
    assert.equal((await storedDevice(app, d1))!.properties.b, 1);
  });

  it('validate=true judges what the caller sees: a hidden nodeType selects no schema', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const { u, d } = await editor(app, { edits: ['phases'] }, { nodeType: 'evCharger', phases: 3 });
    // with the nodeType hidden, the answer must not depend on it (it would reveal it)
    ok(await patch(app, u.token, d, [{ op: 'replace', path: '/phases', value: 2 }], undefined, '?validate=true'));
    const r2 = await addRole(app, 'r2');
    const seer = await userIn(app, r2);
    await addMonitors(app, r2, d, { reads: ['nodeType'], edits: ['phases'] });
    const res = await patch(app, seer.token, d, [{ op: 'replace', path: '/phases', value: 2 }], undefined, '?validate=true');
    assert.match(assertError(res, 422, 'SCHEMA_VIOLATION').message, /^properties\.phases: /);
  });
});
