// Cross-tenant access over every id-bearing route, generated from the route registry, against the running executable.
// Two tenants — separate role subtrees under root, each with a member user, sub-roles, devices (one a controller),
// monitors relations, members, licenses claimed to its controller and telemetry — attack each other: every template
// of tenant-templates.ts (one or more per route) is sent with the victim's ids in every combination of its id slots
// (and as mixed lists [own, victim's]). Proven for every request:
//   - refused (403/404, or a refusal the contract names for that route), or for reads a 200 with nothing of the victim;
//   - the victim's rows in the database file (roles, relations, users, sessions, devices, licenses, links) and its
//     telemetry (read as the victim) are unchanged after every request that could write;
//   - the answer is the one a NON-EXISTENT id gets (status and code; the same body for reads): invisible objects are
//     indistinguishable from missing ones, except the oracles the contract itself defines (taken nodeIds, license keys);
//   - no secret of the victim (names, e-mails, keys, nodeIds, tag values) appears in an answer unless the request
//     itself carried it, and no object of the victim (by id and shape) does.
// The registry is the list of targets: a new route without a template (or a template missing a declared id slot)
// fails the test. Positive controls at the end show every template works with the attacker's own ids.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { makeTestApp } from '../support/app.ts';
import { createApp } from '../../src/boot/app.ts';
import type { AnyRouteSpec } from '../../src/http/route.ts';
import { isolatedBinary, type RunningBinary } from '../support/binary.ts';
import { httpClient, type HttpClient, type HttpResult } from '../support/http-client.ts';
import { inValues } from '../../src/db/in-list.ts';
import {
  ADMIN_EMAIL, ADMIN_PASSWORD, dropDatabases, loginOver, openCheckDb, serverErrors, startGridkeeper, type CheckDb,
} from '../support/harness.ts';
import { SELF_ONLY, TEMPLATES, type Kind, type Template } from './tenant-templates.ts';

const FLAGS = { roleManagement: true, userManagement: true, viewManagement: true, deviceManagement: true, reportManagement: true, alarmManagement: true };
const NOT_TELEMETRY_T = Date.UTC(2026, 0, 1, 0, 0, 0, 123);
const ROOT_ROLE = 1;

interface Tenant {
  name: string;
  token: string;
  http: HttpClient;
  userIds: number[];
  values: Record<Kind, (number | string)[]>;
  licenseIds: string[];
  /** strings only this tenant's data contains */
  secrets: string[];
}

let dir: string;
let run: RunningBinary;
let admin: HttpClient;
let adminToken: string;
let db: CheckDb;
let specs: AnyRouteSpec[];
let openapi: { paths: Record<string, Record<string, any>> };
const tenants: Record<'a' | 'b', Tenant> = {} as never;
const stats = { requests: 0, variants: 0, statuses: new Map<number, number>(), pastValidation: new Map<Template, number>() };
const GHOST: Record<Kind, number | string> = {
  role: 987_654, manages: 987_654, member: 987_654, device: 987_654, monitors: 987_654,
  nodeId: 'ghost-node', ctrl: 'ghost-ctrl', email: 'ghost@nowhere.test', key: 'GK-GHOST-GHOST-GHOST-GHOST-GHOST', apiToken: 987_654, user: 987_654,
  uuid: '00000000-0000-4000-8000-00000000dead', customer: '00000000-0000-4000-8000-00000000beef', license: '00000000-0000-4000-8000-00000000f00d',
  webhook: 987_654, delivery: 987_654, event: 'evt_AAAAAAAAAAAAAAAAAAAAAA', alarmRule: 987_654, alarm: 987_654,
};

function ok(r: HttpResult, what: string): any {
  assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.body;
}

