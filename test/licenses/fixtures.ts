// Fixtures for the license tests. Roles, members, devices and monitors are written with direct SQL (their HTTP APIs
// belong to other domains); licenses are created through POST /v1/license as the admin. The fixtures that touch the
// database go through its handle (t.deps.db) and return promises: await them.
import assert from 'node:assert/strict';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { TestApp } from '../support/app.ts';
import { createApp } from '../../src/boot/app.ts';
import type { Deps } from '../../src/context/deps.ts';

const NO_RIGHTS = {
  self_role_management: 0, self_user_management: 0, self_view_management: 0,
  self_device_management: 0, self_report_management: 0, self_alarm_management: 0,
} as const;

export async function createRole(t: TestApp, name: string): Promise<number> {
  const { db } = t.deps;
  return (await db.get(db.qb.insertInto('roles').values({ name, ...NO_RIGHTS, password_hash: null, created_at: t.clock.now() }).returning('id')))!.id;
}

/** A manages relation without any flags: enough for reach (device access follows reach). */
export async function addManages(t: TestApp, parentRoleId: number, childRoleId: number): Promise<void> {
  const { db } = t.deps;
  await db.run(db.qb.insertInto('manages').values({
    parent_role_id: parentRoleId, child_role_id: childRoleId,
    role_management: 0, user_management: 0, view_management: 0, device_management: 0, report_management: 0, alarm_management: 0,
  }));
}

export async function addMember(t: TestApp, roleId: number, userId: number): Promise<void> {
  const { db } = t.deps;
  await db.run(db.qb.insertInto('members').values({ role_id: roleId, user_id: userId }));
}

export async function createDevice(t: TestApp, properties: Record<string, unknown>): Promise<number> {
  const { db } = t.deps;
  const now = t.clock.now();
  return (await db.get(db.qb.insertInto('devices').values({ properties: JSON.stringify(properties), last_update: now, created_at: now }).returning('id')))!.id;
}

export async function addMonitor(t: TestApp, roleId: number, deviceId: number, opts: { monitorManagement: boolean; reads?: string[]; edits?: string[] }): Promise<void> {
  const { db } = t.deps;
  await db.run(db.qb.insertInto('monitors').values({
    role_id: roleId, device_id: deviceId, monitor_management: opts.monitorManagement ? 1 : 0,
    reads: JSON.stringify(opts.reads ?? []), edits: JSON.stringify(opts.edits ?? []),
  }));
}

export interface User { id: number; token: string }

/**
 * A controller `nodeId` and four users around it:
 * - manager: member of a role monitoring it with monitorManagement;
 * - reader: member of a role monitoring it without monitorManagement (reads `name`);
 * - upper: member of a role that manages the reader's role (reads through reach, no monitorManagement);
 * - stranger: member of a role with no relation to it.
 */
export async function controllerScene(t: TestApp, nodeId = 'ctrl-1'): Promise<{
  nodeId: string; deviceId: number; managerRole: number; manager: User; reader: User; upper: User; stranger: User;
}> {
  const deviceId = await createDevice(t, { nodeId, nodeType: 'smartgridController', name: `controller ${nodeId}` });
  const managerRole = await createRole(t, `managers of ${nodeId}`);
  const readerRole = await createRole(t, `readers of ${nodeId}`);
  const upperRole = await createRole(t, `above readers of ${nodeId}`);
  const strangerRole = await createRole(t, `strangers to ${nodeId}`);
  await addMonitor(t, managerRole, deviceId, { monitorManagement: true });
  await addMonitor(t, readerRole, deviceId, { monitorManagement: false, reads: ['name'] });
  await addManages(t, upperRole, readerRole);
  const users: User[] = [];
  for (const [who, role] of [['manager', managerRole], ['reader', readerRole], ['upper', upperRole], ['stranger', strangerRole]] as const) {
    const user = await t.createUser(`${who}.${nodeId}@test`);
    await addMember(t, role, user.id);
    users.push(user);
  }
  const [manager, reader, upper, stranger] = users;
  return { nodeId, deviceId, managerRole, manager, reader, upper, stranger };
}

/** Creates licenses as the admin; returns the License JSON objects. */
export async function createLicenses(t: TestApp, body: Record<string, unknown> = {}): Promise<any[]> {
  const res = await t.request('POST', '/v1/license', { token: t.adminToken, body: { type: 'residential', duration: 365, ...body } });
  assert.equal(res.status, 200, res.text);
  return res.body.licenses;
}

export async function createLicense(t: TestApp, body: Record<string, unknown> = {}): Promise<any> {
  return (await createLicenses(t, body))[0];
}

/** Claims as the given user and asserts success. */
export async function claim(t: TestApp, user: User, licenseKey: string, nodeId: string): Promise<void> {
  const res = await t.request('POST', '/v1/license/claim', { token: user.token, body: { licenseKey, nodeId } });
  assert.equal(res.status, 200, res.text);
}

export async function licenseRow(t: TestApp, id: string) {
  const { db } = t.deps;
  return db.get(db.qb.selectFrom('licenses').selectAll().where('id', '=', id));
}

export async function datalinks(t: TestApp) {
  const { db } = t.deps;
  return db.all(db.qb.selectFrom('license_datalink').select(['license_id', 'device_id', 'created_at']).orderBy('id'));
}

/** The app of these deps on a real HTTP server (127.0.0.1, a free port), for tests that need real concurrency. */
export async function startHttp(deps: Deps): Promise<{ url: string; close(): Promise<void> }> {
  const { app } = createApp(deps);
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () => new Promise<void>((done) => { (server as Server).closeAllConnections(); (server as Server).close(() => done()); }),
      });
    });
  });
}

/** A JSON POST over real HTTP; status and parsed body. */
export async function postJson(url: string, token: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
