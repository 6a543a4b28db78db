// Audit entries of API tokens (created, used as the actor, revoked), customers and orders, and the password reset
// (the link asked for, the reset done by its holder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestApp, ADMIN_EMAIL, ROOT_ROLE_ID } from '../support/app.ts';
import { added, auditText, core, FLAGS_ALL, FLAGS_NONE, refusedWithoutEntry } from './fixtures.ts';
import { issueResetToken } from '../../src/auth/password-reset.ts';

test('API tokens: created and revoked by the user; a request made with one names the token in the actor', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const me = { userId: app.adminId, email: ADMIN_EMAIL };
  const made = await added(app, () => app.request('POST', '/user/tokens', { token: app.adminToken, body: { name: 'gateway', scopes: ['api'] } }), 201);
  const id = made.res.body.id;
  assert.deepEqual(made.entries.map(core), [{
    actor: { ...me, token: 'access' }, action: 'user.token.create', target: { kind: 'api-token', id },
    changes: { name: { after: 'gateway' }, scopes: { after: ['api'] }, expiresAt: { after: null } },
  }]);
  const role = await added(app, () => app.request('POST', `/v1/role?parentRoleId=${ROOT_ROLE_ID}`,
    { token: made.res.body.token, body: { role: { name: 'by-token', selfRights: FLAGS_NONE }, manages: FLAGS_ALL } }));
  assert.deepEqual(role.entries[0].actor, { ...me, token: 'api', apiTokenId: id });
  assert.equal(role.entries[0].action, 'role.create');
  const gone = await added(app, () => app.request('DELETE', `/user/tokens/${id}`, { token: app.adminToken }), 204);
  assert.deepEqual(gone.entries.map(core), [{ actor: { ...me, token: 'access' }, action: 'user.token.delete', target: { kind: 'api-token', id }, changes: { token: { after: 'revoked' } } }]);
  await refusedWithoutEntry(app, 404, () => app.request('DELETE', `/user/tokens/${id}`, { token: app.adminToken }));
  assert.equal((await auditText(app)).includes(made.res.body.token), false, 'the secret is never recorded');
});

test('customers and orders', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const me = { userId: app.adminId, email: ADMIN_EMAIL, token: 'access' };
  const customer = await added(app, () => app.request('POST', `/v1/customer?roleId=${ROOT_ROLE_ID}`, { token: app.adminToken, body: { name: 'Acme' } }));
  const cid = customer.res.body.customer.id;
  assert.deepEqual(customer.entries.map(core), [{ actor: me, action: 'customer.create', target: { kind: 'customer', id: cid }, changes: { name: { after: 'Acme' }, roleId: { after: ROOT_ROLE_ID } } }]);
  const [license] = (await app.request('POST', '/v1/license', { token: app.adminToken, body: { type: 'residential', duration: 30 } })).body.licenses;
  const order = await added(app, () => app.request('POST', `/v1/customer/${cid}/order`, { token: app.adminToken, body: { licenseIds: [license.id] } }));
  assert.deepEqual(order.entries.map(core), [{
    actor: me, action: 'order.create', target: { kind: 'order', id: order.res.body.order.id }, changes: { customerId: { after: cid }, licenseIds: { after: [license.id] } },
  }]);
  await refusedWithoutEntry(app, 409, () => app.request('POST', `/v1/customer/${cid}/order`, { token: app.adminToken, body: { licenseIds: [license.id] } }));
});

test('password reset: the link asked for (no actor), the reset done as the user; a bad token writes nothing', async (t) => {
  const app = await makeTestApp();
  t.after(() => app.close());
  const asked = await added(app, () => app.request('POST', '/v1/auth/forgot-password', { body: { email: ADMIN_EMAIL } }), 204);
  assert.deepEqual(asked.entries.map(core), [{
    actor: { userId: null, email: null, token: null }, action: 'user.password.reset-link', target: { kind: 'user', id: app.adminId }, changes: { resetLink: { after: 'issued' } },
  }]);
  app.clock.advance(61_000);
  const unknown = await added(app, () => app.request('POST', '/v1/auth/forgot-password', { body: { email: 'nobody@example.test' } }), 204);
  assert.deepEqual(unknown.entries, [], 'an address without an account leaves no entry');
  await refusedWithoutEntry(app, 400, () => app.request('POST', '/v1/auth/reset-password', { body: { token: 'A'.repeat(43), newPassword: 'a-brand-new-password' } }));
  const token = await issueResetToken(app.deps.db, app.adminId, app.clock.now());
  const reset = await added(app, () => app.request('POST', '/v1/auth/reset-password', { body: { token, newPassword: 'a-brand-new-password' } }), 204);
  assert.deepEqual(reset.entries.map(core), [{
    actor: { userId: app.adminId, email: ADMIN_EMAIL, token: null }, action: 'user.password', target: { kind: 'user', id: app.adminId },
    changes: { password: { after: 'reset' }, sessionsRevoked: 0 },
  }]);
  assert.equal((await auditText(app)).includes(token), false);
});
