// Request templates for the cross-tenant attack: one or more per route of the registry, with placeholders in every id
// slot (path parameters, query parameters, body fields, line-protocol tags). The attack fills each placeholder with the
// attacker's own id or the victim's; cross-tenant.test.ts checks that every route of the registry has a template here
// (or is listed in SELF_ONLY) and that the templates cover every id slot the route's schemas declare.
//
// Placeholders: '@role' '@manages' '@member' '@device' '@monitors' '@nodeId' (any device's nodeId) '@ctrl' (a
// controller's nodeId) '@email' (a user's e-mail) '@key' (a license key) '@uuid' (a company's uuid) '@customer' (a
// customer id) '@license' (a license id) '@apiToken' (an API token's id) '@user' (a user id) '@webhook' '@delivery' (a
// subscription's and one of its deliveries' ids) '@event' (an event id, evt_...) '@alarmRule' '@alarm' (an alarm rule's
// and one of its alarms' ids); company ids are role ids
// ('@role'). '@nodeId' may also sit inside a query value (an InfluxQL statement). In a body a placeholder inside an array
// can become [own, victim's] (a mixed list); in `lists` name the path/query slots that accept comma-separated ids.
export type Kind = 'role' | 'manages' | 'member' | 'device' | 'monitors' | 'nodeId' | 'ctrl' | 'email' | 'key' | 'uuid' | 'customer' | 'license' | 'apiToken' | 'user'
  | 'webhook' | 'delivery' | 'event' | 'alarmRule' | 'alarm';

export interface Template {
  /** 'METHOD /path/:pattern' as in the registry */
  route: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  /** JSON body with placeholders, or a line-protocol text with them (telemetry write) */
  body?: unknown;
  raw?: string;
  lists?: string[];
  /** reads answer 200 with only what the attacker may see; anything else must be refused */
  read?: boolean;
  /** further refusals the contract names for this route (e.g. 400 ALREADY_CLAIMED for a claimed key) */
  alsoRefused?: number[];
  /**
   * When true for an assignment (slot -> whose), a 2xx is legitimate: the request touches only the attacker's objects
   * and names the victim's by a value the attacker supplied (adding a user by e-mail to the attacker's own role).
   */
  mayPass?: (whose: Record<string, 'own' | 'victim'>) => boolean;
  /** the request that takes back what a passing request did, so it cannot give the victim's users a way in later */
  undo?: (answer: any) => { method: string; path: string };
  /**
   * Existence oracles the contract itself defines (a linked license is 403, an unknown key 404; a taken nodeId is 409):
   * for these slots the answer may differ from the answer for a value that does not exist.
   */
  oracleExempt?: string[];
  /** what the same request answers with only the attacker's own ids, when not a 2xx (the positive control) */
  own?: number[];
  /** which of the attacker's ids the positive control uses (default the first: the attacker's top role and its objects) */
  ownIndex?: number;
}

const FLAGS = { roleManagement: true, userManagement: true, viewManagement: true, deviceManagement: true, reportManagement: true, alarmManagement: true };
const MONITORS = { monitorManagement: true, reads: [], edits: [] };
/** an hour from 2026-01-01T00:00:00Z, where the tenants wrote their points */
const TIME = [{ operator: '>=', value: 1767225600000 }, { operator: '<', value: 1767229200000 }];
/** a rule on the readings every tenant's controller writes (shared_db), never breached by them */
const ALARM_RULE = {
  name: 'intruder-rule', series: { namespace: { version: '1', database: 'shared_db', retentionPolicy: 'autogen' }, measurement: 'readings', field: 'v' },
  condition: { type: 'above', value: 1000 }, severity: 'minor',
};
const ownRole = (slot: string) => (w: Record<string, 'own' | 'victim'>) => w[slot] === 'own';

