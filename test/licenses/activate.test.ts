// POST /v1/license/activate: now or at activationIso; unlinked licenses by anyone, linked ones by readers of the controller.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, assertError, T0 } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import { parseIsoWithOffset } from '../../src/lib/time-text.ts';
import { claim, controllerScene, createLicense, licenseRow } from './fixtures.ts';

const DAY = 86_400_000;

describe('POST /v1/license/activate happy', () => {
  test('any authenticated user activates an unlinked license now: exact body and row', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const license = await createLicense(app, { duration: 365, solarKw: 10 });
    const user = await app.createUser('someone@test');
    app.clock.advance(1234);
    const res = await app.request('POST', '/v1/license/activate', { token: user.token, body: { key: license.key } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      success: true,
      license: {
        ...license, activationDate: '2026-01-01T00:00:01.234Z', deactivationDate: '2027-01-01T00:00:01.234Z',
      },
    });
    assert.equal((await licenseRow(app, license.id))!.activation_date, T0 + 1234);
  });

  test('activationIso with any UTC offset is normalised to Z; deactivation = activation + duration days', async (t) => {
    const cases: [string, string, number, string][] = [
      ['2026-03-01T10:00:00+02:00', '2026-03-01T08:00:00.000Z', 30, '2026-03-31T08:00:00.000Z'],
      ['2026-03-01T10:00:00-05:30', '2026-03-01T15:30:00.000Z', 1, '2026-03-02T15:30:00.000Z'],
      ['2026-12-31T23:59:59.999Z', '2026-12-31T23:59:59.999Z', 365, '2027-12-31T23:59:59.999Z'],
      ['2028-02-29T00:00:00.1234+0100', '2028-02-28T23:00:00.123Z', 366, '2029-02-28T23:00:00.123Z'],
      ['2026-06-01t12:00z', '2026-06-01T12:00:00.000Z', 10, '2026-06-11T12:00:00.000Z'],
      ['2025-01-01T00:00:00+14:00', '2024-12-31T10:00:00.000Z', 7, '2025-01-07T10:00:00.000Z'],
    ];
    const app = await makeTestApp();
    t.after(() => app.close());
    for (const [iso, activation, duration, deactivation] of cases) {
      const license = await createLicense(app, { duration });
      const res = await app.request('POST', '/v1/license/activate', { token: app.adminToken, body: { key: license.key, activationIso: iso } });
      assert.equal(res.status, 200, `${iso}: ${res.text}`);
      assert.equal(res.body.license.activationDate, activation, iso);
      assert.equal(res.body.license.deactivationDate, deactivation, iso);
      assert.equal((await licenseRow(app, license.id))!.activation_date, Date.parse(activation));
      assert.equal(Date.parse(deactivation) - Date.parse(activation), duration * DAY);
    }
  });

  test('the key is matched after trimming surrounding whitespace', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const license = await createLicense(app);
    const res = await app.request('POST', '/v1/license/activate', { token: app.adminToken, body: { key: `\t ${license.key}\n ` } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.license.id, license.id);
  });

  test('a linked license is activated by users who can read its controller, with or without monitorManagement', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    for (const who of [scene.manager, scene.reader, scene.upper]) {
      const license = await createLicense(app);
      await claim(app, scene.manager, license.key, scene.nodeId);
      const res = await app.request('POST', '/v1/license/activate', { token: who.token, body: { key: license.key } });
      assert.equal(res.status, 200, res.text);
      assert.equal((await licenseRow(app, license.id))!.activation_date, T0);
    }
  });
});

describe('POST /v1/license/activate security', () => {
  test('needs a token', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const license = await createLicense(app);
    await assertRequiresAuth(app, 'POST', '/v1/license/activate', { key: license.key });
    assert.equal((await licenseRow(app, license.id))!.activation_date, null);
  });

  test('a license linked to a controller the user cannot read -> 403, not activated', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    await claim(app, scene.manager, license.key, scene.nodeId);
    for (const token of [scene.stranger.token, app.adminToken]) {
      const body = assertError(await app.request('POST', '/v1/license/activate', { token, body: { key: license.key } }), 403, 'FORBIDDEN');
      assert.deepEqual(body, {
        statusCode: 403, error: 'Forbidden', message: 'this license is linked to a controller you cannot read', code: 'FORBIDDEN',
      });
    }
    assert.equal((await licenseRow(app, license.id))!.activation_date, null);
  });

  test('403 comes before ALREADY_ACTIVATED: a stranger learns nothing about the state', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const scene = await controllerScene(app);
    const license = await createLicense(app);
    await claim(app, scene.manager, license.key, scene.nodeId);
    const ok = await app.request('POST', '/v1/license/activate', { token: scene.reader.token, body: { key: license.key } });
    assert.equal(ok.status, 200);
    assertError(await app.request('POST', '/v1/license/activate', { token: scene.stranger.token, body: { key: license.key } }), 403, 'FORBIDDEN');
  });

  test('unknown key -> 404; keys are case-sensitive; nothing changes', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const license = await createLicense(app);
    for (const key of ['GK-NOPE', license.key.toLowerCase(), license.key.slice(0, -1), `${license.key}X`]) {
      const body = assertError(await app.request('POST', '/v1/license/activate', { token: app.adminToken, body: { key } }), 404, 'NOT_FOUND');
      assert.equal(body.message, 'no license with this key');
    }
    assert.equal((await licenseRow(app, license.id))!.activation_date, null);
  });

  test('already activated -> 400 ALREADY_ACTIVATED; the first activation stands', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const license = await createLicense(app);
    const first = await app.request('POST', '/v1/license/activate', { token: app.adminToken, body: { key: license.key, activationIso: '2026-02-01T00:00:00Z' } });
    assert.equal(first.status, 200);
    const user = await app.createUser('other@test');
    const again = await app.request('POST', '/v1/license/activate', { token: user.token, body: { key: license.key, activationIso: '2026-03-01T00:00:00Z' } });
    assert.deepEqual(assertError(again, 400, 'ALREADY_ACTIVATED'), {
      statusCode: 400, error: 'Bad Request', message: 'this license is already activated', code: 'ALREADY_ACTIVATED',
    });
    assert.equal((await licenseRow(app, license.id))!.activation_date, Date.UTC(2026, 1, 1));
  });
});