async function makeTenant(name: string): Promise<Tenant> {
  const secret = `${name}secret`;
  const email = (who: string) => `${name}-${who}@tenant-${name}.test`;
  const top = ok(await admin.request('POST', '/v1/role?parentRoleId=1', { token: adminToken, body: { manages: FLAGS, role: { name: `${secret}-role-top`, selfRights: FLAGS } } }), 'top role');
  const T = top.role.id as number;
  // the top role is a company (marked by PUT, as an operator would)
  const company = ok(await admin.request('PUT', `/v1/role/${T}`, { token: adminToken, body: { name: `${secret}-role-top`, selfRights: FLAGS, isCompany: true } }), 'company').role;
  ok(await admin.request('PUT', `/v1/role/${T}/member?userEmail=${encodeURIComponent(email('owner'))}&password=tenant-password-1`, { token: adminToken, body: {} }), 'owner');
  const http = httpClient(run.url, { maxSockets: 4 });
  const token = (await loginOver(http, email('owner'), 'tenant-password-1')).access;
  const as = (method: string, path: string, body?: unknown) => http.request(method, path, { token, body });
  const r1 = ok(await as('POST', `/v1/role?parentRoleId=${T}`, { manages: FLAGS, role: { name: `${secret}-role-mid`, selfRights: FLAGS, password: `${secret}-join-password` } }), 'mid role');
  const r2 = ok(await as('POST', `/v1/role?parentRoleId=${r1.role.id}`, { manages: FLAGS, role: { name: `${secret}-role-deep`, selfRights: FLAGS } }), 'deep role');
  const T1 = r1.role.id as number;
  const T2 = r2.role.id as number;
  const m3 = ok(await as('PUT', `/v1/role/${T}/member?userEmail=${encodeURIComponent(email('colleague'))}&password=tenant-password-3`, {}), 'colleague').member.id;
  const m2 = ok(await as('PUT', `/v1/role/${T1}/member?userEmail=${encodeURIComponent(email('staff'))}&password=tenant-password-2`, {}), 'staff').member.id;
  const own = ok(await as('POST', `/v1/role/${T}/member/query`, { filter: { userEmail: [email('owner')] } }), 'own membership').member[0].id;
  const ctrl = ok(await as('POST', `/v1/device?roleId=${T}`, { properties: { nodeId: `${name}node-ctrl`, nodeType: 'smartgridController', name: `${secret}-device-ctrl`, nodeInfluxSeries: [] } }), 'controller');
  const meter = ok(await as('POST', `/v1/device?roleId=${T1}`, { properties: { nodeId: `${name}node-meter`, nodeType: 'powerMeter', name: `${secret}-device-meter` } }), 'meter');
  const deep = ok(await as('POST', `/v1/device?roleId=${T2}`, { properties: { nodeId: `${name}node-deep`, name: `${secret}-device-deep`, info: { serialNumber: `${secret}-serial` } } }), 'deep device');
  const shared = ok(await as('PUT', `/v1/role/${T1}/monitors?deviceId=${deep.device.id}`, { monitorManagement: false, reads: [`${secret}prop`], edits: ['name'] }), 'monitors');
  const licenses = ok(await admin.request('POST', '/v1/license', { token: adminToken, body: { type: 'commercial', duration: 90, count: 2, gridKw: 4321 } }), 'licenses').licenses as { id: string; key: string }[];
  for (const l of licenses) ok(await as('POST', '/v1/license/claim', { licenseKey: l.key, nodeId: `${name}node-ctrl` }), 'claim');
  ok(await as('POST', '/v1/license/activate', { key: licenses[0].key }), 'activate');
  const customer = ok(await as('POST', `/v1/customer?roleId=${T}`, { name: `${secret}-customer` }), 'customer').customer;
  ok(await admin.request('POST', `/v1/customer/${customer.id}/order`, { token: adminToken, body: { licenseIds: licenses.map((l) => l.id) } }), 'order');
  for (const [database, measurement] of [['shared_db', 'readings'], [`${secret}_db`, `${secret}_m`]]) {
    const lines = [0, 1, 2].map((i) => `${measurement},nodeId=${name}node-ctrl,site=${secret}-site v=${i + 1}i ${NOT_TELEMETRY_T + i * 1000}`).join('\n');
    const w = await http.request('POST', `/v1/telemetry?db=${database}&rp=autogen&precision=ms`, { token, raw: lines, headers: { 'content-type': 'text/plain' } });
    assert.equal(w.status, 204, w.text);
  }
  const apiToken = ok(await as('POST', '/user/tokens', { name: `${secret}-api-token`, scopes: ['api'] }), 'api token');
  // an MQTT subscription: no broker is configured, so its deliveries wait and no traffic leaves the machine
  const webhook = ok(await as('POST', `/v1/webhook?roleId=${T}`, { kind: 'mqtt', name: `${secret}-webhook`, topicPrefix: `${name}prefix` }), 'webhook').webhook;
  const tested = ok(await as('POST', `/v1/webhook/${webhook.id}/test`), 'test event');
  const delivery = ok(await as('POST', `/v1/webhook/${webhook.id}/delivery/query`, { filter: { eventId: tested.eventId } }), 'delivery log').deliveries[0];
  // an alarm rule on the controller's readings in a v2 namespace (its answers then hold no small number an id could
  // be mistaken for), and the alarm a later point raises, evaluated by the running service
  const writeV2 = async (v: number, at: number) => {
    const w = await http.request('POST', '/v1/telemetry?org=shared_org&bucket=alarms&precision=ms', { token, raw: `readings,nodeId=${name}node-ctrl v=${v} ${at}`, headers: { 'content-type': 'text/plain' } });
    assert.equal(w.status, 204, w.text);
  };
  await writeV2(0.25, NOT_TELEMETRY_T + 5000);
  const alarmRule = ok(await as('POST', `/v1/alarm/rule?roleId=${T}`, {
    name: `${secret}-rule`, deviceIds: [ctrl.device.id], series: { namespace: { version: '2', organization: 'shared_org', bucket: 'alarms' }, measurement: 'readings', field: 'v' },
    condition: { type: 'above', value: 5.5 }, severity: 'major',
  }), 'alarm rule').rule;
  await writeV2(9.25, NOT_TELEMETRY_T + 6000);
  let alarm: { id: number } | undefined;
  for (let i = 0; i < 200 && alarm === undefined; i++) {
    alarm = ok(await as('POST', '/v1/alarm/query', { filter: { ruleId: [alarmRule.id] } }), 'alarms').alarms[0];
    if (alarm === undefined) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(alarm, `the tenant's alarm was raised; server errors: ${serverErrors(run).join(' | ')}`);
  const userIds = (await db.all(sql<{ id: number }>`SELECT id FROM users WHERE email IN (${email('owner')}, ${email('colleague')}, ${email('staff')}) ORDER BY id`)).map((r) => r.id);
  return {
    name, token, http, userIds,
    values: {
      role: [T, T1, T2],
      manages: [r1.manages.id, r2.manages.id],
      member: [m3, m2, own],
      device: [ctrl.device.id, meter.device.id, deep.device.id],
      monitors: [ctrl.monitors.id, meter.monitors.id, shared.monitors.id],
      nodeId: [`${name}node-ctrl`, `${name}node-meter`, `${name}node-deep`],
      ctrl: [`${name}node-ctrl`],
      email: [email('colleague'), email('staff'), email('owner')],
      key: licenses.map((l) => l.key),
      uuid: [company.uuid],
      customer: [customer.id],
      license: licenses.map((l) => l.id),
      apiToken: [apiToken.id],
      user: userIds,
      webhook: [webhook.id],
      delivery: [delivery.id],
      event: [tested.eventId],
      alarmRule: [alarmRule.id],
      alarm: [alarm.id],
    },
    licenseIds: licenses.map((l) => l.id),
    secrets: [secret, `${name}node-`, `@tenant-${name}.test`, ...licenses.map((l) => l.key), company.uuid, customer.id, apiToken.token, tested.eventId],
  };
}

/** Everything of the victim, from the database and (telemetry) through the API as the victim. */
async function snapshot(v: Tenant): Promise<string> {
  const roles = [...v.values.role, ROOT_ROLE];
  const devices = v.values.device;
  const users = v.userIds;
  const licenses = v.licenseIds;
  const all = (query: ReturnType<typeof sql>) => db.all(query);
  const inJson = (col: string, values: readonly unknown[]) => sql`${sql.raw(col)} ${inValues(values)}`;
  const telemetry: unknown[] = [];
  for (const [database, measurement] of [['shared_db', 'readings'], [`${v.name}secret_db`, `${v.name}secret_m`]]) {
    const r = await v.http.request('POST', '/v1/telemetry/query', {
      token: v.token,
      body: { select: ['v'], from: { measurement, database, retentionPolicy: 'autogen' }, where: { tags: { nodeId: v.values.ctrl[0] }, time: [{ operator: '>=', value: NOT_TELEMETRY_T - 10_000 }, { operator: '<', value: NOT_TELEMETRY_T + 10_000 }] } },
    });
    assert.equal(r.status, 200, r.text);
    telemetry.push(r.body);
  }
  return JSON.stringify({
    roles: await all(sql`SELECT * FROM roles WHERE ${inJson('id', roles)} ORDER BY id`),
    manages: await all(sql`SELECT * FROM manages WHERE ${inJson('parent_role_id', roles)} OR ${inJson('child_role_id', roles)} ORDER BY id`),
    // (the victim's users as members of the ATTACKER's roles are the attacker's to add: PUT member by e-mail)
    members: await all(sql`SELECT * FROM members WHERE ${inJson('role_id', roles)} ORDER BY id`),
    users: await all(sql`SELECT id, email, password_hash, tier, password_changed_at FROM users WHERE ${inJson('id', users)} ORDER BY id`),
    sessions: await all(sql`SELECT sid, revoked_at FROM sessions WHERE ${inJson('user_id', users)} ORDER BY sid`),
    devices: await all(sql`SELECT id, properties, last_update FROM devices WHERE ${inJson('id', devices)}
      OR id IN (SELECT device_id FROM monitors WHERE ${inJson('role_id', roles)}) ORDER BY id`),
    monitors: await all(sql`SELECT * FROM monitors WHERE ${inJson('role_id', roles)} OR ${inJson('device_id', devices)} ORDER BY id`),
    licenses: await all(sql`SELECT * FROM licenses WHERE ${inJson('id', licenses)} ORDER BY id`),
    links: await all(sql`SELECT license_id, device_id, uuid FROM license_datalink WHERE ${inJson('license_id', licenses)} OR ${inJson('device_id', devices)} ORDER BY id`),
    customers: await all(sql`SELECT * FROM customers WHERE ${inJson('role_id', roles)} ORDER BY id`),
    orders: await all(sql`SELECT o.*, ol.license_id, ol.position FROM orders o JOIN order_licenses ol ON ol.order_id = o.id
      WHERE o.customer_id IN (SELECT id FROM customers WHERE ${inJson('role_id', roles)}) OR ${inJson('ol.license_id', licenses)} ORDER BY o.id, ol.position`),
    apiTokens: await all(sql`SELECT id, user_id, name, scopes, token_hash, expires_at FROM api_tokens WHERE ${inJson('user_id', users)} ORDER BY id`),
    webhooks: await all(sql`SELECT id, role_id, kind, name, url, topic_prefix, types, secret, previous_secret, enabled FROM event_subscriptions
      WHERE ${inJson('role_id', roles)} AND role_id <> ${ROOT_ROLE} ORDER BY id`),
    alarmRules: await all(sql`SELECT * FROM alarm_rules WHERE ${inJson('role_id', roles)} AND role_id <> ${ROOT_ROLE} ORDER BY id`),
    alarms: await all(sql`SELECT * FROM alarms WHERE ${inJson('device_id', devices)} OR (${inJson('role_id', roles)} AND role_id <> ${ROOT_ROLE}) ORDER BY id`),
    alarmStates: await all(sql`SELECT * FROM alarm_states WHERE ${inJson('device_id', devices)} ORDER BY rule_id, device_id`),
    telemetry,
  });
}

// ------------------------------------------------------------------ variants

interface Slot { loc: string; kind: Kind; list: boolean }

const PLACEHOLDER = /^@(role|manages|member|device|monitors|nodeId|ctrl|email|key|uuid|customer|license|apiToken|user|webhook|delivery|event|alarmRule|alarm)$/;
/** a nodeId inside a longer query value (an InfluxQL statement) */
const EMBEDDED = /@(nodeId|ctrl)\b/;

function slotsOf(t: Template): Slot[] {
  const out: Slot[] = [];
  for (const [k, val] of Object.entries(t.params ?? {})) { const m = PLACEHOLDER.exec(val); if (m) out.push({ loc: `params.${k}`, kind: m[1] as Kind, list: t.lists?.includes(k) ?? false }); }
  for (const [k, val] of Object.entries(t.query ?? {})) {
    const m = PLACEHOLDER.exec(val) ?? EMBEDDED.exec(val);
    if (m) out.push({ loc: `query.${k}`, kind: m[1] as Kind, list: t.lists?.includes(k) ?? false });
  }
  const walk = (node: unknown, path: string[], inArray: boolean) => {
    if (typeof node === 'string') { const m = PLACEHOLDER.exec(node); if (m) out.push({ loc: ['body', ...path].join('.'), kind: m[1] as Kind, list: inArray }); }
    else if (Array.isArray(node)) node.forEach((x) => walk(x, path, true));
    else if (node && typeof node === 'object') for (const [k, x] of Object.entries(node)) walk(x, [...path, k], false);
  };
  walk(t.body, [], false);
  if (t.raw) for (const m of t.raw.matchAll(/@(nodeId|ctrl)\b/g)) out.push({ loc: 'raw', kind: m[1] as Kind, list: false });
  return out;
}

type Value = number | string | (number | string)[];

interface Variant { template: Template; whose: Record<string, 'own' | 'victim'>; values: Record<string, Value>; ghost: Record<string, Value>; label: string }

function variantsOf(t: Template, attacker: Tenant, victim: Tenant): Variant[] {
  const slots = slotsOf(t);
  const out: Variant[] = [];
  const victimValues = (k: Kind) => (k === 'role' ? [...victim.values.role, ROOT_ROLE] : victim.values[k]);
  for (let mask = 1; mask < 1 << slots.length; mask++) {
    const width = Math.max(...slots.filter((_, i) => mask & (1 << i)).map((s) => victimValues(s.kind).length));
    for (let j = 0; j < width; j++) {
      const whose: Variant['whose'] = {};
      const values: Variant['values'] = {};
      const ghost: Variant['ghost'] = {};
      slots.forEach((s, i) => {
        const theirs = (mask & (1 << i)) !== 0;
        whose[s.loc] = theirs ? 'victim' : 'own';
        const vs = victimValues(s.kind);
        values[s.loc] = theirs ? vs[j % vs.length] : attacker.values[s.kind][0];
        ghost[s.loc] = theirs ? GHOST[s.kind] : values[s.loc];
      });
      out.push({ template: t, whose, values, ghost, label: `${t.route} ${JSON.stringify(values)}` });
    }
  }
  // mixed lists: the attacker's own id and the victim's in one request
  slots.forEach((s, i) => {
    if (!s.list) return;
    const whose: Variant['whose'] = {};
    const values: Variant['values'] = {};
    const ghost: Variant['ghost'] = {};
    slots.forEach((o, k) => {
      const own = attacker.values[o.kind][0];
      whose[o.loc] = k === i ? 'victim' : 'own';
      values[o.loc] = k === i ? [own, victimValues(o.kind)[0]] : own;
      ghost[o.loc] = k === i ? [own, GHOST[o.kind]] : own;
    });
    out.push({ template: t, whose, values, ghost, label: `${t.route} mixed ${JSON.stringify(values)}` });
  });
  return out;
}

function ownVariant(t: Template, attacker: Tenant): Variant {
  const values: Variant['values'] = {};
  const whose: Variant['whose'] = {};
  for (const s of slotsOf(t)) {
    const own = attacker.values[s.kind];
    values[s.loc] = own[Math.min(t.ownIndex ?? 0, own.length - 1)];
    whose[s.loc] = 'own';
  }
  return { template: t, whose, values, ghost: values, label: `${t.route} own ${JSON.stringify(values)}` };
}

function build(t: Template, values: Record<string, Value>): { method: string; path: string; body?: unknown; raw?: string } {
  const text = (v: Value) => (Array.isArray(v) ? v.join(',') : String(v));
  const [method, pattern] = t.route.split(' ');
  const path = pattern.replace(/:(\w+)/g, (_, k: string) => encodeURIComponent(text(values[`params.${k}`] ?? t.params![k])));
  const q = Object.entries(t.query ?? {}).map(([k, v]) => {
    const value = values[`query.${k}`];
    if (value === undefined) return `${k}=${encodeURIComponent(v)}`;
    return `${k}=${encodeURIComponent(PLACEHOLDER.test(v) ? text(value) : v.replace(new RegExp(EMBEDDED.source, 'g'), () => text(value)))}`;
  });
  const fill = (node: unknown, path: string[]): unknown => {
    if (typeof node === 'string' && PLACEHOLDER.test(node)) return values[['body', ...path].join('.')];
    if (Array.isArray(node)) {
      return node.flatMap((x) => {
        const filled = fill(x, path);
        return typeof x === 'string' && PLACEHOLDER.test(x) && Array.isArray(filled) ? filled : [filled];
      });
    }
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, x]) => [k, fill(x, [...path, k])]));
    return node;
  };
  const raw = t.raw?.replace(/@(nodeId|ctrl)\b/g, () => text(values.raw));
  return { method, path: path + (q.length ? `?${q.join('&')}` : ''), ...(t.body !== undefined ? { body: fill(t.body, []) } : {}), ...(raw ? { raw } : {}) };
}

