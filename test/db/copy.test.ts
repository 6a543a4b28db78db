// `gridkeeper copy`: SQLite -> PostgreSQL -> SQLite (and SQLite -> SQLite, PostgreSQL -> PostgreSQL) gives the same
// answers to a fixed set of API calls, telemetry included (JSON queries and InfluxQL SELECT and SHOW), with the shard
// rows converted exactly between the two layouts; the target must be empty; --skip-telemetry leaves telemetry behind;
// a failed copy leaves the target as it was.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { runCli } from '../../src/boot/cli.ts';
import { createApp } from '../../src/boot/app.ts';
import { createDeps } from '../../src/boot/runtime.ts';
import { parseConfig } from '../../src/lib/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { emptyPostgres } from '../support/postgres.ts';
import { settleReads } from '../../src/telemetry/reads.ts';

const ADMIN_PASSWORD = 'copy-admin-password';
const SECRET_KEY = randomBytes(32).toString('base64');
const FLAGS = { roleManagement: true, userManagement: true, viewManagement: false, deviceManagement: true, reportManagement: false, alarmManagement: false };

/** An empty database on the test server, dropped when the test ends. */
async function emptyTarget(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const db = await emptyPostgres();
  t.after(() => db.drop());
  return db.url;
}

type Api = (method: string, path: string, body?: unknown, token?: string) => Promise<{ status: number; body: any; text: string }>;

