// Alarm rules and alarms (docs/api.md#alarms): rules of a role (create, read, query, replace, delete), the alarm
// history with its filters and paging, acknowledge and clear. Rights: src/access/alarms.ts.
import type { RouteContext } from '../context/route-context.ts';
import type { Deps } from '../context/deps.ts';
import { ApiError } from '../http/errors.ts';
import { publicUrlOf } from '../lib/config.ts';
import { tellLater } from './notify.ts';
import { allReadableDevices, reach } from '../access/rights.ts';
import { isRootMember } from '../access/root.ts';
import { requireVisibleRule } from '../access/alarms.ts';
import { alarmsPage, emailsOf, findRule, rulesOfRoles, type RuleRow } from './alarms.store.ts';
import { acknowledgeAlarm, clearAlarmByHand, createRule, removeRule, replaceRule, type Notice } from './alarms.service.ts';
import {
  AlarmParams, AlarmQueryBody, AlarmResponse, AlarmsResponse, CreateRuleQuery, RuleBody, RuleParams, RuleQueryBody, RuleResponse, RulesResponse,
  toAlarm, toRule,
} from './alarms.schemas.ts';

const TAG = 'alarms';
const RULE = 'Needs direct or indirect alarmManagement over the rule\'s role, or indirect roleManagement over it (a role outside the '
  + 'caller\'s reach is 404).';
const HANDLE = 'Needs to read the alarm\'s device (else 404), and alarmManagement over the rule\'s role (as for rules) or monitorManagement '
  + 'on the device (else 403).';
const BODY = 'Body { name, deviceIds? (default: every device the role may read), nodeType?, series: { namespace, measurement, field }, '
  + 'condition: { type: above|below, value, hysteresis? } | { type: noData, seconds }, holdSeconds?, clearHoldSeconds?, severity: '
  + 'critical|major|minor|warning, notify?: [{ userEmail, language? }] (members of the role), mailIntervalSeconds? (default 900), enabled? }. '
  + '422 UNKNOWN_SERIES (no such field), FIELD_NOT_NUMERIC (a threshold on a string field), SERIES_NOT_READABLE (the role may read no '
  + 'watched device with data in the series, or a listed device).';

async function rulesView(deps: Deps, rows: readonly RuleRow[]) {
  const ids = new Set<number>();
  for (const r of rows) for (const n of JSON.parse(r.notify) as { userId: number }[]) ids.add(n.userId);
  const emails = await emailsOf(deps.db, [...ids]);
  return rows.map((r) => toRule(r, emails));
}