async function send(attacker: Tenant, req: ReturnType<typeof build>): Promise<HttpResult> {
  stats.requests++;
  const r = await attacker.http.request(req.method, req.path, {
    token: attacker.token, body: req.body, ...(req.raw ? { raw: req.raw, headers: { 'content-type': 'text/plain' } } : {}),
  });
  stats.statuses.set(r.status, (stats.statuses.get(r.status) ?? 0) + 1);
  assert.ok(r.status > 0 && r.status < 500, `${req.method} ${req.path}: ${r.status} ${r.error ?? ''} ${r.text.slice(0, 300)}`);
  return r;
}

/** Objects of the victim in an answer, recognised by shape and id; and the victim's secrets the request did not carry. */
function leaks(r: HttpResult, requestText: string, victim: Tenant): string[] {
  const found: string[] = [];
  for (const s of victim.secrets) if (r.text.includes(s) && !requestText.includes(s)) found.push(`secret ${s}`);
  const has = (kind: Kind, x: unknown) => (kind === 'role' ? [...victim.values.role, ROOT_ROLE] : victim.values[kind]).includes(x as never);
  const walk = (o: unknown) => {
    if (Array.isArray(o)) { o.forEach(walk); return; }
    if (!o || typeof o !== 'object') return;
    const x = o as Record<string, unknown>;
    if ('selfRights' in x && has('role', x.id)) found.push(`role ${x.id}`);
    if ('parentRoleId' in x && (has('manages', x.id) || has('role', x.parentRoleId) || has('role', x.childRoleId))) found.push(`manages ${x.id}`);
    if ('userEmail' in x && (has('member', x.id) || has('role', x.roleId))) found.push(`member ${x.id}`);
    if ('monitorManagement' in x && 'deviceId' in x && (has('monitors', x.id) || has('role', x.roleId) || has('device', x.deviceId))) found.push(`monitors ${x.id}`);
    if ('properties' in x && has('device', x.id)) found.push(`device ${x.id}`);
    if (x.kind === 'member' && has('member', x.id)) found.push(`member step ${x.id}`);
    if (x.kind === 'manages' && has('manages', x.id)) found.push(`manages step ${x.id}`);
    if (x.kind === 'monitors' && has('monitors', x.id)) found.push(`monitors step ${x.id}`);
    if (typeof x.id === 'string' && victim.licenseIds.includes(x.id)) found.push(`license ${x.id}`);
    if ('uuid' in x && has('role', x.id)) found.push(`company ${x.id}`);
    if ('creationDate' in x && 'roleId' in x && has('role', x.roleId)) found.push(`customer ${x.id}`);
    // an audit entry by one of the victim's users, or about one of its objects
    if ('action' in x && 'target' in x) {
      const target = x.target as { kind: string; id: unknown };
      const actor = x.actor as { userId: unknown };
      if (victim.userIds.includes(actor.userId as number)) found.push(`audit entry ${x.id} by a victim's user`);
      const theirs = target.kind === 'license' ? victim.licenseIds.includes(target.id as string)
        : ['role', 'manages', 'member', 'device', 'monitors', 'user'].includes(target.kind) && has(target.kind as Kind, target.id);
      if (theirs) found.push(`audit entry ${x.id} about ${target.kind} ${target.id}`);
    }
    Object.values(x).forEach(walk);
  };
  walk(r.body);
  return found;
}