/** An app on `db` (migrated and bootstrapped as at start); the same sealing key everywhere. */
async function appOn(db: Db, dataDir: string): Promise<{ api: Api; token: string }> {
  const { config } = parseConfig({ GRIDKEEPER_ADMIN_PASSWORD: ADMIN_PASSWORD, GRIDKEEPER_SECRET_KEY: SECRET_KEY, GRIDKEEPER_DATA_DIR: dataDir }, []);
  const { deps } = await createDeps({ config, db, log: createLogger('error') });
  const { app } = createApp(deps);
  const api: Api = async (method, path, body, token) => {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = typeof body === 'string' ? 'text/plain' : 'application/json';
    const res = await app.request(path, { method, headers, body: typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body) },
      { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
    const text = await res.text();
    return { status: res.status, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text, text };
  };
  const login = await api('POST', '/auth/login', { username: 'admin@localhost', password: ADMIN_PASSWORD });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  const access = await api('GET', '/auth/accesstoken', undefined, login.body);
  return { api, token: access.body };
}

/** The fixed set of calls whose answers must survive a round trip. */
async function answers(api: Api, token: string): Promise<unknown[]> {
  const calls: [string, string, unknown?][] = [
    ['POST', '/v1/role/query', {}],
    ['POST', '/v1/device/query', {}],
    ['POST', '/v1/license/query', {}],
    ['GET', '/v1/company'],
    ['POST', '/v1/audit/query', {}],
  ];
  const out: unknown[] = [];
  for (const [method, path, body] of calls) {
    const res = await api(method, path, body, token);
    assert.equal(res.status, 200, `${method} ${path}: ${JSON.stringify(res.body)}`);
    out.push(res.body);
  }
  return out;
}

const DAY = 86_400_000;
/** 2026-01-01T00:00:00Z: the telemetry lies in the days after it (and one point in 1969) */
const T = 1_767_225_600_000;
const ENERGY = { version: '1', database: 'energy', retentionPolicy: 'autogen' };
const HOURLY = { version: '2', organization: 'acme', bucket: 'meters_one_h' };
/** the ns timestamp of ms (+ sub-ms ns) */
const ns = (ms: number, sub = 0) => `${BigInt(ms) * 1_000_000n + BigInt(sub)}`;
const METER_POINTS = 12_345;

/**
 * Telemetry in three namespaces (v1 energy, v1 site through the InfluxDB door, v2 acme/meters_one_h with 90-day
 * shards): float, integer (beyond 2^53, int64's ends), unsigned, string and boolean fields; measurements of one
 * namespace with different types at the same field number; points in several shard windows (one before 1970), with
 * sub-millisecond times; a shard widened by a later field; a shard of more than one page (copy reads 10,000 at a time).
 */
async function writeTelemetry(ok: (method: string, path: string, body?: unknown) => Promise<unknown>): Promise<void> {
  await ok('POST', '/v1/telemetry?db=energy&rp=autogen&precision=ns', [
    `power,nodeId=n1,phase=L1 p=1.5,e=42i,u=7u,s="text",ok=true ${ns(T)}`,
    `power,nodeId=n1,phase=L1 p=-0,e=9007199254740993i,u=9223372036854775807u,s="quote \\"x\\" back\\\\slash, comma",ok=false ${ns(T + 1, 123)}`,
    `power,nodeId=n1,phase=L2 p=0.1,e=-9007199254740993i,u=0u,s="ünïcødé ✓ 🙂" ${ns(T + DAY + 5, 999_999)}`,
    `power,nodeId=n1,phase=L1 p=5e-324,e=1i ${ns(T + 2 * DAY)}`,
    `power,nodeId=n1,phase=L1 p=1.7976931348623157e308,s="" ${ns(T + 2 * DAY + 1)}`,
    `power,nodeId=n1,phase=L1 p=0.30000000000000004,e=-1i,ok=true ${ns(-DAY + 17)}`,
    `state,nodeId=n2 on=true,mode="auto",level=3i ${ns(T + 1000)}`,
    `state,nodeId=n2 on=false,mode="manual",level=-5i ${ns(T + 2 * DAY + 1000, 1)}`,
    `limits,nodeId=n1 low=-9223372036854775808i,high=9223372036854775807i ${ns(T + 3000)}`,
  ].join('\n'));
  // a later field: new shards are wider, and an old one is widened for it
  await ok('POST', '/v1/telemetry?db=energy&rp=autogen&precision=ms', `power,nodeId=n1,phase=L1 extra=2.25 ${T + 3 * DAY}\npower,nodeId=n1,phase=L1 extra=-7.5 ${T + 500}`);
  // more than one page of points in one shard
  const meter: string[] = [];
  for (let i = 0; i < METER_POINTS; i++) meter.push(`meter,nodeId=n1 v=${i / 10},c=${i * 1_000_003}i ${T + DAY + i * 7}`);
  await ok('POST', '/v1/telemetry?db=energy&rp=autogen&precision=ms', meter.join('\n'));
  await ok('POST', '/write?db=site&precision=ms', [
    `energy,nodeId=n2,phase=L1 power=1.5,n=3i,flag=true,label="a" ${T}`,
    `energy,nodeId=n2,phase=L1 power=2.5,n=4i,flag=false,label="b" ${T + 4 * DAY}`,
    `energy,nodeId=n1 power=-3.25,n=9007199254740993i ${T + 4 * DAY + 1}`,
  ].join('\n'));
  await ok('POST', '/v1/telemetry?org=acme&bucket=meters_one_h&precision=s', [
    `hourly,nodeId=n2 kwh=12.5,count=7u ${T / 1000}`,
    `hourly,nodeId=n2 kwh=13.75,count=8u ${T / 1000 + 200 * 86_400}`,
  ].join('\n'));
}

const between = (from: number, to: number) => [{ operator: '>=', value: from }, { operator: '<', value: to }];

/** Telemetry calls whose answers must survive every copy: as text (JSON.parse would round integers beyond 2^53). */
async function telemetryAnswers(api: Api, token: string): Promise<string[]> {
  const power = { measurement: 'power', namespace: ENERGY };
  const all = between(T - DAY, T + 10 * DAY);
  const n1 = (time = all) => ({ tags: { nodeId: 'n1' }, time });
  const queries = [
    { select: ['p', 'e', 'u', 's', 'ok', 'extra'], from: power, where: n1() },
    { select: ['p', 'e', 'ok'], from: power, where: n1(between(-2 * DAY, 0)) },
    { select: ['p', 'e', 's'], from: power, where: n1(), orderBy: 'DESC', limit: 2 },
    { select: [{ field: 'p', function: 'max' }, { field: 'e', function: 'sum' }, { field: 'u', function: 'max' }, { field: 'extra', function: 'mean' }], from: power, where: n1() },
    { select: ['on', 'mode', 'level'], from: { measurement: 'state', namespace: ENERGY }, where: { tags: { nodeId: 'n2' }, time: all } },
    { select: ['low', 'high'], from: { measurement: 'limits', namespace: ENERGY }, where: n1() },
    { select: [{ field: 'low', function: 'min' }, { field: 'high', function: 'max' }], from: { measurement: 'limits', namespace: ENERGY }, where: n1() },
    { select: ['v', 'c'], from: { measurement: 'meter', namespace: ENERGY }, where: n1() },
    { select: [{ field: 'v', function: 'sum' }, { field: 'c', function: 'sum' }, { field: 'v', function: 'mean' }, { field: 'c', function: 'min' }],
      from: { measurement: 'meter', namespace: ENERGY }, where: n1() },
    { select: ['kwh', 'count'], from: { measurement: 'hourly', namespace: HOURLY }, where: { tags: { nodeId: 'n2' }, time: between(T - DAY, T + 300 * DAY) } },
  ];
  const range = `time >= ${T - DAY}ms AND time < ${T + 10 * DAY}ms`;
  const influxql: [string, string][] = [
    ['energy', 'SHOW DATABASES; SHOW MEASUREMENTS; SHOW TAG KEYS; SHOW TAG VALUES WITH KEY = "phase"; SHOW FIELD KEYS; SHOW SERIES; SHOW RETENTION POLICIES'],
    ['energy', `SELECT * FROM power WHERE ${range}; SELECT * FROM state WHERE ${range}; SELECT * FROM limits WHERE ${range}`],
    ['energy', `SELECT mean(p), max(e), min(e), count(e), last(p), sum(extra) FROM power WHERE ${range} GROUP BY time(1d), phase fill(none)`],
    ['energy', `SELECT count(v), sum(c), mean(v), spread(c), first(v), last(c) FROM meter WHERE ${range} GROUP BY time(1h) fill(0)`],
    ['energy', `SELECT last(c) FROM meter WHERE ${range}; SELECT p, e FROM power WHERE time >= ${-2 * DAY}ms AND time < 0ms`],
    ['site', `SHOW MEASUREMENTS; SHOW FIELD KEYS; SHOW SERIES; SELECT * FROM energy WHERE time >= ${T - DAY}ms AND time < ${T + 10 * DAY}ms GROUP BY *`],
    ['site', `SELECT sum(n), mean(power), count(power), last(power) FROM energy WHERE time >= ${T - DAY}ms AND time < ${T + 10 * DAY}ms GROUP BY nodeId`],
  ];
  const out: string[] = [];
  const query = await api('POST', '/v1/telemetry/query', queries, token);
  assert.equal(query.status, 200, JSON.stringify(query.body));
  out.push(query.text);
  for (const [db, q] of influxql) {
    const res = await api('GET', `/query?db=${db}&q=${encodeURIComponent(q)}`, undefined, token);
    assert.equal(res.status, 200, `${q}: ${JSON.stringify(res.body)}`);
    out.push(res.text);
  }
  const namespaces = await api('GET', '/v1/telemetry/namespaces', undefined, token);
  assert.equal(namespaces.status, 200, JSON.stringify(namespaces.body));
  out.push(namespaces.text);
  return out;
}

/**
 * An answer with every non-integer JSON number in JavaScript's shortest form: the backends spell some doubles
 * differently (SQLite's JSON writes 5e-324 as 4.9406564584124654e-324), the value is the same. Integers stay as
 * written (every digit counts beyond 2^53).
 */
function sameDoubles(answers: string[]): string[] {
  return answers.map((text) => text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g,
    (token) => (token.startsWith('"') || /^-?\d+$/.test(token) ? token : String(Number(token)))));
}

