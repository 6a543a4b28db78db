// `gridkeeper copy`: SQLite -> PostgreSQL -> SQLite gives the same answers to a fixed set of API calls; the target must
// be empty; telemetry to PostgreSQL needs --skip-telemetry; a failed copy leaves the target as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { runCli } from '../../src/cli.ts';
import { createApp } from '../../src/app.ts';
import { createDeps } from '../../src/runtime.ts';
import { parseConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { openDatabase, type Db } from '../../src/db/open.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { emptyPostgres } from '../support/postgres.ts';

const ADMIN_PASSWORD = 'copy-admin-password';
const SECRET_KEY = randomBytes(32).toString('base64');
const FLAGS = { roleManagement: true, userManagement: true, viewManagement: false, deviceManagement: true, reportManagement: false, alarmManagement: false };

/** An empty database on the test server, dropped when the test ends. */
async function emptyTarget(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const db = await emptyPostgres();
  t.after(() => db.drop());
  return db.url;
}

type Api = (method: string, path: string, body?: unknown, token?: string) => Promise<{ status: number; body: any }>;

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
    return { status: res.status, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
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

const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
};

test('copy SQLite -> PostgreSQL -> SQLite: the same answers, counts verified, an empty target required', async (t) => {
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
  await ok('POST', `/v1/telemetry?db=energy&rp=autogen&precision=ms`, 'power,nodeId=n1 p=1.5 1767225600000');
  assert.ok(license.id);
  const before = await answers(api, token);
  await source.close();

  // to PostgreSQL: the telemetry must be left behind on purpose
  const pgUrl = await emptyTarget(t);
  const refused = capture();
  assert.equal(await runCli(['copy', '--from', first, '--to', pgUrl], env, refused.io), 2);
  assert.match(refused.err.join('\n'), /holds telemetry .*--skip-telemetry/);
  const copied = capture();
  assert.equal(await runCli(['copy', '--from', first, '--to', pgUrl, '--skip-telemetry'], env, copied.io), 0, copied.err.join('\n'));
  assert.match(copied.out.join('\n'), /copied \d+ rows in \d+ tables; row counts verified \(telemetry not copied/);
  assert.match(copied.err.join('\n'), /copy: devices 2 rows/);

  const onPg = openPostgres({ url: pgUrl });
  t.after(() => onPg.close());
  const pgApp = await appOn(onPg, dir);
  const afterPg = await answers(pgApp.api, pgApp.token);
  // the new session's login is recorded in the audit log: compare what was copied
  const audit = (list: unknown[]) => ({ ...list, 4: (list[4] as { entries: { action: string }[] }).entries.filter((e) => e.action !== 'auth.login') });
  assert.deepEqual(audit(afterPg), audit(before));
  // a second copy into a database that holds data is refused, and changes nothing
  const again = capture();
  assert.equal(await runCli(['copy', '--from', first, '--to', pgUrl, '--skip-telemetry'], env, again.io), 2);
  assert.match(again.err.join('\n'), /already holds data/);

  // and back to SQLite
  const second = join(dir, 'second.db');
  const back = capture();
  assert.equal(await runCli(['copy', '--from', pgUrl, '--to', second], env, back.io), 0, back.err.join('\n'));
  const roundTrip = openDatabase({ file: second });
  t.after(() => roundTrip.close());
  const sqliteApp = await appOn(roundTrip, dir);
  assert.deepEqual(audit(await answers(sqliteApp.api, sqliteApp.token)), audit(before));
  const counts = await roundTrip.get(sql<{ devices: number; licenses: number }>`SELECT (SELECT count(*) FROM devices) AS devices, (SELECT count(*) FROM licenses) AS licenses`);
  assert.deepEqual(counts, { devices: 2, licenses: 2 });

  // on PostgreSQL new rows continue after the copied ids
  const another = await pgApp.api('POST', `/v1/device?roleId=${site.role.id}`, { properties: { nodeId: 'n3' } }, pgApp.token);
  assert.equal(another.status, 200, JSON.stringify(another.body));
  assert.ok(another.body.device.id > device.device.id);
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
