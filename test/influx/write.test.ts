// The InfluxDB 1.x door, writes: GET|HEAD /ping, POST /write with every way InfluxDB clients send credentials,
// InfluxDB's error shape, and the telemetry write rules (same storage, rights, all-or-nothing).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appOpener, type TestApp } from '../support/app.ts';

import { queryOk, writer, FROM_V1, ns } from '../telemetry/fixtures.ts';

const openApp = appOpener();

async function apiToken(t: TestApp, userToken: string, scopes: string[]): Promise<string> {
  const res = await t.request('POST', '/user/tokens', { token: userToken, body: { name: 'gateway', scopes } });
  assert.equal(res.status, 201, res.text);
  return res.body.token;
}

function write(t: TestApp, path: string, body: string, headers: Record<string, string> = {}) {
  return t.request('POST', path, { raw: body, headers });
}

const T = Date.UTC(2025, 11, 31, 23, 0, 0);

async function points(t: TestApp, token: string, nodeId: string, measurement = 'power') {
  const body = await queryOk(t, token, { select: ['p'], from: { ...FROM_V1, measurement }, where: { tags: { nodeId }, time: [{ operator: '>=', value: T - 86_400_000 }] } });
  return body.series?.[0]?.values ?? [];
}

function assertInfluxError(res: { status: number; body: any; headers: Headers }, status: number, re: RegExp) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['error']);
  assert.match(res.body.error, re);
  assert.equal(res.headers.get('x-influxdb-version'), '1.8.10');
}

describe('influx door: /ping', () => {
  test('GET and HEAD /ping -> 204 with the version headers, no credentials needed', async () => {
    const t = await openApp();
    for (const method of ['GET', 'HEAD']) {
      const res = await t.request(method, '/ping');
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
      assert.equal(res.headers.get('x-influxdb-version'), '1.8.10');
      assert.equal(res.headers.get('x-influxdb-build'), 'OSS');
    }
    assert.equal((await t.request('GET', '/ping?verbose=true')).status, 204);
  });
});

describe('influx door: /write', () => {
  test('every credential form works: Bearer, Token, Basic (password = token), ?u=&p=', async () => {
    const t = await openApp();
    const w = await writer(t, 'n1');
    const token = await apiToken(t, w.token, ['telemetry:write']);
    const basic = `Basic ${Buffer.from(`anyone:${token}`).toString('base64')}`;
    const forms: [string, Record<string, string>][] = [
      ['', { authorization: `Bearer ${token}` }],
      ['', { authorization: `Token ${token}` }],
      ['', { authorization: basic }],
      [`&u=x&p=${token}`, {}],
      ['', { authorization: `Bearer ${w.token}` }], // a session's access token too
    ];
    for (const [i, [extra, headers]] of forms.entries()) {
      const res = await write(t, `/write?db=energy${extra}`, `power,nodeId=n1 p=${i} ${ns(T + i * 1000)}`, headers);
      assert.equal(res.status, 204, `form ${i}: ${res.text}`);
      assert.equal(res.headers.get('x-influxdb-version'), '1.8.10');
    }
    assert.deepEqual(await points(t, w.token, 'n1'), forms.map((_, i) => [new Date(T + i * 1000).toISOString(), i]));
  });

  test('rp defaults to autogen; precision n|ns|u|ms|s|m|h', async () => {
    const t = await openApp();
    const w = await writer(t, 'n1');
    const cases: [string, string, number][] = [
      ['n', ns(T), T], ['ns', ns(T + 1), T + 1], ['u', String((T + 2) * 1000), T + 2], ['ms', String(T + 3), T + 3],
      ['s', String(T / 1000 + 4), T + 4000], ['m', String(T / 60_000 + 1), T + 60_000], ['h', String(T / 3_600_000 + 2), T + 7_200_000],
    ];
    for (const [i, [precision, ts]] of cases.entries()) {
      const res = await write(t, `/write?db=energy&rp=autogen&precision=${precision}`, `power,nodeId=n1 p=${i} ${ts}`, { authorization: `Bearer ${w.token}` });
      assert.equal(res.status, 204, res.text);
    }
    t.clock.set(T + 86_400_000);
    const got = await points(t, await t.token(w.id), 'n1');
    assert.deepEqual(got, cases.map(([, , ms], i) => [new Date(ms).toISOString(), i]).sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  });

  test('a malformed line -> 400 unable to parse, nothing stored', async () => {
    const t = await openApp();
    const w = await writer(t, 'n1');
    const res = await write(t, '/write?db=energy', `power,nodeId=n1 p=1 ${ns(T)}\npower,nodeId=n1 p= ${ns(T)}`, { authorization: `Bearer ${w.token}` });
    assertInfluxError(res, 400, /^unable to parse line 2: /);
    assert.deepEqual(await points(t, w.token, 'n1'), []);
  });

  test('a line without nodeId, a missing db, a bad precision -> 400 in InfluxDB\'s shape', async () => {
    const t = await openApp();
    const w = await writer(t, 'n1');
    const auth = { authorization: `Bearer ${w.token}` };
    assertInfluxError(await write(t, '/write?db=energy', 'power p=1', auth), 400, /unable to parse line 1: .*nodeId/);
    assertInfluxError(await write(t, '/write', 'power,nodeId=n1 p=1', auth), 400, /^database is required$/);
    assertInfluxError(await write(t, '/write?db=energy&precision=d', 'power,nodeId=n1 p=1', auth), 400, /invalid precision/);
  });

  test('no or wrong credentials -> 401 authorization failed; a wrong scope -> 403', async () => {
    const t = await openApp();
    const w = await writer(t, 'n1');
    const readOnly = await apiToken(t, w.token, ['telemetry:read']);
    assertInfluxError(await write(t, '/write?db=energy', 'power,nodeId=n1 p=1'), 401, /^authorization failed/);
    assertInfluxError(await write(t, '/write?db=energy&u=a&p=gk_nope', 'power,nodeId=n1 p=1'), 401, /^authorization failed/);
    assertInfluxError(await write(t, '/write?db=energy', 'power,nodeId=n1 p=1', { authorization: 'Basic !!!' }), 401, /^authorization failed/);
    assertInfluxError(await write(t, `/write?db=energy&p=${readOnly}`, 'power,nodeId=n1 p=1'), 403, /scope/);
    assert.deepEqual(await points(t, w.token, 'n1'), []);
  });

  test('a nodeId the caller may not write -> 403, and the whole request is refused', async () => {
    const t = await openApp();
    const w = await writer(t, 'n1');
    await writer(t, 'n2');
    const res = await write(t, '/write?db=energy', `power,nodeId=n1 p=1 ${ns(T)}\npower,nodeId=n2 p=2 ${ns(T)}`, { authorization: `Bearer ${w.token}` });
    assertInfluxError(res, 403, /nodeId "n2"/);
    assert.deepEqual(await points(t, w.token, 'n1'), []);
  });

  test('a body over 32 MiB -> 413 in InfluxDB\'s shape', async () => {
    const t = await openApp();
    const w = await writer(t, 'n1');
    const res = await t.request('POST', '/write?db=energy', { raw: 'x', headers: { authorization: `Bearer ${w.token}`, 'content-length': String(33 * 1024 * 1024) } });
    assertInfluxError(res, 413, /exceeds/);
  });
});
