// Property-level security. A user whose only relation to the device is { reads: ["a"], edits: ["b"] }:
// sees exactly a and b, can patch b, cannot patch a, cannot move from a, and never sees c in any response — query,
// patch result, put result — and conditions or filters on c cannot leak c by filtering.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, type TestApp, type TestResponse } from '../support/app.ts';
import { addDevice, addMonitors, addRole, ok, storedDevice, userIn } from './fixtures.ts';

const SECRET = 'c-secret-value-9f2b';

let t: TestApp;
let token: string;
let device: number;
/** the same grant on a device that has no c at all: every answer about c must be the same for both */
let twin: number;

beforeEach(async () => {
  t = await makeTestApp();
  const role = await addRole(t, 'limited');
  token = (await userIn(t, role)).token;
  device = await addDevice(t, { a: 'A', b: 'B', c: SECRET });
  twin = await addDevice(t, { a: 'A', b: 'B' });
  for (const id of [device, twin]) {
    await addMonitors(t, role, id, { reads: ['a'], edits: ['b'] });
    await addMonitors(t, 1, id, { mm: true }); // the admin's relation keeps the device alive and fully visible to the admin
  }
});
afterEach(() => t.close());

/** c's name and value appear nowhere in the response. */
function assertNoC(res: TestResponse): void {
  assert.ok(!res.text.includes(SECRET), `response leaks c's value: ${res.text}`);
  assert.ok(!/"c"/.test(res.text), `response leaks property c: ${res.text}`);
}

/** The response text with the device ids normalised, to compare the answers for `device` and `twin`. */
const normalised = (res: TestResponse, id: number) => `${res.status} ${res.text.replaceAll(`device ${id}`, 'device N').replaceAll(`"id":${id}`, '"id":N')}`;

const limitedView = (id: number, b = 'B') => ({
  id,
  properties: { a: 'A', b },
  userRights: { propertyEditabilities: { a: false, b: true }, monitorManagement: false },
});
const withoutTime = (d: { lastUpdate?: string }) => { const { lastUpdate: _, ...rest } = d; return rest; };