/** The two answers must be the same, but for the substituted values themselves. */
function sameAnswer(a: HttpResult, b: HttpResult, va: Record<string, Value>, vb: Record<string, Value>): string | undefined {
  if (a.status !== b.status) return `status ${a.status} vs ${b.status} for a non-existent id (${a.text.slice(0, 160)} | ${b.text.slice(0, 160)})`;
  if (a.status >= 400) return a.body?.code === b.body?.code ? undefined : `code ${a.body?.code} vs ${b.body?.code}`;
  const norm = (text: string, values: Record<string, Value>) => {
    // the bucket leaks between the two requests
    let out = text.replace(/"remainingCapacity":\d+/g, '"remainingCapacity":0');
    for (const v of Object.values(values).flat()) {
      const s = String(v).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      out = out.replace(new RegExp(`(?<![\\w.@-])${s}(?![\\w.@-])`, 'g'), '<id>');
    }
    return out;
  };
  return norm(a.text, va) === norm(b.text, vb) ? undefined : `body differs from the non-existent id's: ${a.text.slice(0, 200)} | ${b.text.slice(0, 200)}`;
}

async function attack(attacker: Tenant, victim: Tenant): Promise<{ variants: number; problems: string[] }> {
  const problems: string[] = [];
  let baseline = await snapshot(victim);
  let variants = 0;
  for (const t of TEMPLATES) {
    for (const v of variantsOf(t, attacker, victim)) {
      variants++;
      const req = build(t, v.values);
      const requestText = decodeURIComponent(req.path) + JSON.stringify(req.body ?? req.raw ?? '');
      const r = await send(attacker, req);
      if (r.status !== 400 || r.body?.code !== 'BAD_REQUEST') stats.pastValidation.set(t, (stats.pastValidation.get(t) ?? 0) + 1);
      const refused = [403, 404, ...(t.alsoRefused ?? [])];
      const passed = r.status >= 200 && r.status < 300;
      const legitimate = !t.read && passed && (t.mayPass?.(v.whose) ?? false);
      if (t.read ? !(passed || refused.includes(r.status)) : !(refused.includes(r.status) || legitimate)) {
        problems.push(`${v.label}: answered ${r.status} ${r.text.slice(0, 200)}`);
      }
      if (legitimate && t.undo) {
        const u = t.undo(r.body);
        const back = await send(attacker, u);
        assert.equal(back.status, 200, `undo ${u.method} ${u.path}: ${back.text}`);
      }
      for (const l of leaks(r, requestText, victim)) problems.push(`${v.label}: leaks ${l}`);
      if (!t.read) {
        const now = await snapshot(victim);
        if (now !== baseline) {
          problems.push(`${v.label}: changed the victim's data (${r.status} ${r.text.slice(0, 160)})`);
          baseline = now;
        }
      }
      const exempt = Object.entries(v.whose).some(([loc, w]) => w === 'victim' && t.oracleExempt?.includes(loc));
      if (!exempt) {
        const g = await send(attacker, build(t, v.ghost));
        if (legitimate && t.undo) await send(attacker, t.undo(g.body));
        // a legitimate write answers with the new relation's own id: only the status can be compared
        const diff = legitimate ? (g.status === r.status ? undefined : `status ${r.status} vs ${g.status} for a non-existent id`) : sameAnswer(r, g, v.values, v.ghost);
        if (diff) problems.push(`${v.label}: ${diff}`);
      }
    }
  }
  assert.equal(await snapshot(victim), baseline);
  return { variants, problems };
}

