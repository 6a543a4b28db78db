// POST /v1/license: members of the root role create licenses.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID, T0 } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import { GENERATED_KEY } from '../../src/licenses/license-keys.ts';
import { addManages, addMember, createRole, licenseRow } from './fixtures.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function licenseCount(t: Awaited<ReturnType<typeof makeTestApp>>): Promise<number> {
  const { db } = t.deps;
  return (await db.get(db.qb.selectFrom('licenses').select((eb) => eb.fn.countAll<number>().as('n'))))!.n;
}

describe('POST /v1/license happy', () => {
  test('one license with the defaults: exact body and row', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'commercial', duration: 30 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.licenses.length, 1);
    const [license] = res.body.licenses;
    assert.match(license.id, UUID);
    assert.match(license.key, GENERATED_KEY);
    assert.deepEqual(res.body, {
      licenses: [{
        id: license.id, key: license.key, gridKw: null, solarKw: null, batteryKw: null, evKw: null,
        creationDate: '2026-01-01T00:00:00.000Z', activationDate: null, duration: 30, deactivationDate: null, type: 'commercial',
      }],
    });
    assert.deepEqual(Object.keys(license), [
      'id', 'key', 'gridKw', 'solarKw', 'batteryKw', 'evKw', 'creationDate', 'activationDate', 'duration', 'deactivationDate', 'type',
    ]);
    assert.deepEqual(await licenseRow(app, license.id), {
      id: license.id, key: license.key, type: 'commercial', duration: 30, grid_kw: null, solar_kw: null, battery_kw: null, ev_kw: null,
      creation_date: T0, activation_date: null,
    });
  });

  test('count and power limits: 50 licenses with the same terms and distinct keys', async (t) => {
    const app = await makeTestApp({ now: Date.UTC(2026, 4, 6, 7, 8, 9, 123) });
    t.after(() => app.close());
    const res = await app.request('POST', '/v1/license', {
      token: app.adminToken, body: { type: 'residential', duration: 365, gridKw: 17, solarKw: 10, batteryKw: 0, evKw: null, count: 50 },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.licenses.length, 50);
    assert.equal(new Set(res.body.licenses.map((l: any) => l.key)).size, 50);
    for (const l of res.body.licenses) {
      assert.deepEqual({ ...l, id: 'x', key: 'x' }, {
        id: 'x', key: 'x', gridKw: 17, solarKw: 10, batteryKw: 0, evKw: null, creationDate: '2026-05-06T07:08:09.123Z',
        activationDate: null, duration: 365, deactivationDate: null, type: 'residential',
      });
    }
    assert.equal(await licenseCount(app), 50);
  });

  test('a chosen key is stored trimmed and returned as is', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const res = await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'residential', duration: 1, key: '  legacy-Key_42  ' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.licenses[0].key, 'legacy-Key_42');
    assert.equal((await licenseRow(app, res.body.licenses[0].id))!.key, 'legacy-Key_42');
    const one = await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'residential', duration: 1, key: 'other', count: 1 } });
    assert.equal(one.status, 200, one.text);
  });
});

describe('POST /v1/license security', () => {
  test('needs a token', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    await assertRequiresAuth(app, 'POST', '/v1/license', { type: 'residential', duration: 365 });
    assert.equal(await licenseCount(app), 0);
  });

  test('a user outside the root role gets 403 and nothing is written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await app.createUser('user@test');
    const body = assertError(await app.request('POST', '/v1/license', { token: user.token, body: { type: 'residential', duration: 365 } }), 403, 'FORBIDDEN');
    assert.equal(body.message, 'creating licenses needs membership of the root role');
    assert.equal(await licenseCount(app), 0);
  });

  test('members of a role below root (with every self right) are not root members', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const child = await createRole(app, 'child');
    await addManages(app, ROOT_ROLE_ID, child);
    await app.deps.db.run(sql`UPDATE roles SET self_role_management = 1, self_user_management = 1, self_device_management = 1 WHERE id = ${child}`);
    const user = await app.createUser('child@test');
    await addMember(app, child, user.id);
    assertError(await app.request('POST', '/v1/license', { token: user.token, body: { type: 'residential', duration: 365 } }), 403, 'FORBIDDEN');
    // ... and another member of the root role may.
    await addMember(app, ROOT_ROLE_ID, user.id);
    const ok = await app.request('POST', '/v1/license', { token: user.token, body: { type: 'residential', duration: 365 } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(await licenseCount(app), 1);
  });

  test('validation (400) comes before the root check (403): order of checks', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const user = await app.createUser('user@test');
    assertError(await app.request('POST', '/v1/license', { token: user.token, body: { type: 'nope', duration: 365 } }), 400, 'BAD_REQUEST');
  });
});