/** The same answers, else the first difference with some context (the answers are long). */
function assertSameAnswers(actual: string[], expected: string[], what: string): void {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] === expected[i]) continue;
    let at = 0;
    while (actual[i][at] === expected[i][at]) at++;
    assert.fail(`${what}, answer ${i} differs at ${at}:\n  got      ...${actual[i].slice(Math.max(0, at - 200), at + 200)}\n  expected ...${expected[i].slice(Math.max(0, at - 200), at + 200)}`);
  }
}

/**
 * Every shard table's rows, in key order, each value as the class it is stored in and its exact text: `f:` a double
 * (SQLite REAL, PostgreSQL c<n>f; -0 kept), `i:` an int64 (SQLite INTEGER, PostgreSQL c<n>i), `s:` text.
 */
async function shardRows(db: Db): Promise<Record<string, unknown[][]>> {
  await settleReads(db);
  const shards = await db.all(sql<{ table_name: string; columns: number }>`SELECT table_name, columns FROM telemetry_shards ORDER BY table_name`);
  const out: Record<string, unknown[][]> = {};
  const float = (v: number) => `f:${Object.is(v, -0) ? '-0' : String(v)}`;
  for (const { table_name: table, columns } of shards) {
    const cols = Array.from({ length: columns }, (_, n) => n);
    if (db.backend === 'sqlite') {
      const stmt = db.sqlite.prepare(`SELECT * FROM "${table}" ORDER BY series_id, t_ms, t_ns`).raw(true).safeIntegers(true);
      out[table] = (stmt.all() as unknown[][]).map((r) => [Number(r[0]), Number(r[1]), Number(r[2]), ...cols.map((n) => {
        const v = r[3 + n];
        return v === null ? null : typeof v === 'number' ? float(v) : typeof v === 'bigint' ? `i:${v}` : `s:${v as string}`;
      })]);
    } else {
      const list = cols.map((n) => `c${n}f, c${n}i::text AS c${n}i, c${n}s`).join(', ');
      const rows = await db.all(sql<Record<string, unknown>>`SELECT series_id, t_ms, t_ns${sql.raw(columns > 0 ? `, ${list}` : '')} FROM ${sql.id(table)}
        ORDER BY series_id, t_ms, t_ns`);
      out[table] = rows.map((r) => [r.series_id, r.t_ms, r.t_ns, ...cols.map((n) => {
        const set = [r[`c${n}f`], r[`c${n}i`], r[`c${n}s`]].filter((v) => v !== null);
        assert.ok(set.length <= 1, `${table} c${n}: more than one of f/i/s set`);
        return r[`c${n}f`] !== null ? float(r[`c${n}f`] as number) : r[`c${n}i`] !== null ? `i:${r[`c${n}i`]}` : r[`c${n}s`] !== null ? `s:${r[`c${n}s`]}` : null;
      })]);
    }
  }
  return out;
}

