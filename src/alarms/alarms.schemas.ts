// Request and response schemas of alarm rules and alarms (validation and the OpenAPI document), and the serializers.
import * as v from 'valibot';
import { jsonId, pathInt, qInt } from '../http/validate.ts';
import { NamespaceSchema } from '../telemetry/telemetry.schemas.ts';
import type { AlarmRow, RuleRow } from './alarms.store.ts';
import { SEVERITIES } from './evaluate.ts';

export { SEVERITIES, type Severity } from './evaluate.ts';

const MAX_LIST = 1000;
/** ThingsBoard's four states, in the order the console lists them */
export const STATES = ['active_unack', 'active_ack', 'cleared_unack', 'cleared_ack'] as const;
export type AlarmStateName = (typeof STATES)[number];
/** the longest hold, clear hold or no-data duration a rule may ask for: a year */
const MAX_SECONDS = 366 * 86_400;

const Name = v.pipe(v.string('expected a string'), v.trim(), v.minLength(1, 'expected 1 to 100 characters'), v.maxLength(100, 'expected 1 to 100 characters'));
const Text = (what: string) => v.pipe(v.string(`expected a ${what}`), v.minLength(1, `expected a non-empty ${what}`), v.maxLength(255, 'expected at most 255 characters'));
const Finite = v.pipe(v.number('expected a number'), v.finite('expected a finite number'));
const Seconds = (what: string) => v.pipe(v.number(`expected ${what} in seconds`), v.finite('expected a finite number'),
  v.minValue(0, `expected ${what} >= 0 seconds`), v.maxValue(MAX_SECONDS, `expected ${what} <= ${MAX_SECONDS} seconds`));
const Ids = v.pipe(v.array(jsonId, 'expected an array of integers'), v.maxLength(MAX_LIST, `expected at most ${MAX_LIST} items`));

export const Condition = v.variant('type', [
  v.strictObject({ type: v.picklist(['above', 'below']), value: Finite, hysteresis: v.optional(v.pipe(Finite, v.minValue(0, 'expected a hysteresis >= 0'))) }),
  v.strictObject({ type: v.literal('noData'), seconds: v.pipe(Seconds('the no-data duration'), v.minValue(1, 'expected the no-data duration >= 1 second')) }),
], 'expected { type: above|below, value, hysteresis? } or { type: noData, seconds }');

export const Recipient = v.strictObject({
  userEmail: v.pipe(v.string('expected an e-mail address'), v.trim(), v.minLength(3, 'expected an e-mail address'), v.maxLength(254, 'expected at most 254 characters'), v.toLowerCase()),
  language: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/, 'expected a BCP 47 language tag such as en or nl-BE'))),
});

export const RuleBody = v.strictObject({
  name: Name,
  /** absent: every device the role may read (narrowed by nodeType) */
  deviceIds: v.optional(v.pipe(Ids, v.minLength(1, 'expected at least one device id (leave deviceIds out for every device of the role)'))),
  nodeType: v.optional(Text('nodeType')),
  series: v.strictObject({ namespace: NamespaceSchema, measurement: Text('measurement'), field: Text('field') }),
  condition: Condition,
  holdSeconds: v.optional(Seconds('holdSeconds')),
  clearHoldSeconds: v.optional(Seconds('clearHoldSeconds')),
  severity: v.picklist(SEVERITIES, `expected one of ${SEVERITIES.join(', ')}`),
  notify: v.optional(v.pipe(v.array(Recipient, 'expected an array of { userEmail, language? }'), v.maxLength(100, 'expected at most 100 recipients'))),
  mailIntervalSeconds: v.optional(Seconds('mailIntervalSeconds')),
  enabled: v.optional(v.boolean('expected true or false')),
});
export type RuleInput = v.InferOutput<typeof RuleBody>;

export const CreateRuleQuery = v.strictObject({ roleId: qInt });
export const RuleParams = v.strictObject({ ruleId: pathInt });
export const AlarmParams = v.strictObject({ alarmId: pathInt });

export const RuleQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({ id: v.optional(Ids), roleId: v.optional(Ids), deviceId: v.optional(Ids) })),
}));