// ------------------------------------------------------------------ id slots declared by the schemas

const ID_NAME = /^(id|ids|key|licenseKey|licenseIds|nodeId|email|userEmail|uuid)$|Id$/;
/**
 * Not references: afterId and beforeId are pagination cursors (any integer is legal and names no object); views do not exist on
 * the appliance (viewId filters are always 400 NOT_SUPPORTED).
 */
const NOT_A_REFERENCE = new Set(['afterId', 'beforeId', 'viewId']);

function declaredSlots(spec: AnyRouteSpec): string[] {
  const out = new Set<string>();
  for (const m of spec.path.matchAll(/:(\w+)/g)) if (m[1] !== 'nodeType') out.add(`params.${m[1]}`);
  const op = openapi.paths[spec.path.replace(/:(\w+)/g, '{$1}')]?.[spec.method];
  for (const p of (op?.parameters ?? []) as { name: string; in: string }[]) {
    if (p.in === 'query' && ID_NAME.test(p.name) && !NOT_A_REFERENCE.has(p.name)) out.add(`query.${p.name}`);
  }
  const walk = (s: any, path: string[], depth: number) => {
    if (!s || typeof s !== 'object' || depth > 12) return;
    for (const k of ['anyOf', 'oneOf', 'allOf']) for (const x of s[k] ?? []) walk(x, path, depth + 1);
    if (s.items) walk(s.items, path, depth + 1);
    for (const [k, x] of Object.entries(s.properties ?? {})) {
      if (ID_NAME.test(k) && !NOT_A_REFERENCE.has(k)) out.add(['body', ...path, k].join('.'));
      walk(x, [...path, k], depth + 1);
    }
  };
  walk(op?.requestBody?.content?.['application/json']?.schema, [], 0);
  return [...out];
}