/** Row counts of the telemetry catalogue and the points of every shard table. */
async function telemetryCounts(db: Db): Promise<Record<string, number>> {
  await settleReads(db);
  const out: Record<string, number> = {};
  for (const table of ['telemetry_namespaces', 'telemetry_shards', 'telemetry_series', 'telemetry_fields']) {
    out[table] = (await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n;
  }
  let points = 0;
  for (const { table_name: table } of await db.all(sql<{ table_name: string }>`SELECT table_name FROM telemetry_shards`)) {
    points += (await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n;
  }
  out.points = points;
  return out;
}

const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
};

test('copy SQLite -> PostgreSQL -> SQLite, SQLite -> SQLite, PostgreSQL -> PostgreSQL: the same answers, telemetry included, counts verified, an empty target required', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gk-copy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = join(dir, 'first.db');
  const env = { GRIDKEEPER_DATA_DIR: dir, GRIDKEEPER_LOG: 'error' };

  // an installation with roles, a company, members, devices, monitors, licenses, a customer and order, an API token,
  // audit entries and telemetry
  const source = openDatabase({ file: first });
  const { api, token } = await appOn(source, dir);
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await api(method, path, body, token);
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const company = await ok('POST', '/v1/role?parentRoleId=1', { role: { name: 'Acme', selfRights: FLAGS, isCompany: true }, manages: FLAGS });
  const site = await ok('POST', `/v1/role?parentRoleId=${company.role.id}`, { role: { name: 'site', selfRights: FLAGS }, manages: FLAGS });
  const device = await ok('POST', `/v1/device?roleId=${site.role.id}`, { properties: { nodeId: 'n1', nodeType: 'controller', name: 'Main' } });
  await ok('POST', `/v1/device?roleId=${site.role.id}`, { properties: { nodeId: 'n2', name: 'Battery', z: { a: 1 } } });
  await ok('PATCH', `/v1/device/${device.device.id}`, [{ op: 'replace', path: '/name', value: 'Main controller' }]);
  const [license] = (await ok('POST', '/v1/license', { type: 'residential', duration: 30 })).licenses;
  const customer = (await ok('POST', `/v1/customer?roleId=${company.role.id}`, { name: 'Customer' })).customer;
  const [spare] = (await ok('POST', '/v1/license', { type: 'commercial', duration: 365, solarKw: 10 })).licenses;
  await ok('POST', `/v1/customer/${customer.id}/order`, { licenseIds: [spare.id] });
  await ok('POST', '/user/tokens', { name: 'gateway', scopes: ['api'] });
  await writeTelemetry(ok);
  // the telemetry queries below cost more than the default tier's bucket holds
  await source.run(sql`UPDATE users SET tier = 'premium' WHERE email = 'admin@localhost'`);
  assert.ok(license.id);
  const before = await answers(api, token);
  const telemetryBefore = await telemetryAnswers(api, token);
  const rowsBefore = await shardRows(source);
  const countsBefore = await telemetryCounts(source);
  // the answers hold what the copies must keep exactly
  for (const value of ['9007199254740993', '-9007199254740993', '9223372036854775807', '-9223372036854775808', '1.7976931348623157e+308',
    '0.30000000000000004', '"2026-01-01T00:00:00.001000123Z"', '"1969-12-31T00:00:00.017Z"', 'ünïcødé ✓ 🙂']) {
    assert.ok(telemetryBefore[0].includes(value), `${value} in ${telemetryBefore[0].slice(0, 1500)}`);
  }
  assert.ok(!telemetryBefore.some((text) => text.includes('"error"')), telemetryBefore.find((text) => text.includes('"error"')));
  // energy: 5 one-day shards (one of them 1969's), 5 series, 6 + 2 + 2 + 1 points and the meter's; site: 2 shards,
  // 2 series, 3 points; acme/meters_one_h: 2 ninety-day shards, 1 series, 2 points
  assert.deepEqual(countsBefore, {
    telemetry_namespaces: 3, telemetry_shards: 9, telemetry_series: 8, telemetry_fields: 6 + 3 + 2 + 2 + 4 + 2, points: 11 + METER_POINTS + 3 + 2,
  });
  assert.ok(Object.keys(rowsBefore).some((table) => table.endsWith('_m1')), 'a shard before 1970');
  await source.close();

  // to PostgreSQL, telemetry included
  const pgUrl = await emptyTarget(t);
  const copied = capture();
  assert.equal(await runCli(['copy', '--from', first, '--to', pgUrl], env, copied.io), 0, copied.err.join('\n'));
  assert.match(copied.out.join('\n'), new RegExp(`copied \\d+ rows in 36 tables and ${countsBefore.points} telemetry points in 9 shard tables; row and point counts verified$`));
  assert.match(copied.err.join('\n'), /copy: devices 2 rows/);
  assert.match(copied.err.join('\n'), new RegExp(`copy: telemetry_shard_1_\\d+ ${METER_POINTS + 1} points`));

  const onPg = openPostgres({ url: pgUrl });
  t.after(() => onPg.close());
  assert.deepEqual(await telemetryCounts(onPg), countsBefore);
  assert.deepEqual(await shardRows(onPg), rowsBefore);
  const pgApp = await appOn(onPg, dir);
  const afterPg = await answers(pgApp.api, pgApp.token);
  // the new session's login is recorded in the audit log: compare what was copied
  const audit = (list: unknown[]) => ({ ...list, 4: (list[4] as { entries: { action: string }[] }).entries.filter((e) => e.action !== 'auth.login') });
  assert.deepEqual(audit(afterPg), audit(before));
  const telemetryOnPg = await telemetryAnswers(pgApp.api, pgApp.token);
  assertSameAnswers(sameDoubles(telemetryOnPg), sameDoubles(telemetryBefore), 'SQLite -> PostgreSQL');
  // a second copy into a database that holds data is refused, and changes nothing
  const again = capture();
  assert.equal(await runCli(['copy', '--from', first, '--to', pgUrl], env, again.io), 2);
  assert.match(again.err.join('\n'), /already holds data/);
  assert.deepEqual(await telemetryCounts(onPg), countsBefore);

  // and back to SQLite
  const second = join(dir, 'second.db');
  const back = capture();
  assert.equal(await runCli(['copy', '--from', pgUrl, '--to', second], env, back.io), 0, back.err.join('\n'));
  assert.match(back.out.join('\n'), new RegExp(`and ${countsBefore.points} telemetry points in 9 shard tables`));
  const roundTrip = openDatabase({ file: second });
  t.after(() => roundTrip.close());
  assert.deepEqual(await telemetryCounts(roundTrip), countsBefore);
  assert.deepEqual(await shardRows(roundTrip), rowsBefore);
  const sqliteApp = await appOn(roundTrip, dir);
  assert.deepEqual(audit(await answers(sqliteApp.api, sqliteApp.token)), audit(before));
  assertSameAnswers(await telemetryAnswers(sqliteApp.api, sqliteApp.token), telemetryBefore, 'SQLite -> PostgreSQL -> SQLite');
  const counts = await roundTrip.get(sql<{ devices: number; licenses: number }>`SELECT (SELECT count(*) FROM devices) AS devices, (SELECT count(*) FROM licenses) AS licenses`);
  assert.deepEqual(counts, { devices: 2, licenses: 2 });

  // SQLite -> SQLite and PostgreSQL -> PostgreSQL
  const third = join(dir, 'third.db');
  const sameSqlite = capture();
  assert.equal(await runCli(['copy', '--from', first, '--to', third], env, sameSqlite.io), 0, sameSqlite.err.join('\n'));
  const onThird = openDatabase({ file: third });
  t.after(() => onThird.close());
  assert.deepEqual(await shardRows(onThird), rowsBefore);
  const thirdApp = await appOn(onThird, dir);
  assertSameAnswers(await telemetryAnswers(thirdApp.api, thirdApp.token), telemetryBefore, 'SQLite -> SQLite');
  const pgUrl2 = await emptyTarget(t);
  const samePg = capture();
  assert.equal(await runCli(['copy', '--from', pgUrl, '--to', pgUrl2], env, samePg.io), 0, samePg.err.join('\n'));
  const onPg2 = openPostgres({ url: pgUrl2 });
  t.after(() => onPg2.close());
  assert.deepEqual(await shardRows(onPg2), rowsBefore);
  const pg2App = await appOn(onPg2, dir);
  assertSameAnswers(await telemetryAnswers(pg2App.api, pg2App.token), telemetryOnPg, 'PostgreSQL -> PostgreSQL');

  // on PostgreSQL new rows continue after the copied ids: devices, telemetry namespaces and series
  const another = await pgApp.api('POST', `/v1/device?roleId=${site.role.id}`, { properties: { nodeId: 'n3' } }, pgApp.token);
  assert.equal(another.status, 200, JSON.stringify(another.body));
  assert.ok(another.body.device.id > device.device.id);
  const maxIds = async () => onPg.get(sql<{ ns: number; series: number }>`SELECT (SELECT max(id) FROM telemetry_namespaces) AS ns, (SELECT max(id) FROM telemetry_series) AS series`);
  const idsBefore = (await maxIds())!;
  const write = await pgApp.api('POST', '/v1/telemetry?db=fresh&precision=ms', `power,nodeId=n3 p=1 ${T}\npower,nodeId=n1,phase=L3 p=2 ${T}`, pgApp.token);
  assert.equal(write.status, 204, JSON.stringify(write.body));
  const more = await pgApp.api('POST', '/v1/telemetry?db=energy&rp=autogen&precision=ms', `power,nodeId=n1,phase=L9 p=3 ${T + 5}`, pgApp.token);
  assert.equal(more.status, 204, JSON.stringify(more.body));
  const idsAfter = (await maxIds())!;
  assert.equal(idsAfter.ns, idsBefore.ns + 1);
  assert.equal(idsAfter.series, idsBefore.series + 3);
});