export const TEMPLATES: Template[] = [
  { route: 'PUT /v1/user/:email/tier', params: { email: '@email' }, body: { tier: 'premium' }, own: [403] },
  { route: 'GET /v1/access/explain', query: { deviceId: '@device', property: 'name' }, read: true },
  { route: 'GET /v1/access/explain', query: { roleId: '@role', right: 'roleManagement' }, read: true },

  { route: 'POST /v1/role', query: { parentRoleId: '@role' }, body: { manages: FLAGS, role: { name: 'intruder', selfRights: FLAGS } } },
  { route: 'PUT /v1/role/:roleId', params: { roleId: '@role' }, body: { name: 'renamed-by-intruder', selfRights: FLAGS, password: null }, ownIndex: 1 },
  { route: 'POST /v1/role/query', body: { filter: { id: ['@role'], name: ['x'] } }, read: true },
  { route: 'POST /v1/role/query', body: { filter: { ancestorRoleId: ['@role'] }, userRights: FLAGS }, read: true },
  { route: 'GET /v1/role', query: { id: '@role', ancestorRoleId: '@role' }, lists: ['id', 'ancestorRoleId'], read: true },

  // own control: the attacker's mid role onto itself passes both rights checks and is refused as a cycle
  { route: 'PUT /v1/role/:parentRoleId/manages', params: { parentRoleId: '@role' }, query: { childRoleId: '@role' }, body: FLAGS, own: [409], ownIndex: 1 },
  // wrong join passwords count per child role (429 after 5, for existing and unknown ids alike, so the answer depends
  // on how often a role was tried, not on whose it is)
  {
    route: 'PUT /v1/role/:parentRoleId/manages', params: { parentRoleId: '@role' }, query: { childRoleId: '@role', childRolePassword: 'a-guessed-password' },
    body: FLAGS, alsoRefused: [429], oracleExempt: ['query.childRoleId'], own: [403, 429],
  },
  { route: 'POST /v1/role/:parentRoleId/manages/query', params: { parentRoleId: '@role' }, body: { filter: { id: ['@manages'], parentRoleId: ['@role'], childRoleId: ['@role'] } }, lists: ['parentRoleId'], read: true },
  { route: 'POST /v1/role/:parentRoleId/manages/query', params: { parentRoleId: '*' }, body: { filter: { id: ['@manages'] } }, read: true },
  { route: 'GET /v1/role/:parentRoleId/manages', params: { parentRoleId: '@role' }, query: { id: '@manages', childRoleId: '@role' }, lists: ['parentRoleId', 'id', 'childRoleId'], read: true },
  { route: 'PUT /v1/role/:parentRoleId/manages/:managesId', params: { parentRoleId: '@role', managesId: '@manages' }, body: FLAGS, lists: ['managesId'] },
  { route: 'DELETE /v1/role/:parentRoleId/manages/:managesId', params: { parentRoleId: '@role', managesId: '@manages' }, lists: ['managesId'] },

  {
    route: 'PUT /v1/role/:roleId/member', params: { roleId: '@role' }, query: { userEmail: '@email', password: 'intruder-password-1' }, body: {},
    // adding a user, named by e-mail, to one's own role is allowed; the user's password must not change (checked)
    mayPass: ownRole('params.roleId'),
    undo: (answer) => ({ method: 'DELETE', path: `/v1/role/${answer.member.roleId}/member/${answer.member.id}` }),
  },
  { route: 'POST /v1/role/:roleId/member/query', params: { roleId: '@role' }, body: { filter: { id: ['@member'], roleId: ['@role'], userEmail: ['@email'] } }, lists: ['roleId'], read: true },
  { route: 'POST /v1/role/:roleId/member/query', params: { roleId: '*' }, body: { filter: { id: ['@member'] } }, read: true },
  { route: 'GET /v1/role/:roleId/member', params: { roleId: '@role' }, query: { id: '@member', roleId: '@role', userEmail: '@email' }, lists: ['roleId', 'id'], read: true },
  { route: 'PUT /v1/role/:roleId/member/:memberId', params: { roleId: '@role', memberId: '@member' }, body: {}, lists: ['memberId'] },
  { route: 'DELETE /v1/role/:roleId/member/:memberId', params: { roleId: '@role', memberId: '@member' }, lists: ['memberId'] },

  { route: 'POST /v1/device', query: { roleId: '@role' }, body: { properties: { name: 'intruder-device' } } },
  // a nodeId is unique among all devices: 409 NODE_ID_TAKEN for a taken one is the contract's own oracle
  { route: 'POST /v1/device', query: { roleId: '@role' }, body: { properties: { nodeId: '@nodeId' } }, alsoRefused: [409], oracleExempt: ['body.properties.nodeId'], own: [409] },
  { route: 'POST /v1/device/query', body: { filter: { id: ['@device'], nodeId: ['@nodeId'] } }, read: true },
  { route: 'POST /v1/device/query', body: { conditions: { nodeId: ['@nodeId'] }, fields: ['nodeId', 'name'] }, read: true },
  { route: 'GET /v1/device', query: { id: '@device', nodeId: '@nodeId' }, lists: ['id', 'nodeId'], read: true },
  { route: 'PATCH /v1/device/:ids', params: { ids: '@device' }, body: [{ op: 'add', path: '/intrusion', value: 1 }], lists: ['ids'] },
  { route: 'PATCH /v1/device/:ids', params: { ids: '@device' }, body: [{ op: 'test', path: '/name', value: 'x' }], lists: ['ids'], own: [422] },
  { route: 'PUT /v1/device/:ids', params: { ids: '@device' }, query: { mode: 'merge' }, body: { properties: { intrusion: 1 } }, lists: ['ids'] },
  { route: 'PUT /v1/device/:ids', params: { ids: '@device' }, query: { mode: 'strict' }, body: { properties: {} }, lists: ['ids'] },
  // nodeIds are unique among all devices: taking the victim's is 409 NODE_ID_TAKEN (the contract's own oracle)
  { route: 'PUT /v1/device/:ids', params: { ids: '@device' }, query: { mode: 'merge' }, body: { properties: { nodeId: '@nodeId' } }, alsoRefused: [409], oracleExempt: ['body.properties.nodeId'] },
  { route: 'PATCH /v1/device/:ids', params: { ids: '@device' }, body: [{ op: 'replace', path: '/nodeId', value: '@nodeId' }], alsoRefused: [409], oracleExempt: ['body.value'] },
  // roles are no device filter here: 400 NOT_SUPPORTED, whoever's role it names
  { route: 'POST /v1/device/query', body: { roleId: '@role', filter: { roleId: '@role' } }, alsoRefused: [400], read: true, own: [400] },
  { route: 'GET /v1/device', query: { roleId: '@role' }, alsoRefused: [400], read: true, own: [400] },

  { route: 'PUT /v1/role/:roleId/monitors', params: { roleId: '@role' }, query: { deviceId: '@device' }, body: MONITORS, lists: ['deviceId'] },
  { route: 'PUT /v1/role/:roleId/monitors/:ids', params: { roleId: '@role', ids: '@monitors' }, body: MONITORS, lists: ['ids'] },
  { route: 'DELETE /v1/role/:roleId/monitors/:ids', params: { roleId: '@role', ids: '@monitors' }, lists: ['ids'] },
  { route: 'POST /v1/role/:roleId/monitors/query', params: { roleId: '@role' }, body: { filter: { id: ['@monitors'], roleId: ['@role'], deviceId: ['@device'] } }, lists: ['roleId'], read: true },
  { route: 'POST /v1/role/:roleId/monitors/query', params: { roleId: '*' }, body: { filter: { deviceId: ['@device'] } }, read: true },
  { route: 'GET /v1/role/:roleId/monitors', params: { roleId: '@role' }, query: { id: '@monitors', roleId: '@role', deviceId: '@device' }, lists: ['roleId', 'id', 'deviceId'], read: true },

  { route: 'POST /v1/license', body: { type: 'residential', duration: 30, key: '@key' }, alsoRefused: [409], own: [403] },
  // docs/api.md#licenses: a license linked to a controller the caller cannot read is 403, an unknown key 404
  { route: 'POST /v1/license/activate', body: { key: '@key' }, oracleExempt: ['body.key'], own: [400] },
  // a claimed key is 400 ALREADY_CLAIMED (after the controller check); keys are secrets, the oracle is the contract's
  { route: 'POST /v1/license/claim', body: { licenseKey: '@key', nodeId: '@ctrl' }, alsoRefused: [400], oracleExempt: ['body.licenseKey'], own: [400] },
  { route: 'GET /v1/license/controller/:nodeId', params: { nodeId: '@ctrl' }, read: true },

  // companies: the tenants' top roles are companies; a company the caller cannot see filters to nothing
  { route: 'GET /v1/company', query: { id: '@role', uuid: '@uuid', roleId: '@role' }, lists: ['id', 'uuid', 'roleId'], read: true },
  { route: 'POST /v1/role/query', body: { filter: { companyId: ['@role'] } }, read: true },
  { route: 'GET /v1/role', query: { companyId: '@role' }, lists: ['companyId'], read: true },
  { route: 'POST /v1/device/query', body: { companyId: ['@role'], filter: { companyId: ['@role'] } }, read: true },
  { route: 'GET /v1/device', query: { companyId: '@role' }, lists: ['companyId'], read: true },

  { route: 'POST /v1/customer', query: { roleId: '@role' }, body: { name: 'intruder-customer' } },
  { route: 'POST /v1/customer/query', body: { filter: { id: ['@customer'], roleId: ['@role'] } }, read: true },
  // orders are for root members: every tenant is refused, whoever's customer and licenses it names
  { route: 'POST /v1/customer/:customerId/order', params: { customerId: '@customer' }, body: { licenseIds: ['@license'] }, own: [403] },
  // issue 17: a customer outside the caller's reach is 403, an unknown one 404 (the operation's own oracle)
  { route: 'GET /v1/license/customer/:customerId', params: { customerId: '@customer' }, query: { includeDatalinks: 'true' }, read: true, oracleExempt: ['params.customerId'] },
  // the audit log: entries by the victim's users, and about each kind of the victim's objects, are not visible
  { route: 'POST /v1/audit/query', body: { filter: { actorId: '@user' } }, read: true },
  { route: 'POST /v1/audit/query', body: { filter: { targetKind: 'role', targetId: '@role' } }, read: true },
  { route: 'POST /v1/audit/query', body: { filter: { targetKind: 'manages', targetId: '@manages' } }, read: true },
  { route: 'POST /v1/audit/query', body: { filter: { targetKind: 'member', targetId: '@member' } }, read: true },
  { route: 'POST /v1/audit/query', body: { filter: { targetKind: 'device', targetId: '@device' } }, read: true },
  { route: 'POST /v1/audit/query', body: { filter: { targetKind: 'monitors', targetId: '@monitors' } }, read: true },
  { route: 'POST /v1/audit/query', body: { filter: { targetKind: 'user', targetId: '@user' } }, read: true },

  { route: 'POST /v1/telemetry', query: { db: 'shared_db', rp: 'autogen', precision: 'ms' }, raw: 'intrusion,nodeId=@nodeId v=666i 1767225600000' },
  { route: 'POST /v1/telemetry/query', body: { select: ['v'], from: { measurement: 'readings', database: 'shared_db', retentionPolicy: 'autogen' }, where: { tags: { nodeId: '@nodeId' }, time: TIME } }, read: true },
  { route: 'POST /v1/telemetry/query', query: { dryRun: 'true' }, body: [{ select: [{ field: 'v', function: 'max' }], from: { measurement: 'readings', database: 'shared_db', retentionPolicy: 'autogen' }, where: { tags: { nodeId: '@nodeId' }, time: TIME } }], read: true },

  // the InfluxDB 1.x door: the same rules through /write and InfluxQL
  { route: 'POST /write', query: { db: 'shared_db', rp: 'autogen', precision: 'ms' }, raw: 'intrusion,nodeId=@nodeId v=666i 1767225600000' },
  { route: 'GET /query', query: { db: 'shared_db', q: "SELECT * FROM readings WHERE nodeId = '@nodeId' AND time >= 1767225600000ms AND time < 1767229200000ms" }, read: true },
  { route: 'POST /query', query: { db: 'shared_db', q: "SELECT max(v) FROM readings WHERE nodeId =~ /^@nodeId$/ AND time >= 1767225600000ms AND time < 1767229200000ms GROUP BY *" }, read: true },
  { route: 'DELETE /user/tokens/:id', params: { id: '@apiToken' } },

  { route: 'POST /v1/webhook', query: { roleId: '@role' }, body: { kind: 'mqtt', name: 'intruder-subscription' } },
  { route: 'POST /v1/webhook/query', body: { filter: { id: ['@webhook'], roleId: ['@role'] } }, read: true },
  { route: 'GET /v1/webhook/:webhookId', params: { webhookId: '@webhook' }, read: true },
  { route: 'PUT /v1/webhook/:webhookId', params: { webhookId: '@webhook' }, body: { name: 'renamed-by-intruder', types: ['*'], enabled: true } },
  { route: 'POST /v1/webhook/:webhookId/secret', params: { webhookId: '@webhook' }, own: [400] },
  { route: 'POST /v1/webhook/:webhookId/test', params: { webhookId: '@webhook' } },
  { route: 'POST /v1/webhook/:webhookId/delivery/query', params: { webhookId: '@webhook' }, body: { filter: { eventId: '@event' } }, read: true },
  { route: 'GET /v1/webhook/:webhookId/delivery/:deliveryId', params: { webhookId: '@webhook', deliveryId: '@delivery' }, read: true },
  // the victim's event on the attacker's own subscription: answered like an event that does not exist
  { route: 'POST /v1/webhook/:webhookId/replay', params: { webhookId: '@webhook' }, body: { eventId: '@event' } },
  { route: 'DELETE /v1/webhook/:webhookId', params: { webhookId: '@webhook' } },

  // alarms: a rule names a role, devices and recipients (422: a recipient who is not a member of the role)
  { route: 'POST /v1/alarm/rule', query: { roleId: '@role' }, body: { ...ALARM_RULE, deviceIds: ['@device'], notify: [{ userEmail: '@email' }] }, alsoRefused: [422] },
  { route: 'POST /v1/alarm/rule/query', body: { filter: { id: ['@alarmRule'], roleId: ['@role'], deviceId: ['@device'] } }, read: true },
  { route: 'GET /v1/alarm/rule/:ruleId', params: { ruleId: '@alarmRule' }, read: true },
  { route: 'PUT /v1/alarm/rule/:ruleId', params: { ruleId: '@alarmRule' }, body: { ...ALARM_RULE, deviceIds: ['@device'], notify: [{ userEmail: '@email' }] }, alsoRefused: [422] },
  { route: 'POST /v1/alarm/query', body: { filter: { id: ['@alarm'], deviceId: ['@device'], roleId: ['@role'], ruleId: ['@alarmRule'] } }, read: true },
  { route: 'POST /v1/alarm/:alarmId/ack', params: { alarmId: '@alarm' } },
  { route: 'POST /v1/alarm/:alarmId/clear', params: { alarmId: '@alarm' } },
  { route: 'DELETE /v1/alarm/rule/:ruleId', params: { ruleId: '@alarmRule' } },
];