describe('property-level security: reads ["a"], edits ["b"]', () => {
  it('sees exactly a and b in the query, the deprecated GET, and with fields naming c', async () => {
    for (const res of [
      await t.request('POST', '/v1/device/query', { token, body: {} }),
      await t.request('GET', '/v1/device', { token }),
      await t.request('POST', '/v1/device/query', { token, body: { fields: ['a', 'b', 'c'] } }),
    ]) {
      assertNoC(res);
      assert.deepEqual(ok(res).device.map(withoutTime), [limitedView(device), limitedView(twin)]);
    }
    assert.deepEqual(ok(await t.request('POST', '/v1/device/query', { token, body: { fields: ['c'] } })).device.map((d: { properties: object }) => d.properties), [{}, {}]);
  });

  it('conditions and filters on c never match, whatever c holds: nothing is learnt by filtering', async () => {
    const probe = async (body: object) => {
      const res = await t.request('POST', '/v1/device/query', { token, body });
      assertNoC(res);
      return ok(res).device.map((d: { id: number }) => d.id);
    };
    assert.deepEqual(await probe({ conditions: { c: [SECRET] } }), []);
    assert.deepEqual(await probe({ conditions: { c: ['other'] } }), []);
    assert.deepEqual(await probe({ conditions: { c: [null] } }), []);
    assert.deepEqual(await probe({ conditions: { a: ['A'], c: [SECRET] } }), []);
    // the admin (monitorManagement) does filter on c: the condition is real, it is the limited user who cannot use it
    const admin = ok(await t.request('POST', '/v1/device/query', { token: t.adminToken, body: { conditions: { c: [SECRET] } } }));
    assert.deepEqual(admin.device.map((d: { id: number }) => d.id), [device]);
    // readable properties do filter
    assert.deepEqual(await probe({ conditions: { a: ['A'] } }), [device, twin]);
    assert.deepEqual(await probe({ conditions: { b: ['nope'] } }), []);
    const get = await t.request('GET', `/v1/device?conditions=${encodeURIComponent(JSON.stringify({ c: [SECRET] }))}`, { token });
    assertNoC(get);
    assert.deepEqual(ok(get).device, []);
  });

  it('can patch b; the patch result shows a and b only', async () => {
    const res = await t.request('PATCH', `/v1/device/${device}`, { token, body: [{ op: 'replace', path: '/b', value: 'B2' }] });
    assertNoC(res);
    assert.deepEqual(withoutTime(ok(res).device), limitedView(device, 'B2'));
    assert.deepEqual((await storedDevice(t, device))!.properties, { a: 'A', b: 'B2', c: SECRET });
    // several ids: every element of the array is limited too
    const both = await t.request('PATCH', `/v1/device/${device},${twin}`, { token, body: [{ op: 'add', path: '/b', value: 'B3' }] });
    assertNoC(both);
    assert.deepEqual(ok(both).device.map(withoutTime), [limitedView(device, 'B3'), limitedView(twin, 'B3')]);
  });

  it('cannot patch a, cannot move from a (nor to it), cannot touch c', async () => {
    const denied: unknown[][] = [
      [{ op: 'replace', path: '/a', value: 'x' }],
      [{ op: 'remove', path: '/a' }],
      [{ op: 'move', from: '/a', path: '/b' }],
      [{ op: 'move', from: '/b', path: '/a' }],
      [{ op: 'copy', from: '/b', path: '/a' }],
      [{ op: 'replace', path: '/b', value: 'ok' }, { op: 'add', path: '/a/x', value: 1 }],
    ];
    for (const body of denied) {
      const res = await t.request('PATCH', `/v1/device/${device}`, { token, body });
      assertError(res, 403, 'FORBIDDEN');
      assertNoC(res);
    }
    assert.deepEqual((await storedDevice(t, device))!.properties, { a: 'A', b: 'B', c: SECRET });
  });

  it('every PATCH or PUT that names c is answered exactly as on a device without c', async () => {
    const patches: unknown[][] = [
      [{ op: 'test', path: '/c', value: SECRET }],
      [{ op: 'test', path: '/c', value: 'wrong' }],
      [{ op: 'copy', from: '/c', path: '/b' }],
      [{ op: 'move', from: '/c', path: '/b' }],
      [{ op: 'remove', path: '/c' }],
      [{ op: 'add', path: '/c', value: 1 }],
      [{ op: 'replace', path: '/c/deep', value: 1 }],
    ];
    for (const body of patches) {
      const [onDevice, onTwin] = [
        await t.request('PATCH', `/v1/device/${device}`, { token, body }),
        await t.request('PATCH', `/v1/device/${twin}`, { token, body }),
      ];
      assertError(onDevice, 403, 'FORBIDDEN');
      assert.equal(normalised(onDevice, device), normalised(onTwin, twin), JSON.stringify(body));
      assert.ok(!onDevice.text.includes(SECRET));
    }
    for (const mode of ['legacy', 'merge', 'strict']) {
      const [onDevice, onTwin] = [
        await t.request('PUT', `/v1/device/${device}?mode=${mode}`, { token, body: { properties: { c: SECRET } } }),
        await t.request('PUT', `/v1/device/${twin}?mode=${mode}`, { token, body: { properties: { c: SECRET } } }),
      ];
      assertError(onDevice, 403, 'FORBIDDEN');
      assert.equal(normalised(onDevice, device), normalised(onTwin, twin), mode);
    }
    assert.deepEqual((await storedDevice(t, device))!.properties, { a: 'A', b: 'B', c: SECRET });
  });

  it('can PUT b (legacy and merge); the put result shows a and b only; c is kept', async () => {
    for (const mode of ['legacy', 'merge']) {
      const res = await t.request('PUT', `/v1/device/${device}?mode=${mode}`, { token, body: { properties: { b: mode } } });
      assertNoC(res);
      assert.deepEqual(withoutTime(ok(res).device), limitedView(device, mode));
    }
    assert.deepEqual((await storedDevice(t, device))!.properties, { a: 'A', b: 'merge', c: SECRET });
    assertError(await t.request('PUT', `/v1/device/${device}`, { token, body: { properties: { a: 'x' } } }), 403, 'FORBIDDEN');
  });

  it('validate=true does not reveal c: validation sees only what the caller can read', async () => {
    // c holds a value that breaks the battery schema as the admin sees it; the limited user cannot see it
    const id = await addDevice(t, { nodeType: 'battery', b: 1, capacityWh: 'broken' });
    const role = await addRole(t, 'limited2');
    const other = await userIn(t, role);
    await addMonitors(t, role, id, { reads: ['nodeType'], edits: ['b'] });
    const res = await t.request('PATCH', `/v1/device/${id}?validate=true`, { token: other.token, body: [{ op: 'replace', path: '/b', value: 2 }] });
    assert.ok(!res.text.includes('capacityWh'), res.text);
    assert.deepEqual(ok(res).device.properties, { nodeType: 'battery', b: 2 });
  });
});