/** An SQLite source in a temporary dir: a site role, device n1 in it, and one point of n1 with `fields`. */
async function sourceWithPoint(t: TestContext, fields: string) {
  const dir = mkdtempSync(join(tmpdir(), 'gk-copy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'source.db');
  const env = { GRIDKEEPER_DATA_DIR: dir, GRIDKEEPER_LOG: 'error' };
  const source = openDatabase({ file });
  const { api, token } = await appOn(source, dir);
  const site = await api('POST', '/v1/role?parentRoleId=1', { role: { name: 'site', selfRights: FLAGS }, manages: FLAGS }, token);
  assert.equal((await api('POST', `/v1/device?roleId=${site.body.role.id}`, { properties: { nodeId: 'n1' } }, token)).status, 200);
  assert.equal((await api('POST', '/v1/telemetry?db=energy&precision=ms', `power,nodeId=n1 ${fields} ${T}`, token)).status, 204);
  return { dir, file, env, source };
}

test('copy --skip-telemetry leaves the telemetry behind, and says so', async (t) => {
  const { dir, file, env, source } = await sourceWithPoint(t, 'p=1.5');
  await source.close();
  for (const to of [await emptyTarget(t), join(dir, 'target.db')]) {
    const c = capture();
    assert.equal(await runCli(['copy', '--from', file, '--to', to, '--skip-telemetry'], env, c.io), 0, c.err.join('\n'));
    assert.match(c.out.join('\n'), /copied \d+ rows in 30 tables; row counts verified \(telemetry not copied: --skip-telemetry\)/);
    assert.doesNotMatch(c.err.join('\n'), /telemetry/);
    const target = to.startsWith('postgres') ? openPostgres({ url: to }) : openDatabase({ file: to });
    try {
      assert.deepEqual(await telemetryCounts(target), { telemetry_namespaces: 0, telemetry_shards: 0, telemetry_series: 0, telemetry_fields: 0, points: 0 });
      assert.equal((await target.get(sql<{ n: number }>`SELECT count(*) AS n FROM devices`))!.n, 1);
    } finally {
      await target.close();
    }
  }
});

test('a shard row the target cannot hold exactly aborts the copy and leaves the target empty', async (t) => {
  const { dir, file, env, source } = await sourceWithPoint(t, 'p=1.5,s="a"');
  const { table_name: shard } = (await source.get(sql<{ table_name: string }>`SELECT table_name FROM telemetry_shards`))!;
  const copyTo = async (to: string, pattern: RegExp) => {
    const c = capture();
    assert.equal(await runCli(['copy', '--from', file, '--to', to], env, c.io), 2);
    assert.match(c.err.join('\n'), pattern);
    const target = to.startsWith('postgres') ? openPostgres({ url: to }) : openDatabase({ file: to });
    try {
      for (const table of ['users', 'devices', 'telemetry_namespaces', 'telemetry_shards']) {
        assert.equal((await target.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`))!.n, 0, table);
      }
      assert.equal((await target.get(sql<{ n: number }>`SELECT count(*) AS n FROM ${target.backend === 'postgres'
        ? sql`pg_tables WHERE tablename = ${shard}` : sql`sqlite_schema WHERE name = ${shard}`}`))!.n, 0);
    } finally {
      await target.close();
    }
  };
  // on PostgreSQL, a value beside the column of its field's type
  const pgSource = await emptyTarget(t);
  const fine = capture();
  assert.equal(await runCli(['copy', '--from', file, '--to', pgSource], env, fine.io), 0, fine.err.join('\n'));
  const onPg = openPostgres({ url: pgSource });
  await onPg.run(sql`UPDATE ${sql.table(shard)} SET c0i = 1`);
  await onPg.close();
  const wrong = capture();
  assert.equal(await runCli(['copy', '--from', pgSource, '--to', join(dir, 'c.db')], env, wrong.io), 2);
  assert.match(wrong.err.join('\n'), /field number 0: a value outside the column of its field's type \(float\); nothing was kept/);
  // a string PostgreSQL text cannot hold (older SQLite installations could store U+0000)
  await source.run(sql`UPDATE ${sql.table(shard)} SET c1 = ${'a\u0000b'}`);
  await copyTo(await emptyTarget(t), /U\+0000, which PostgreSQL text cannot store; nothing was kept/);
  // a float field holding text, and points of a series the catalogue does not know
  await source.run(sql`UPDATE ${sql.table(shard)} SET c1 = 'a', c0 = 'x'`);
  await copyTo(join(dir, 'a.db'), /the float field holds text; nothing was kept/);
  await source.run(sql`UPDATE ${sql.table(shard)} SET c0 = 1.5, series_id = 999`);
  await copyTo(join(dir, 'b.db'), /points of series 999, which telemetry_series does not hold/);
  await source.close();
});

test('copy refuses the same database twice, a missing source, and missing flags (exit 2)', async () => {
  const c = capture();
  assert.equal(await runCli(['copy', '--from', '/nonexistent/x.db', '--to', '/tmp/y.db'], {}, c.io), 2);
  assert.match(c.err.join('\n'), /no such file/);
  const d = capture();
  assert.equal(await runCli(['copy', '--to', '/tmp/y.db'], {}, d.io), 2);
  assert.match(d.err.join('\n'), /--from and --to are required/);
  const e = capture();
  assert.equal(await runCli(['copy', '--from', 'postgres://u:secret@h/db', '--to', 'postgres://u:other@h/db'], {}, e.io), 2);
  assert.match(e.err.join('\n'), /same database/);
  assert.doesNotMatch(e.err.join('\n'), /secret/);
});