/** Routes acting on the caller only (its tokens, its 2FA, its password) or on nothing tenant-owned: no id slot. */
export const SELF_ONLY: Record<string, string> = {
  'POST /auth/login': 'credentials, no id',
  'GET /auth/accesstoken': 'own session', 'GET /auth/refreshtoken': 'own session', 'GET /auth/refreshtoken/validate': 'own session',
  'GET /auth/accesstoken/validate': 'own session', 'POST /auth/logout': 'own session',
  'GET /user/2fa': 'own 2FA', 'POST /user/2fa/totp/setup': 'own 2FA', 'POST /user/2fa/totp/enable': 'own 2FA',
  'POST /user/2fa/totp/authenticate': 'own 2FA', 'POST /user/2fa/recovery-code/authenticate': 'own 2FA',
  'POST /user/2fa/recovery-code/regenerate': 'own 2FA', 'DELETE /user/2fa': 'own 2FA', 'PUT /user/password': 'own password',
  'GET /v1/device/schema': 'built-in schemas', 'GET /v1/device/schema/:nodeType': 'built-in schemas',
  'GET /v1/telemetry/namespaces': 'read as the attacker and checked for leaks separately',
  'POST /user/tokens': 'own API tokens', 'GET /user/tokens': 'own API tokens (listed for the caller only)',
  'POST /v1/license/query': 'root members only (every tenant is refused with 403); names no id',
  'GET /v1/event/types': 'the registry of event types; names no id',
};