describe('POST /v1/license/activate validation', () => {
  const cases: [string, unknown, RegExp][] = [
    ['no body', undefined, /^body: /],
    ['missing key', { activationIso: '2026-01-01T00:00:00Z' }, /^key: /],
    ['key not a string', { key: 42 }, /^key: /],
    ['empty key', { key: '' }, /^key: expected a non-empty key$/],
    ['whitespace key', { key: '   ' }, /^key: expected a non-empty key$/],
    ['key of 51 characters', { key: 'k'.repeat(51) }, /^key: expected at most 50 characters$/],
    ['time without offset', { key: 'k', activationIso: '2026-01-01T00:00:00' }, /^activationIso: expected an ISO 8601 date-time with a UTC offset/],
    ['date only', { key: 'k', activationIso: '2026-01-01' }, /^activationIso: /],
    ['no such day', { key: 'k', activationIso: '2026-02-29T00:00:00Z' }, /^activationIso: /],
    ['hour 24', { key: 'k', activationIso: '2026-01-01T24:00:00Z' }, /^activationIso: /],
    ['not a date', { key: 'k', activationIso: 'yesterday' }, /^activationIso: /],
    ['a number', { key: 'k', activationIso: 1767225600000 }, /^activationIso: /],
    ['before 1970', { key: 'k', activationIso: '1969-12-31T23:59:59Z' }, /^activationIso: expected a date-time from 1970 on$/],
    ['unknown field', { key: 'k', nodeId: 'x' }, /^nodeId: unknown field$/],
  ];
  for (const [name, body, message] of cases) {
    test(`${name} -> 400 naming the field`, async (t) => {
      const app = await makeTestApp();
      t.after(() => app.close());
      const license = await createLicense(app, { key: 'k' });
      const res = await app.request('POST', '/v1/license/activate', { token: app.adminToken, body });
      assert.match(assertError(res, 400, 'BAD_REQUEST').message, message);
      assert.equal((await licenseRow(app, license.id))!.activation_date, null);
    });
  }

  test('a deactivation date past the year 9999 -> 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const license = await createLicense(app, { duration: 36500 });
    const res = await app.request('POST', '/v1/license/activate', { token: app.adminToken, body: { key: license.key, activationIso: '9950-01-01T00:00:00Z' } });
    assert.match(assertError(res, 400, 'BAD_REQUEST').message, /^activationIso: /);
    assert.equal((await licenseRow(app, license.id))!.activation_date, null);
  });

  test('parseIsoWithOffset: offsets, fractions, calendar', () => {
    assert.equal(parseIsoWithOffset('2026-01-02T03:04:05.678Z'), Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    assert.equal(parseIsoWithOffset('2026-01-02T03:04:05.678+01:00'), Date.UTC(2026, 0, 2, 2, 4, 5, 678));
    assert.equal(parseIsoWithOffset('2026-01-02T03:04-0130'), Date.UTC(2026, 0, 2, 4, 34));
    assert.equal(parseIsoWithOffset('2026-01-02T03:04:05.6Z'), Date.UTC(2026, 0, 2, 3, 4, 5, 600));
    assert.equal(parseIsoWithOffset('0099-01-01T00:00:00Z'), new Date('0099-01-01T00:00:00Z').getTime());
    assert.equal(parseIsoWithOffset('2026-04-31T00:00:00Z'), undefined);
    assert.equal(parseIsoWithOffset('2026-13-01T00:00:00Z'), undefined);
    assert.equal(parseIsoWithOffset('2026-01-01T00:60:00Z'), undefined);
    assert.equal(parseIsoWithOffset('2026-01-01T00:00:60Z'), undefined);
    assert.equal(parseIsoWithOffset('2026-01-01T00:00:00+24:00'), undefined);
    assert.equal(parseIsoWithOffset(' 2026-01-01T00:00:00Z'), undefined);
  });
});
