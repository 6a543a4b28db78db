// Every write of the HTTP API goes one way: a unit of work handed to Db.write (group commit), never a transaction of
// its own nor an autocommitted statement. The spy counts writes that bypass it while a tour of write routes runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { compileQuery } from '../../src/db/open.ts';
import { makeTestApp, ADMIN_EMAIL, ADMIN_PASSWORD, ROOT_ROLE_ID } from '../support/app.ts';
import { accessFrom, enableTotp, loginRefresh, totpCode } from '../support/auth-helpers.ts';
import { addDevice, addMonitors } from '../roles/fixtures.ts';

const FLAGS = { roleManagement: true, userManagement: true, viewManagement: false, deviceManagement: true, reportManagement: false, alarmManagement: false };
const NO_FLAGS = { roleManagement: false, userManagement: false, viewManagement: false, deviceManagement: false, reportManagement: false, alarmManagement: false };
const WRITE = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

test('role, member, manages, device, license, tier, password, session, 2FA, customer, reset and API-token writes all go through Db.write', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const db = app.deps.db;
  // fixtures are written straight into the database, before the spy: they are no route's writes
  const other = await addDevice(app);
  await addMonitors(app, ROOT_ROLE_ID, other, { mm: true });
  // Inside a unit every statement runs on the transaction handle the unit was given; the root handle is for reads.
  // So a write on the root handle, or a transaction of its own, is a bypass.
  const { write, tx, run, get, all } = db;
  let units = 0;
  const bypasses: string[] = [];
  const sqlOf = (q: Parameters<typeof db.run>[0]) => compileQuery(q).sql;
  db.write = (unit) => { units++; return write(unit); };
  db.tx = (fn) => { bypasses.push('a transaction of its own'); return tx(fn); };
  db.run = (q) => { bypasses.push(`autocommit: ${sqlOf(q).slice(0, 60)}`); return run(q); };
  db.get = (q) => { if (WRITE.test(sqlOf(q))) bypasses.push(`autocommit: ${sqlOf(q).slice(0, 60)}`); return get(q); };
  db.all = (q) => { if (WRITE.test(sqlOf(q))) bypasses.push(`autocommit: ${sqlOf(q).slice(0, 60)}`); return all(q); };

  const token = app.adminToken;
  const ok = async (method: string, path: string, body?: unknown, status = 200, auth = token) => {
    const res = await app.request(method, path, { token: auth, body });
    assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
    return res.body;
  };
  const created = await ok('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, {
    role: { name: 'site', selfRights: NO_FLAGS }, manages: FLAGS,
  });
  const roleId = created.role.id;
  await ok('PUT', `/v1/role/${roleId}`, { name: 'site-2', selfRights: NO_FLAGS });
  await ok('PUT', `/v1/role/${ROOT_ROLE_ID}/manages/${created.manages.id}`, FLAGS);
  const member = await ok('PUT', `/v1/role/${roleId}/member?userEmail=new@example.test&password=new-user-password`, {});
  await ok('DELETE', `/v1/role/${roleId}/member/${member.member.id}`);
  const device = await ok('POST', `/v1/device?roleId=${roleId}`, { properties: { nodeId: 'ctl-1', nodeType: 'smartgridController' } });
  await ok('PATCH', `/v1/device/${device.device.id}`, [{ op: 'add', path: '/name', value: 'x' }]);
  await ok('PUT', `/v1/role/${roleId}/monitors?deviceId=${other}`, { monitorManagement: false, reads: [], edits: [] });
  const [license] = (await ok('POST', '/v1/license', { type: 'residential', duration: 365 })).licenses;
  await ok('POST', '/v1/license/claim', { licenseKey: license.key, nodeId: 'ctl-1' });
  await ok('POST', '/v1/license/activate', { key: license.key });
  await ok('PUT', `/v1/user/${ADMIN_EMAIL}/tier`, { tier: 'premium' }, 204);
  const refresh = await loginRefresh(app, ADMIN_EMAIL, ADMIN_PASSWORD);
  const access = await accessFrom(app, refresh);
  const { secret } = await enableTotp(app, access);
  const sudo = (await ok('POST', '/user/2fa/totp/authenticate', { totp: totpCode(app, secret, 1) }, 200, access)).sudoToken;
  await ok('POST', '/user/2fa/recovery-code/regenerate', undefined, 200, sudo);
  await ok('DELETE', '/user/2fa', undefined, 204, sudo);
  await ok('PUT', '/user/password', { newPassword: 'another-password-1' }, 204, sudo);
  const res = await app.request('POST', '/auth/logout', { token: refresh });
  assert.equal(res.status, 401, 'the password change ended the session');

  // companies, customers and orders, forgot and reset password (a new token: the change voided the earlier ones)
  const now = await app.token(app.adminId);
  const company = await ok('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`, { role: { name: 'co', selfRights: NO_FLAGS, isCompany: true }, manages: FLAGS }, 200, now);
  const customer = (await ok('POST', `/v1/customer?roleId=${company.role.id}`, { name: 'Acme' }, 200, now)).customer;
  const [spare] = (await ok('POST', '/v1/license', { type: 'residential', duration: 30 }, 200, now)).licenses;
  await ok('POST', `/v1/customer/${customer.id}/order`, { licenseIds: [spare.id] }, 200, now);
  // API tokens: created, used (its last use recorded), deleted
  const apiToken = await ok('POST', '/user/tokens', { name: 'gateway', scopes: ['api'] }, 201, now);
  await ok('POST', '/v1/role/query', {}, 200, apiToken.token);
  await ok('DELETE', `/user/tokens/${apiToken.id}`, undefined, 204, now);
  assert.equal((await db.get(sql<{ n: number }>`SELECT count(*) AS n FROM api_tokens`))!.n, 0); // between requests: no transaction open
  const forgot = await app.request('POST', '/v1/auth/forgot-password', { body: { email: ADMIN_EMAIL } });
  assert.equal(forgot.status, 204, forgot.text);
  const reset = await app.request('POST', '/v1/auth/reset-password', { body: { token: 'A'.repeat(43), newPassword: 'yet-another-password' } });
  assert.equal(reset.status, 400, reset.text);

  assert.deepEqual(bypasses, []);
  assert.ok(units >= 20, `expected every write route to hand in a unit, saw ${units}`);
});