// ------------------------------------------------------------------ the suite

before(async () => {
  const t = await makeTestApp();
  specs = createApp(t.deps).api.specs;
  await t.close();
  let exe: string;
  ({ dir, exe } = isolatedBinary());
  run = await startGridkeeper(exe, join(dir, 'data'));
  admin = httpClient(run.url);
  adminToken = (await loginOver(admin, ADMIN_EMAIL, ADMIN_PASSWORD)).access;
  openapi = (await admin.request('GET', '/openapi.json')).body;
  db = await openCheckDb(join(dir, 'data'));
  tenants.a = await makeTenant('a');
  tenants.b = await makeTenant('b');
});

after(async () => {
  await db?.close();
  tenants.a?.http.close();
  tenants.b?.http.close();
  admin?.close();
  try {
    if (run) assert.equal(await run.stop(), 0);
  } finally {
    await dropDatabases();
  }
  rmSync(dir, { recursive: true, force: true });
  const fives = [...stats.statuses].filter(([s]) => s >= 500).length;
  console.log(`cross-tenant: ${TEMPLATES.length} templates over ${new Set(TEMPLATES.map((t) => t.route)).size} routes, ${stats.variants} attack variants, `
    + `${stats.requests} requests, statuses ${JSON.stringify(Object.fromEntries(stats.statuses))}, 5xx ${fives}`);
});