const Time = v.pipe(v.string('expected an ISO 8601 time'), v.isoTimestamp('expected an ISO 8601 time with a zone'), v.transform((s) => Date.parse(s)));
export const AlarmQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    id: v.optional(Ids),
    deviceId: v.optional(Ids),
    roleId: v.optional(Ids),
    ruleId: v.optional(Ids),
    severity: v.optional(v.pipe(v.array(v.picklist(SEVERITIES, `expected one of ${SEVERITIES.join(', ')}`)), v.maxLength(4, 'expected at most 4 severities'))),
    state: v.optional(v.pipe(v.array(v.picklist(STATES, `expected one of ${STATES.join(', ')}`)), v.maxLength(4, 'expected at most 4 states'))),
    /** alarms whose [start, end) overlaps [from, to) */
    from: v.optional(Time),
    to: v.optional(Time),
  })),
  beforeId: v.optional(jsonId),
  limit: v.optional(v.pipe(jsonId, v.minValue(1, 'expected 1 to 1000'), v.maxValue(1000, 'expected 1 to 1000'))),
}));
export type AlarmFilter = NonNullable<NonNullable<v.InferOutput<typeof AlarmQueryBody>>['filter']>;

// ---- responses ----

const Iso = v.pipe(v.string(), v.isoTimestamp());
const SeriesOut = v.object({ namespace: v.record(v.string(), v.string()), measurement: v.string(), field: v.string() });
export const Rule = v.object({
  id: v.number(), roleId: v.number(), name: v.string(), deviceIds: v.nullable(v.array(v.number())), nodeType: v.nullable(v.string()),
  series: SeriesOut,
  condition: v.union([
    v.object({ type: v.picklist(['above', 'below']), value: v.number(), hysteresis: v.number() }),
    v.object({ type: v.literal('noData'), seconds: v.number() }),
  ]),
  holdSeconds: v.number(), clearHoldSeconds: v.number(), severity: v.picklist(SEVERITIES),
  notify: v.array(v.object({ userEmail: v.string(), language: v.string() })), mailIntervalSeconds: v.number(), enabled: v.boolean(),
  createdAt: Iso, updatedAt: Iso,
});
export const RuleResponse = v.object({ rule: Rule });
export const RulesResponse = v.object({ rules: v.array(Rule) });
export const Alarm = v.object({
  id: v.number(), ruleId: v.nullable(v.number()), ruleName: v.string(), roleId: v.number(), deviceId: v.number(),
  type: v.picklist(['above', 'below', 'noData']), severity: v.picklist(SEVERITIES), state: v.picklist(STATES), series: SeriesOut,
  value: v.nullable(v.number()), startTime: Iso, raisedTime: Iso, ackTime: v.nullable(Iso), ackBy: v.nullable(v.string()),
  clearTime: v.nullable(Iso), clearedBy: v.nullable(v.string()), endTime: v.nullable(Iso),
});
export const AlarmResponse = v.object({ alarm: Alarm });
export const AlarmsResponse = v.object({ alarms: v.array(Alarm) });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toRule(row: RuleRow, emails: ReadonlyMap<number, string>): v.InferOutput<typeof Rule> {
  const notify = (JSON.parse(row.notify) as { userId: number; language: string }[])
    .filter((n) => emails.has(n.userId)).map((n) => ({ userEmail: emails.get(n.userId)!, language: n.language }));
  return {
    id: row.id, roleId: row.role_id, name: row.name, deviceIds: row.device_ids === null ? null : JSON.parse(row.device_ids) as number[],
    nodeType: row.node_type,
    series: { namespace: JSON.parse(row.namespace) as Record<string, string>, measurement: row.measurement, field: row.field },
    condition: row.kind === 'noData' ? { type: 'noData', seconds: row.no_data_ms! / 1000 } : { type: row.kind, value: row.threshold!, hysteresis: row.hysteresis },
    holdSeconds: row.hold_ms / 1000, clearHoldSeconds: row.clear_hold_ms / 1000, severity: row.severity, notify,
    mailIntervalSeconds: row.mail_interval_ms / 1000, enabled: row.enabled === 1, createdAt: iso(row.created_at)!, updatedAt: iso(row.updated_at)!,
  };
}

export function alarmState(row: Pick<AlarmRow, 'clear_at' | 'ack_at'>): AlarmStateName {
  return `${row.clear_at === null ? 'active' : 'cleared'}_${row.ack_at === null ? 'unack' : 'ack'}`;
}

export function toAlarm(row: AlarmRow): v.InferOutput<typeof Alarm> {
  return {
    id: row.id, ruleId: row.rule_id, ruleName: row.rule_name, roleId: row.role_id, deviceId: row.device_id, type: row.kind, severity: row.severity,
    state: alarmState(row), series: JSON.parse(row.series) as v.InferOutput<typeof SeriesOut>, value: row.value,
    startTime: iso(row.start_at)!, raisedTime: iso(row.raised_at)!, ackTime: iso(row.ack_at), ackBy: row.ack_by_email,
    clearTime: iso(row.clear_at), clearedBy: row.clear_at === null ? null : row.cleared_by_email ?? 'rule',
    endTime: iso(row.end_at),
  };
}