export function registerAlarmRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  const teller = { db, log: deps.log, mailer: deps.mailer, consoleUrl: publicUrlOf(deps.config), wake: deps.events.wake };
  /** After a unit that changed rules or states by hand: the evaluator forgets what it knew; events to deliver, mails to send. */
  function after(notices: readonly Notice[]): void {
    deps.alarms.rulesChanged();
    tellLater(teller, notices);
  }

  api.route({
    method: 'post', path: '/v1/alarm/rule', tag: TAG, summary: 'Create an alarm rule of a role',
    description: `${BODY} ${RULE}`,
    auth: auth.requireActor, query: CreateRuleQuery, body: RuleBody,
    responses: { 200: { description: 'the new rule', schema: RuleResponse } },
  }, async (c, { query, body }) => {
    const rule = await createRule(db, c.var.actor.userId, query.roleId, body, deps.now());
    deps.alarms.rulesChanged();
    return c.json({ rule: (await rulesView(deps, [rule]))[0] });
  });

  api.route({
    method: 'post', path: '/v1/alarm/rule/query', tag: TAG, summary: 'Query alarm rules',
    description: 'Body { filter?: { id?, roleId?, deviceId? } }: the rules of the roles in the caller\'s reach, ascending by id. deviceId keeps '
      + 'rules that list one of the devices, or watch every device of their role.',
    auth: auth.requireActor, body: RuleQueryBody,
    responses: { 200: { description: 'the rules', schema: RulesResponse } },
  }, async (c, { body }) => {
    const f = body?.filter ?? {};
    let roles = await reach(db, c.var.actor.userId);
    if (f.roleId) roles = roles.filter((r) => f.roleId!.includes(r));
    const rows = (await rulesOfRoles(db, roles)).filter((r) => (f.id === undefined || f.id.includes(r.id))
      && (f.deviceId === undefined || r.device_ids === null || (JSON.parse(r.device_ids) as number[]).some((d) => f.deviceId!.includes(d))));
    return c.json({ rules: await rulesView(deps, rows) });
  });

  api.route({
    method: 'get', path: '/v1/alarm/rule/:ruleId', tag: TAG, summary: 'Read an alarm rule',
    description: 'Visible to the members, direct or indirect, of the rule\'s role; otherwise 404.',
    auth: auth.requireActor, params: RuleParams,
    responses: { 200: { description: 'the rule', schema: RuleResponse } },
  }, async (c, { params }) => {
    const rule = await findRule(db, params.ruleId);
    await requireVisibleRule(db, c.var.actor.userId, params.ruleId, rule?.role_id);
    return c.json({ rule: (await rulesView(deps, [rule!]))[0] });
  });

  api.route({
    method: 'put', path: '/v1/alarm/rule/:ruleId', tag: TAG, summary: 'Replace an alarm rule',
    description: `${BODY} The rule's active alarms are cleared (by the caller) and its devices judged afresh. ${RULE}`,
    auth: auth.requireActor, params: RuleParams, body: RuleBody,
    responses: { 200: { description: 'the rule', schema: RuleResponse } },
  }, async (c, { params, body }) => {
    const { userId } = c.var.actor;
    const { rule, notices } = await replaceRule(db, userId, await callerEmail(deps, userId), params.ruleId, body, deps.now());
    after(notices);
    return c.json({ rule: (await rulesView(deps, [rule]))[0] });
  });

  api.route({
    method: 'delete', path: '/v1/alarm/rule/:ruleId', tag: TAG, summary: 'Delete an alarm rule',
    description: `Its active alarms are cleared (by the caller); its alarms stay in the history. ${RULE}`,
    auth: auth.requireActor, params: RuleParams,
    responses: { 204: { description: 'deleted' } },
  }, async (c, { params }) => {
    const { userId } = c.var.actor;
    after(await removeRule(db, userId, await callerEmail(deps, userId), params.ruleId, deps.now()));
    return c.body(null, 204);
  });

  api.route({
    method: 'post', path: '/v1/alarm/query', tag: TAG, summary: 'Query alarms, open and past',
    description: 'Body { filter?: { id?, deviceId?, roleId?, ruleId?, severity?, state? (active_unack|active_ack|cleared_unack|cleared_ack), '
      + 'from?, to? (ISO 8601: alarms that had started before to and not ended by from) }, beforeId?, limit? (1-1000, default 100) }. '
      + 'Alarms of devices the caller may read, newest first; page with beforeId = the last id.',
    auth: auth.requireActor, body: AlarmQueryBody,
    responses: { 200: { description: 'the alarms', schema: AlarmsResponse } },
  }, async (c, { body }) => {
    const userId = c.var.actor.userId;
    const deviceIds = await isRootMember(db, userId) ? undefined : (await allReadableDevices(db, userId)).map((d) => d.deviceId);
    const rows = await alarmsPage(db, { filter: body?.filter ?? {}, deviceIds, limit: body?.limit ?? 100, beforeId: body?.beforeId });
    return c.json({ alarms: rows.map(toAlarm) });
  });

  api.route({
    method: 'post', path: '/v1/alarm/:alarmId/ack', tag: TAG, summary: 'Acknowledge an alarm',
    description: `Active or cleared; again is a no-op answered with the alarm as it is. ${HANDLE}`,
    auth: auth.requireActor, params: AlarmParams,
    responses: { 200: { description: 'the alarm', schema: AlarmResponse } },
  }, async (c, { params }) => {
    const { userId } = c.var.actor;
    const { alarm, notices } = await acknowledgeAlarm(db, userId, await callerEmail(deps, userId), params.alarmId, deps.now());
    after(notices);
    return c.json({ alarm: toAlarm(alarm) });
  });

  api.route({
    method: 'post', path: '/v1/alarm/:alarmId/clear', tag: TAG, summary: 'Clear an alarm',
    description: 'An active alarm becomes cleared; a threshold still breached must recover before its rule raises again. Clearing a '
      + `cleared alarm is a no-op answered with the alarm. ${HANDLE}`,
    auth: auth.requireActor, params: AlarmParams,
    responses: { 200: { description: 'the alarm', schema: AlarmResponse } },
  }, async (c, { params }) => {
    const { userId } = c.var.actor;
    const { alarm, notices } = await clearAlarmByHand(db, userId, await callerEmail(deps, userId), params.alarmId, deps.now());
    after(notices);
    return c.json({ alarm: toAlarm(alarm) });
  });
}

async function callerEmail(deps: Deps, userId: number): Promise<string> {
  const email = (await emailsOf(deps.db, [userId])).get(userId);
  if (email === undefined) throw new ApiError('UNAUTHENTICATED', 'the token\'s user no longer exists');
  return email;
}
