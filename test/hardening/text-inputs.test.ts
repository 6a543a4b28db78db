// Text that one storage backend would take and the other refuse (docs/api.md#bodies, docs/api.md#telemetry-limits): lone
// UTF-16 surrogates in JSON bodies, and telemetry names and series keys of every length up to InfluxDB's limit. The
// file runs once per backend with the same expectations, so both answer alike: the same status, the same stored data,
// and nothing stored by a refused request.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { makeTestApp, assertError, ROOT_ROLE_ID, T0, type TestApp } from '../support/app.ts';
import { deviceOf, queryOk, write, writer } from '../telemetry/fixtures.ts';

const LONE = ['\ud800', '\udfff', 'a\ud83d', '\ude00b', '\udc00\ud800'];
const ns = (ms: number) => `${ms}000000`;
/** `n` letters and digits that do not compress (PostgreSQL compresses long index entries: repeats would fit) */
function noise(n: number, seed = 7): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out += 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[(x >>> 16) % 62];
  }
  return out;
}
const FROM = { database: 'energy', retentionPolicy: 'autogen', measurement: '' };

async function count(t: TestApp, table: string): Promise<number> {
  return Number((await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n);
}

describe('lone UTF-16 surrogates in JSON bodies: 400 naming the field, on every backend, nothing stored', () => {
  it('device properties (values, keys, nested), role and customer names, nodeInfluxSeries', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const devices = await count(app, 'devices');
    for (const lone of LONE) {
      const bodies: Array<[string, string, unknown, RegExp]> = [
        ['POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { properties: { name: lone } }, /^properties\.name: /],
        ['POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { properties: { [`k${lone}`]: 1 } }, /^properties: /],
        ['POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { properties: { a: [{ b: lone }] } }, /^properties\.a\[0\]\.b: /],
        ['POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { properties: { nodeInfluxSeries: [{ measurement: lone }] } }, /^properties\.nodeInfluxSeries/],
        ['POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, { manages: flags(), role: { name: `r${lone}`, selfRights: flags() } }, /^role\.name: /],
        ['POST', `/v1/customer?roleId=${ROOT_ROLE_ID}`, { name: `c${lone}` }, /^name: /],
      ];
      for (const [method, path, body, where] of bodies) {
        const res = await app.request(method, path, { token: app.adminToken, body });
        const err = assertError(res, 400, 'BAD_REQUEST');
        assert.match(err.message, where, `${path} ${JSON.stringify(body)}`);
        assert.match(err.message, /unpaired UTF-16 surrogate/);
      }
    }
    assert.equal(await count(app, 'devices'), devices);
    assert.equal(await count(app, 'customers'), 0);
  });

  it('PUT and PATCH of an existing device leave it as it was', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const created = await app.request('POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { properties: { name: 'kept' } } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.device.id;
    const put = await app.request('PUT', `/v1/device/${id}`, { token: app.adminToken, body: { properties: { name: '\ud800' } } });
    assert.match(assertError(put, 400, 'BAD_REQUEST').message, /^properties\.name: .*unpaired UTF-16 surrogate/);
    const patch = await app.request('PATCH', `/v1/device/${id}`, { token: app.adminToken, body: [{ op: 'add', path: '/x', value: 'a\udfff' }] });
    assert.match(assertError(patch, 400, 'BAD_REQUEST').message, /^\[0\]\.value: .*unpaired UTF-16 surrogate/);
    const stored = await app.deps.db.get(sql<{ properties: string }>`SELECT properties FROM devices WHERE id = ${id}`);
    assert.deepEqual(JSON.parse(stored!.properties), { name: 'kept' });
  });

  it('paired surrogates (characters beyond the BMP) are stored and answered faithfully', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const name = 'zon \ud83d\udd06 \u{1F50B} 𝄞';
    const res = await app.request('POST', `/v1/device?roleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { properties: { name, [name]: name } } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.device.properties.name, name);
    assert.equal(res.body.device.properties[name], name);
    const role = await app.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { manages: flags(), role: { name, selfRights: flags() } } });
    assert.equal(role.status, 200, role.text);
    assert.equal(role.body.role.name, name);
  });
});

describe('e-mail addresses: the same accounts on every backend', () => {
  it('match whatever the case of their ASCII letters, and only those (É and é are different letters)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const users = await count(app, 'users');
    const member = async (email: string, password: string) => {
      const res = await app.request('PUT', `/v1/role/${ROOT_ROLE_ID}/member?userEmail=${encodeURIComponent(email)}&password=${password}`, { token: app.adminToken, body: {} });
      assert.equal(res.status, 200, res.text);
      return res.body.member as { id: number; userEmail: string };
    };
    const upper = await member('Émile@Site.test', 'first-password-1');
    assert.equal(upper.userEmail, 'Émile@Site.test');
    assert.deepEqual(await member('ÉMILE@SITE.TEST', 'ignored-password'), upper);
    const lower = await member('émile@site.test', 'second-password-2');
    assert.notEqual(lower.id, upper.id);
    assert.equal(await count(app, 'users'), users + 2);
    const login = (username: string, password: string) => app.request('POST', '/auth/login', { body: { username, password } });
    assert.equal((await login('éMILE@sItE.TeSt', 'second-password-2')).status, 200);
    assert.equal((await login('ÉmIlE@site.TEST', 'first-password-1')).status, 200);
    assertError(await login('émile@site.test', 'first-password-1'), 401, 'PASSWORD_INCORRECT');
    const filtered = await app.request('POST', `/v1/role/${ROOT_ROLE_ID}/member/query`, { token: app.adminToken, body: { filter: { userEmail: ['éMILE@SITE.test'] } } });
    assert.equal(filtered.status, 200, filtered.text);
    assert.deepEqual(filtered.body.member.map((m: { id: number }) => m.id), [lower.id]);
  });
});

function flags() {
  return { roleManagement: false, userManagement: false, viewManagement: false, deviceManagement: false, reportManagement: false, alarmManagement: false };
}

describe('telemetry names and series keys: the same limits on every backend', () => {
  it('a series key with `#!~#` and a field name of up to 65,535 bytes is stored and read back; one byte more is a 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    // "mm" + ",big=" + value + ",nodeId=n1", then "#!~#f": exactly 65,535 bytes
    const value = noise(65_535 - 'mm'.length - ',big='.length - ',nodeId=n1'.length - '#!~#f'.length);
    const ok = await write(app, u.token, `mm,big=${value},nodeId=n1 f=1 ${ns(T0)}\n`);
    assert.equal(ok.status, 204, ok.text);
    const body = await queryOk(app, u.token, { select: ['f'], from: { ...FROM, measurement: 'mm' }, where: { tags: { nodeId: 'n1', big: value }, time: [{ operator: '>=', value: T0 }, { operator: '<', value: T0 + 1 }] } });
    assert.equal(body.series?.[0]?.tags?.big, value);
    assert.deepEqual(body.series[0].values, [[new Date(T0).toISOString(), 1]]);
    const series = await count(app, 'telemetry_series');
    const withField = await write(app, u.token, `mm,big=${value}w,nodeId=n1 f=1 ${ns(T0)}\n`);
    assert.match(assertError(withField, 400, 'LINE_PROTOCOL').message, /^line 1: max key length exceeded: 65536 > 65535 \(field "f"\); nothing was stored$/);
    const key = await write(app, u.token, `mm,big=${value}wwwwww,nodeId=n1 f=1 ${ns(T0)}\n`);
    assert.match(assertError(key, 400, 'LINE_PROTOCOL').message, /^line 1: max key length exceeded: 65536 > 65535; nothing was stored$/);
    assert.equal(await count(app, 'telemetry_series'), series);
  });

  it('a measurement of 1 MB and 10,000 tags on one line are refused alike; 4,000 tags are stored', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    assertError(await write(app, u.token, `${'m'.repeat(1 << 20)},nodeId=n1 f=1 ${ns(T0)}\n`), 400, 'LINE_PROTOCOL');
    const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${String(i).padStart(5, '0')}=${noise(6, i)}`).join(',');
    assertError(await write(app, u.token, `wide,${tags(10_000)},nodeId=n1 f=1 ${ns(T0)}\n`), 400, 'LINE_PROTOCOL');
    const stored = await write(app, u.token, `wide,${tags(4_000)},nodeId=n1 f=2 ${ns(T0)}\n`);
    assert.equal(stored.status, 204, stored.text);
    const body = await queryOk(app, u.token, { select: ['f'], from: { ...FROM, measurement: 'wide' }, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 }, { operator: '<', value: T0 + 1 }] } });
    assert.equal(Object.keys(body.series[0].tags).length, 4_001);
    assert.deepEqual(body.series[0].values, [[new Date(T0).toISOString(), 2]]);
  });

  it('long field names: stored up to the limit of series key and field name together; beyond it a 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const key = 'm,nodeId=n1';
    const field = `f${noise(65_535 - key.length - 4 - 1)}`;
    const ok = await write(app, u.token, `${key} ${field}=1.5 ${ns(T0)}\n`);
    assert.equal(ok.status, 204, ok.text);
    const body = await queryOk(app, u.token, { select: [field], from: { ...FROM, measurement: 'm' }, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 }, { operator: '<', value: T0 + 1 }] } });
    assert.deepEqual(body.series[0].values, [[new Date(T0).toISOString(), 1.5]]);
    const fields = await count(app, 'telemetry_fields');
    const tooLong = await write(app, u.token, `${key} ${field}g=1.5 ${ns(T0)}\n`);
    assert.match(assertError(tooLong, 400, 'LINE_PROTOCOL').message, /^line 1: max key length exceeded: 65536 > 65535 \(field "f[a-zA-Z0-9]{63}…"\); nothing was stored$/);
    assert.equal(await count(app, 'telemetry_fields'), fields);
  });

  it('a measurement holds up to 532 fields on every backend; the 533rd is a 400 and nothing of its write is stored', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const fields = (from: number, n: number) => Array.from({ length: n }, (_, i) => `f${from + i}=${from + i}`).join(',');
    const ok = await write(app, u.token, `wide,nodeId=n1 ${fields(0, 500)} ${ns(T0)}\nwide,nodeId=n1 ${fields(500, 32)} ${ns(T0 + 1)}\n`);
    assert.equal(ok.status, 204, ok.text);
    assert.equal(await count(app, 'telemetry_fields'), 532);
    const more = await write(app, u.token, `wide,nodeId=n1 f0=1 ${ns(T0 + 2)}\nwide,nodeId=n1 f532=1 ${ns(T0 + 2)}\n`);
    assert.match(assertError(more, 400, 'LINE_PROTOCOL').message, /^line 2: measurement "wide" would have more than 532 fields; nothing was stored$/);
    assert.equal(await count(app, 'telemetry_fields'), 532);
    const body = await queryOk(app, u.token, { select: ['f0', 'f531'], from: { ...FROM, measurement: 'wide' }, where: { tags: { nodeId: 'n1' }, time: [{ operator: '>=', value: T0 }, { operator: '<', value: T0 + 10 }] } });
    assert.deepEqual(body.series[0].values, [[new Date(T0).toISOString(), 0, null], [new Date(T0 + 1).toISOString(), null, 531]]);
  });

  it('a nodeId of 60,000 bytes that names no device is a 403, like any unknown nodeId', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const res = await write(app, u.token, `m,nodeId=${'n'.repeat(60_000)} f=1 ${ns(T0)}\n`);
    assertError(res, 403, 'FORBIDDEN');
    assert.equal(await count(app, 'telemetry_series'), 0);
  });

  it('database and retention policy names: up to 255 bytes, like a directory name in InfluxDB', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await deviceOf(app, 'n1');
    const long = 'd'.repeat(255);
    assert.equal((await write(app, u.token, `m,nodeId=n1 f=1 ${ns(T0)}\n`, `db=${long}&rp=${'r'.repeat(255)}`)).status, 204);
    const res = await write(app, u.token, `m,nodeId=n1 f=1 ${ns(T0)}\n`, `db=${long}d&rp=autogen`);
    assert.match(assertError(res, 400, 'BAD_REQUEST').message, /^query\.db: expected at most 255 bytes$/);
    const influx = await app.request('POST', `/write?db=${long}d`, { token: u.token, raw: `m,nodeId=n1 f=1 ${ns(T0)}\n` });
    assert.equal(influx.status, 400, influx.text);
    assert.deepEqual(Object.keys(influx.body), ['error']);
    assert.equal(await count(app, 'telemetry_namespaces'), 1);
  });

  it('the InfluxDB door answers a key beyond the limit in InfluxDB\'s shape', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const res = await app.request('POST', '/write?db=energy', { token: u.token, raw: `${'m'.repeat(70_000)},nodeId=n1 f=1 ${ns(T0)}\n` });
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.error, /^unable to parse line 1: max key length exceeded: 70010 > 65535/);
  });
});