describe('POST /v1/license validation', () => {
  const cases: [string, unknown, RegExp][] = [
    ['no body', undefined, /^body: /],
    ['missing type', { duration: 365 }, /^type: /],
    ['bad type', { type: 'industrial', duration: 365 }, /^type: expected residential or commercial$/],
    ['missing duration', { type: 'residential' }, /^duration: /],
    ['duration 0', { type: 'residential', duration: 0 }, /^duration: expected an integer number of days from 1 to 36500$/],
    ['duration fraction', { type: 'residential', duration: 1.5 }, /^duration: /],
    ['duration too long', { type: 'residential', duration: 36501 }, /^duration: /],
    ['duration as string', { type: 'residential', duration: '365' }, /^duration: /],
    ['negative kW', { type: 'residential', duration: 365, solarKw: -1 }, /^solarKw: /],
    ['fractional kW', { type: 'residential', duration: 365, evKw: 2.5 }, /^evKw: /],
    ['count 0', { type: 'residential', duration: 365, count: 0 }, /^count: expected an integer from 1 to 1000$/],
    ['count 1001', { type: 'residential', duration: 365, count: 1001 }, /^count: /],
    ['key with count 2', { type: 'residential', duration: 365, key: 'abc', count: 2 }, /^count: a chosen key creates one license: count must be 1$/],
    ['empty key', { type: 'residential', duration: 365, key: '   ' }, /^key: expected a non-empty key$/],
    ['key of 51 characters', { type: 'residential', duration: 365, key: 'k'.repeat(51) }, /^key: expected at most 50 characters$/],
    ['key with a space inside', { type: 'residential', duration: 365, key: 'ab cd' }, /^key: expected printable ASCII/],
    ['key with a control character', { type: 'residential', duration: 365, key: 'ab\u0000cd' }, /^key: /],
    ['unknown field', { type: 'residential', duration: 365, activationDate: 'x' }, /^activationDate: unknown field$/],
  ];
  for (const [name, body, message] of cases) {
    test(`${name} -> 400 naming the field, nothing written`, async (t) => {
      const app = await makeTestApp();
      t.after(() => app.close());
      const res = await app.request('POST', '/v1/license', { token: app.adminToken, body });
      assert.match(assertError(res, 400, 'BAD_REQUEST').message, message);
      assert.equal(await licenseCount(app), 0);
    });
  }

  test('a taken key -> 409 CONFLICT without the key in the message; nothing written', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const first = await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'residential', duration: 365, key: 'SAME-KEY' } });
    assert.equal(first.status, 200);
    const again = await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'commercial', duration: 10, key: ' SAME-KEY ' } });
    const body = assertError(again, 409, 'CONFLICT');
    assert.equal(body.message, 'a license with this key already exists');
    assert.equal(await licenseCount(app), 1);
    assert.equal((await licenseRow(app, first.body.licenses[0].id))!.type, 'residential');
    // a generated key can be taken too
    const generated = (await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'residential', duration: 1 } })).body.licenses[0].key;
    assertError(await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'residential', duration: 1, key: generated } }), 409, 'CONFLICT');
    // keys are case-sensitive: another case is another key
    const lower = await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'residential', duration: 1, key: 'same-key' } });
    assert.equal(lower.status, 200, lower.text);
    assert.equal(await licenseCount(app), 3);
  });
});