describe('tenant isolation over every id-bearing route of the registry', () => {
  it('every route has a template (or acts on the caller only), and the templates cover every declared id slot', () => {
    const templated = new Set(TEMPLATES.map((t) => t.route));
    const missing: string[] = [];
    for (const spec of specs) {
      const route = `${spec.method.toUpperCase()} ${spec.path}`;
      if (!spec.auth) continue; // public: /healthz, /metrics, /openapi.json, /docs, /assets, /auth/login
      if (route in SELF_ONLY) {
        assert.deepEqual(declaredSlots(spec), [], `${route} is listed as acting on the caller only but declares id slots`);
        continue;
      }
      if (!templated.has(route)) { missing.push(`${route}: no template`); continue; }
      const covered = new Set(TEMPLATES.filter((t) => t.route === route).flatMap((t) => slotsOf(t).map((s) => s.loc.replace(/^raw$/, 'raw'))));
      for (const slot of declaredSlots(spec)) if (!covered.has(slot)) missing.push(`${route}: id slot ${slot} not attacked`);
    }
    for (const t of TEMPLATES) assert.ok(specs.some((s) => `${s.method.toUpperCase()} ${s.path}` === t.route), `template for an unknown route ${t.route}`);
    assert.deepEqual(missing, []);
  });

  for (const [attackerName, victimName] of [['a', 'b'], ['b', 'a']] as const) {
    it(`tenant ${attackerName} can neither read nor change anything of tenant ${victimName}`, { timeout: 240_000 }, async () => {
      const { variants, problems } = await attack(tenants[attackerName], tenants[victimName]);
      stats.variants += variants;
      assert.deepEqual(problems.slice(0, 25), [], `${problems.length} problem(s)`);
    });
  }

  it('routes without id slots leak nothing of the other tenant', async () => {
    for (const path of ['/v1/telemetry/namespaces', '/v1/device/schema', '/v1/device/schema/smartgridController', '/user/2fa', '/v1/role/*/manages', '/v1/device']) {
      const r = await send(tenants.a, { method: 'GET', path });
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      assert.deepEqual(leaks(r, '', tenants.b), [], path);
    }
    // the namespace only the victim writes to is not listed for the attacker; the shared one is
    const ns = (await send(tenants.a, { method: 'GET', path: '/v1/telemetry/namespaces' })).text;
    assert.doesNotMatch(ns, /bsecret_db/);
    assert.match(ns, /asecret_db/);
    // the attacker's whole view of the audit log (after both attacks): its own tenant's history, nothing of the other's.
    // Its own entries may carry the victim's e-mail it typed itself (adding a user by e-mail to its own role).
    const audit = await send(tenants.a, { method: 'POST', path: '/v1/audit/query', body: { limit: 1000 } });
    assert.equal(audit.status, 200, audit.text);
    assert.ok(audit.body.entries.length > 10, 'the attacker sees its own history');
    assert.deepEqual(leaks(audit, '', tenants.b).filter((l) => !l.startsWith('secret')), []);
    const notOwn = audit.body.entries.filter((e: any) => !tenants.a.userIds.includes(e.actor.userId));
    assert.deepEqual(leaks({ ...audit, text: JSON.stringify(notOwn), body: notOwn }, '', tenants.b), []);
  });

  it('the public password-reset routes give a tenant no hold on the other tenant\'s accounts', async () => {
    const baseline = await snapshot(tenants.b);
    // asking a reset for the victim's address: the same empty 204 any address gets (the link goes to the victim's mailbox)
    const asked = await send(tenants.a, { method: 'POST', path: '/v1/auth/forgot-password?language=en', body: { email: tenants.b.values.email[2] } });
    assert.deepEqual([asked.status, asked.text], [204, '']);
    // guessing a token changes nothing
    const guessed = await send(tenants.a, { method: 'POST', path: '/v1/auth/reset-password', body: { token: 'guessed-token-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', newPassword: 'intruder-password-1' } });
    assert.equal(guessed.status, 400);
    assert.equal(guessed.body.code, 'RESET_TOKEN_INVALID');
    assert.equal(await snapshot(tenants.b), baseline, 'the victim\'s password and sessions are untouched');
    // the token is stored hashed: nothing in the database reads like a link token (PostgreSQL: the column is BYTEA)
    const notHashed = db.backend === 'sqlite'
      ? sql<{ n: number }>`SELECT count(*) AS n FROM password_reset_tokens WHERE typeof(token_hash) <> 'blob' OR length(token_hash) <> 32`
      : sql<{ n: number }>`SELECT count(*) AS n FROM password_reset_tokens WHERE octet_length(token_hash) <> 32`;
    assert.equal((await db.get(notHashed))!.n, 0);
  });

  it('every template reached past validation, and works with the attacker\'s own ids (positive controls)', async () => {
    for (const t of TEMPLATES) assert.ok((stats.pastValidation.get(t) ?? 0) > 0, `${t.route} ${JSON.stringify(t.body ?? t.query)}: every variant was a 400`);
    // reads first, then writes, the destructive ones last; only the attacker's own data is touched
    const rank = (t: Template) => (t.read ? 0 : t.route.startsWith('DELETE') ? 3 : t.query?.mode === 'strict' ? 2 : 1);
    const baseline = await snapshot(tenants.b);
    for (const t of [...TEMPLATES].sort((x, y) => rank(x) - rank(y))) {
      const v = ownVariant(t, tenants.a);
      const r = await send(tenants.a, build(t, v.values));
      const expected = t.own ?? [200, 204];
      assert.ok(expected.includes(r.status), `${v.label}: expected ${expected.join(' or ')}, got ${r.status} ${r.text.slice(0, 300)}`);
    }
    assert.equal(await snapshot(tenants.b), baseline, 'the attacker working on its own data leaves the other tenant alone');
  });
});
