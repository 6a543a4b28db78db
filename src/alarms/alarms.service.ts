// Alarm use cases that span tables, each in one unit of work: validating and storing rules, acknowledging and clearing
// alarms, and applying evaluated points and no-data checks (state, alarms and their events commit together).
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { readableDevices, reaches } from '../access/rights.ts';
import { devicesOfRole, mayHandleAlarm, requireAlarmManagement, requireVisibleRule } from '../access/alarms.ts';
import { namespaceKey } from '../telemetry/namespaces.ts';
import { writeEvents, type EventDraft } from '../events/outbox.ts';
import { mailLanguage } from '../auth/reset-mail.ts';
import {
  acknowledge, activeAlarm, activeAlarmsOfRule, clearAlarm, deleteRule, deviceNodes, emailsOf, fieldType, findAlarm, findRule, insertAlarm, insertRule,
  advanceLastPoints, lockShard, nodeIdsWithSeries, resetStates, tryLockShard, saveState, stateOf, statesOf, updateRule, usersByEmail,
  type AlarmRow, type RuleFields, type RuleRow, type StateRow,
} from './alarms.store.ts';
import { toAlarm, type RuleInput } from './alarms.schemas.ts';
import { breaches, checkHold, checkNoData, clearedByHand, recovered, NORMAL, stepNoData, stepThreshold, type AlarmState, type RuleSpec, type Transition } from './evaluate.ts';

/** default repeat limit of mails per rule and device */
export const DEFAULT_MAIL_INTERVAL_MS = 15 * 60_000;
const NUMERIC = new Set(['float', 'integer', 'unsigned', 'boolean']);

export function specOf(rule: RuleRow): RuleSpec {
  return {
    kind: rule.kind, threshold: rule.threshold, hysteresis: rule.hysteresis, holdMs: rule.hold_ms, clearHoldMs: rule.clear_hold_ms, noDataMs: rule.no_data_ms,
  };
}

// ---------------------------------------------------------------- rules

/**
 * The stored form of a rule for role R after every check: the caller may manage R's alarm rules (404/403), the
 * devices exist for the caller (404) and R may read them, the series exists (UNKNOWN_SERIES), a threshold is on a
 * numeric field (FIELD_NOT_NUMERIC), R may read the series on at least one watched device (SERIES_NOT_READABLE), and
 * the people notified are members of R, directly or indirectly.
 */
export async function ruleFields(db: Db, userId: number, roleId: number, input: RuleInput): Promise<RuleFields> {
  await requireAlarmManagement(db, userId, roleId);
  const nsKey = namespaceKey(input.series.namespace);
  const { measurement, field } = input.series;
  const seriesText = `${nsKey} ${measurement}.${field}`;
  const type = await fieldType(db, nsKey, measurement, field);
  if (type === undefined) throw new ApiError('UNKNOWN_SERIES', `series.field: no field ${JSON.stringify(field)} of measurement ${JSON.stringify(measurement)} in namespace ${nsKey}`);
  if (input.condition.type !== 'noData' && !NUMERIC.has(type)) {
    throw new ApiError('FIELD_NOT_NUMERIC', `condition: field ${JSON.stringify(field)} holds ${type} values; a threshold needs a number field`);
  }
  const roleDevices = await devicesOfRole(db, roleId);
  let watched: number[];
  if (input.deviceIds !== undefined) {
    const ids = [...new Set(input.deviceIds)];
    const callerReads = new Set((await readableDevices(db, userId, ids)).map((d) => d.deviceId));
    const missing = ids.find((id) => !callerReads.has(id));
    if (missing !== undefined) throw new ApiError('NOT_FOUND', `device ${missing} not found`);
    const roleReads = new Set(roleDevices.map((d) => d.deviceId));
    const unread = ids.find((id) => !roleReads.has(id));
    if (unread !== undefined) throw new ApiError('SERIES_NOT_READABLE', `deviceIds: role ${roleId} may not read device ${unread}`);
    watched = ids;
  } else {
    watched = roleDevices.map((d) => d.deviceId);
  }
  let nodes = await deviceNodes(db, watched);
  if (input.nodeType !== undefined) nodes = nodes.filter((n) => n.node_type === input.nodeType);
  const nodeIds = nodes.flatMap((n) => (n.node_id === null ? [] : [n.node_id]));
  if ((await nodeIdsWithSeries(db, nsKey, measurement, nodeIds)).size === 0) {
    throw new ApiError('SERIES_NOT_READABLE', `series: role ${roleId} may read no device${input.nodeType === undefined ? '' : ` of nodeType ${JSON.stringify(input.nodeType)}`} with data in ${seriesText}`);
  }
  const recipients = input.notify ?? [];
  const users = await usersByEmail(db, recipients.map((r) => r.userEmail));
  const notify: { userId: number; language: string }[] = [];
  for (const [i, r] of recipients.entries()) {
    const id = users.get(r.userEmail);
    if (id === undefined || !(await reaches(db, id, roleId))) throw new ApiError('UNPROCESSABLE', `notify[${i}].userEmail: ${r.userEmail} is not a member of role ${roleId}`);
    if (!notify.some((n) => n.userId === id)) notify.push({ userId: id, language: mailLanguage(r.language) });
  }
  const c = input.condition;
  return {
    role_id: roleId, name: input.name, device_ids: input.deviceIds === undefined ? null : JSON.stringify(watched), node_type: input.nodeType ?? null,
    namespace: JSON.stringify(input.series.namespace), namespace_key: nsKey, measurement, field,
    kind: c.type, threshold: c.type === 'noData' ? null : c.value, hysteresis: c.type === 'noData' ? 0 : c.hysteresis ?? 0,
    hold_ms: Math.round((input.holdSeconds ?? 0) * 1000), clear_hold_ms: Math.round((input.clearHoldSeconds ?? 0) * 1000),
    no_data_ms: c.type === 'noData' ? Math.round(c.seconds * 1000) : null, severity: input.severity, notify: JSON.stringify(notify),
    mail_interval_ms: input.mailIntervalSeconds === undefined ? DEFAULT_MAIL_INTERVAL_MS : Math.round(input.mailIntervalSeconds * 1000),
    enabled: input.enabled === false ? 0 : 1,
  };
}

export async function createRule(db: Db, userId: number, roleId: number, input: RuleInput, now: number): Promise<RuleRow> {
  return db.write(async (tx) => {
    const fields = await ruleFields(tx, userId, roleId, input);
    return (await findRule(tx, await insertRule(tx, fields, userId, now)))!;
  });
}

/** The rule after the visibility (404) and management (403) checks. */
export async function manageableRule(db: Db, userId: number, ruleId: number): Promise<RuleRow> {
  const rule = await findRule(db, ruleId);
  await requireVisibleRule(db, userId, ruleId, rule?.role_id);
  await requireAlarmManagement(db, userId, rule!.role_id);
  return rule!;
}

/** Replaces a rule: its active alarms are cleared (by the caller) and its devices are judged afresh. */
export async function replaceRule(db: Db, userId: number, email: string, ruleId: number, input: RuleInput, now: number): Promise<{ rule: RuleRow; notices: Notice[] }> {
  return db.write(async (tx) => {
    const before = await manageableRule(tx, userId, ruleId);
    const fields = await ruleFields(tx, userId, before.role_id, input);
    const notices = await clearRuleAlarms(tx, before, userId, email, now);
    await updateRule(tx, ruleId, fields, now);
    await resetStates(tx, ruleId);
    return { rule: (await findRule(tx, ruleId))!, notices };
  });
}

export async function removeRule(db: Db, userId: number, email: string, ruleId: number, now: number): Promise<Notice[]> {
  return db.write(async (tx) => {
    const rule = await manageableRule(tx, userId, ruleId);
    const notices = await clearRuleAlarms(tx, rule, userId, email, now);
    await deleteRule(tx, ruleId);
    return notices;
  });
}

async function clearRuleAlarms(tx: Db, rule: RuleRow, userId: number, email: string, now: number): Promise<Notice[]> {
  const out: Notice[] = [];
  for (const a of await activeAlarmsOfRule(tx, rule.id)) {
    await clearAlarm(tx, a.id, now, now, userId, email);
    out.push(await limitManual(tx, await transitioned(tx, rule, 'cleared', a.id, now, undefined), now));
  }
  return out;
}

// ---------------------------------------------------------------- acknowledge and clear

/** The alarm `id` when the caller may read its device (else 404) and handle it (else 403). */
async function handleableAlarm(db: Db, userId: number, id: number): Promise<AlarmRow> {
  const alarm = await findAlarm(db, id);
  const readable = alarm === undefined ? [] : await readableDevices(db, userId, [alarm.device_id]);
  if (alarm === undefined || readable.length === 0) throw new ApiError('NOT_FOUND', `alarm ${id} not found`);
  if (!(await mayHandleAlarm(db, userId, alarm.role_id, alarm.device_id))) {
    throw new ApiError('FORBIDDEN', `missing right: direct or indirect alarmManagement over role ${alarm.role_id}, or indirect roleManagement over it, or monitorManagement on device ${alarm.device_id}`);
  }
  return alarm;
}

/** Acknowledges an alarm (active or cleared); acknowledging it again changes nothing and tells no one. */
export async function acknowledgeAlarm(db: Db, userId: number, email: string, id: number, now: number): Promise<{ alarm: AlarmRow; notices: Notice[] }> {
  return db.write(async (tx) => {
    await handleableAlarm(tx, userId, id);
    const changed = await acknowledge(tx, id, now, userId, email);
    const alarm = (await findAlarm(tx, id))!;
    if (!changed) return { alarm, notices: [] };
    const rule = alarm.rule_id === null ? undefined : await findRule(tx, alarm.rule_id);
    return { alarm, notices: [await limitManual(tx, await transitioned(tx, rule, 'acknowledged', id, now, alarm), now)] };
  });
}

/** Clears an active alarm by hand; a threshold still breached must recover before its rule raises again. */
export async function clearAlarmByHand(db: Db, userId: number, email: string, id: number, now: number): Promise<{ alarm: AlarmRow; notices: Notice[] }> {
  return db.write(async (tx) => {
    const found = await handleableAlarm(tx, userId, id);
    const rule = found.rule_id === null ? undefined : await findRule(tx, found.rule_id);
    if (rule !== undefined) await lockShardOf(tx, rule.id);
    const changed = await clearAlarm(tx, id, now, now, userId, email);
    const alarm = (await findAlarm(tx, id))!;
    if (!changed) return { alarm, notices: [] };
    if (rule !== undefined) {
      const state = await stateOf(tx, rule.id, alarm.device_id);
      if (state !== undefined && state.alarm_id === id) await saveState(tx, { ...fromState(rule.id, alarm.device_id, clearedByHand(specOf(rule), toState(state)), null, state.mailed_at) });
    }
    return { alarm, notices: [await limitManual(tx, await transitioned(tx, rule, 'cleared', id, now, alarm), now)] };
  });
}

// ---------------------------------------------------------------- evaluation

/** Rules are spread over this many shards; a shard is evaluated by one node at a time (lockShard). */
export const SHARDS = 16;
export const shardOf = (ruleId: number): number => ruleId % SHARDS;

async function lockShardOf(tx: Db, ruleId: number): Promise<void> {
  await lockShard(tx, shardOf(ruleId));
}

/** A transition told to the outside: its event is written; `mail` when the rule's recipients are to be mailed. */
export interface Notice {
  what: 'raised' | 'acknowledged' | 'cleared';
  alarm: AlarmRow;
  rule: RuleRow | undefined;
  mail: boolean;
}

/** A (rule, device) and what is evaluated for it: points as [time, value] pairs (threshold and no-data rules). */
export interface Watch {
  rule: RuleRow;
  spec: RuleSpec;
  deviceId: number;
  /** `rule:device`, the pair's key in every map */
  key: string;
}

export const watchKey = (ruleId: number, deviceId: number): string => `${ruleId}:${deviceId}`;
export interface WatchPoints {
  watch: Watch;
  points: number[];
}

/**
 * The newest point judged for pairs whose phase it did not change, kept by this node and written to the database
 * in batches (flushLastPoints): most points change nothing, and writing each pair's state for each of them would
 * cost more than the ingest itself. Merged with the stored state wherever a state is read.
 */
export type LastPoints = Map<string, { ruleId: number; deviceId: number; lastAt: number; lastValue: number | null }>;

export function toState(row: StateRow | undefined, last?: { lastAt: number; lastValue: number | null }): AlarmState {
  const s = row === undefined ? NORMAL : { phase: row.phase, since: row.since, sinceValue: row.since_value, lastAt: row.last_at, lastValue: row.last_value };
  return last !== undefined && (s.lastAt === null || last.lastAt > s.lastAt) ? { ...s, lastAt: last.lastAt, lastValue: last.lastValue } : s;
}

/** Writes the kept newest points (see LastPoints) and forgets them. */
export async function flushLastPoints(db: Db, last: LastPoints): Promise<number> {
  if (last.size === 0) return 0;
  const rows = [...last.values()];
  last.clear();
  await db.write((tx) => advanceLastPoints(tx, rows));
  return rows.length;
}

function fromState(ruleId: number, deviceId: number, s: AlarmState, alarmId: number | null, mailedAt: number | null): StateRow {
  return {
    rule_id: ruleId, device_id: deviceId, phase: s.phase, since: s.since, since_value: s.sinceValue, last_at: s.lastAt, last_value: s.lastValue,
    alarm_id: alarmId, mailed_at: mailedAt,
  };
}

/** Writes the event of a transition and decides whether it is mailed (at most once per mail interval per rule and device). */
async function transitioned(tx: Db, rule: RuleRow | undefined, what: Notice['what'], alarmId: number, now: number, known: AlarmRow | undefined): Promise<Notice> {
  const alarm = known ?? (await findAlarm(tx, alarmId))!;
  const draft: EventDraft = {
    type: `alarm.${what}`, at: now, subject: 'alarm', subjectId: String(alarm.id), audience: 'role', roleId: alarm.role_id, deviceId: alarm.device_id,
    data: { alarm: toAlarm(alarm) },
  };
  await writeEvents(tx, [draft]);
  return { what, alarm, rule, mail: false };
}

/** The mail decision of a transition made by hand, against the state's repeat limit (under the rule's shard lock). */
async function limitManual(tx: Db, n: Notice, now: number): Promise<Notice> {
  if (n.rule === undefined || n.rule.notify === '[]') return n;
  await lockShardOf(tx, n.rule.id);
  const row = await stateOf(tx, n.rule.id, n.alarm.device_id);
  const mailed = new Map([[`${n.rule.id}:${n.alarm.device_id}`, row?.mailed_at ?? null]]);
  limitMails([n], mailed, now);
  if (n.mail) await saveState(tx, { ...(row ?? fromState(n.rule.id, n.alarm.device_id, NORMAL, null, null)), mailed_at: now });
  return n;
}

/** Decides the mails of a unit's notices against the repeat limit kept in the states (`mailed`: rule:device -> time). */
function limitMails(notices: Notice[], mailed: Map<string, number | null>, now: number): void {
  for (const n of notices) {
    if (n.rule === undefined || n.rule.notify === '[]') continue;
    const key = `${n.rule.id}:${n.alarm.device_id}`;
    const last = mailed.get(key) ?? null;
    if (last !== null && now - last < n.rule.mail_interval_ms) continue;
    n.mail = true;
    mailed.set(key, now);
  }
}

async function applyTransition(tx: Db, w: Watch, t: Transition, alarmId: number | null, now: number): Promise<{ alarmId: number | null; notice?: Notice }> {
  const { rule, deviceId } = w;
  if (t.kind === 'raise') {
    if (alarmId !== null || (await activeAlarm(tx, rule.id, deviceId)) !== undefined) return { alarmId };
    const id = await insertAlarm(tx, {
      rule_id: rule.id, rule_name: rule.name, role_id: rule.role_id, device_id: deviceId, kind: rule.kind, severity: rule.severity,
      series: JSON.stringify({ namespace: JSON.parse(rule.namespace), measurement: rule.measurement, field: rule.field }),
      value: t.value, start_at: t.startAt, raised_at: now,
    });
    return { alarmId: id, notice: await transitioned(tx, rule, 'raised', id, now, undefined) };
  }
  const open = alarmId ?? (await activeAlarm(tx, rule.id, deviceId))?.id ?? null;
  if (open === null || !(await clearAlarm(tx, open, now, t.endAt, null, null))) return { alarmId: null };
  return { alarmId: null, notice: await transitioned(tx, rule, 'cleared', open, now, undefined) };
}

/**
 * Applies points to their (rule, device) states in one shard, under the shard's lock: each (rule, device)'s points in
 * time order, older than its last evaluated point ignored. Returns the notices of the transitions.
 */
export interface Evaluated {
  notices: Notice[];
  /** pairs whose newest point moved without their phase: for the node's LastPoints once the unit has committed */
  kept: LastPoints;
  /** pairs whose whole state was written: their LastPoints entries are stale once the unit has committed */
  saved: string[];
}

/** What a committed unit of evaluation changes in the node's LastPoints. */
export function applyKept(last: LastPoints, e: Pick<Evaluated, 'kept' | 'saved'>): void {
  for (const key of e.saved) last.delete(key);
  for (const [key, v] of e.kept) {
    const had = last.get(key);
    if (had === undefined || had.lastAt < v.lastAt) last.set(key, v);
  }
}

export async function evaluatePoints(tx: Db, shard: number, work: readonly WatchPoints[], now: number, last?: LastPoints): Promise<Evaluated>;
/**
 * `dry`: judge in a read, without the shard's lock; undefined as soon as anything would be written. `known`: states
 * as this node last read them (null: none), where it is the only writer (SQLite); missing ones are read and added.
 */
export async function evaluatePoints(tx: Db, shard: number, work: readonly WatchPoints[], now: number, last: LastPoints | undefined, dry: true, known?: KnownStates): Promise<Evaluated | undefined>;
export async function evaluatePoints(tx: Db, shard: number, work: readonly WatchPoints[], now: number, last: LastPoints = new Map(), dry = false, known?: KnownStates): Promise<Evaluated | undefined> {
  if (!dry) await lockShard(tx, shard);
  const byKey = await statesByKey(tx, work.map((w) => w.watch), known);
  if (dry) return judgeNormal(work, byKey, last);
  const notices: Notice[] = [];
  const mailed = new Map<string, number | null>();
  const finals: { w: Watch; state: AlarmState; alarmId: number | null; key: string }[] = [];
  const kept: LastPoints = new Map();
  for (const { watch: w, points } of work) {
    const key = w.key;
    const row = byKey.get(key);
    mailed.set(key, row?.mailed_at ?? null);
    let state = toState(row, last.get(key));
    let alarmId = row?.alarm_id ?? null;
    const order: number[] = [];
    let sorted = true;
    for (let i = 0; i < points.length; i += 2) {
      if (i > 0 && points[i] < points[i - 2]) sorted = false;
      order.push(i);
    }
    if (!sorted) order.sort((a, b) => points[a] - points[b]);
    const before = state;
    for (const i of order) {
      const step = w.spec.kind === 'noData' ? stepNoData(w.spec, state, points[i], now) : stepThreshold(w.spec, state, points[i], points[i + 1]);
      state = step.state;
      if (step.transition) {
        if (dry) return undefined;
        const applied = await applyTransition(tx, w, step.transition, alarmId, now);
        alarmId = applied.alarmId;
        if (applied.notice) notices.push(applied.notice);
      }
    }
    if (state === before) continue;
    if (state.phase === before.phase && state.since === before.since && alarmId === (row?.alarm_id ?? null)) {
      // only the newest point moved: kept by this node, written later (the unit may yet be retried: not kept here)
      kept.set(key, { ruleId: w.rule.id, deviceId: w.deviceId, lastAt: state.lastAt!, lastValue: state.lastValue });
    } else {
      if (dry) return undefined;
      finals.push({ w, state, alarmId, key });
    }
  }
  if (dry) return { notices, kept, saved: [] };
  limitMails(notices, mailed, now);
  for (const f of finals) await saveState(tx, fromState(f.w.rule.id, f.w.deviceId, f.state, f.alarmId, mailed.get(f.key) ?? null));
  await saveMailed(tx, notices, finals.map((f) => f.key), mailed, byKey);
  return { notices, kept, saved: finals.map((f) => f.key) };
}

/**
 * The dry judgement of a batch, without allocating per point: a threshold pair whose new points leave its phase as it
 * is (normal and no breach; active or suppressed and no recovery; pending and breached, or clearing and recovered,
 * within the hold) only moves its newest point, straight into `last` (a dry judgement is never retried). Undefined as
 * soon as a pair would move its phase (those are judged under the lock).
 */
function judgeNormal(work: readonly WatchPoints[], byKey: StateLookup, last: LastPoints): Evaluated | undefined {
  for (const { watch: w, points } of work) {
    const row = byKey.get(w.key);
    if (w.spec.kind === 'noData') return undefined;
    const phase = row?.phase ?? 'normal';
    const mem = last.get(w.key);
    const from = Math.max(mem?.lastAt ?? -Infinity, row?.last_at ?? -Infinity);
    let newest = from;
    let value: number | null = null;
    for (let i = 0; i < points.length; i += 2) {
      const t = points[i];
      const v = points[i + 1];
      if (t <= from || Number.isNaN(v)) continue;
      if (!keepsPhase(w.spec, phase, row?.since ?? null, t, v)) return undefined;
      if (t > newest) { newest = t; value = v; }
    }
    if (newest === from) continue;
    if (mem !== undefined) { mem.lastAt = newest; mem.lastValue = value; } else last.set(w.key, { ruleId: w.rule.id, deviceId: w.deviceId, lastAt: newest, lastValue: value });
  }
  return { notices: [], kept: new Map(), saved: [] };
}

/** Whether a point (newer than the pair's newest) leaves a threshold pair's phase and its start as they are. */
function keepsPhase(spec: RuleSpec, phase: StateRow['phase'], since: number | null, t: number, v: number): boolean {
  switch (phase) {
    case 'normal': return !breaches(spec, v);
    case 'active': case 'suppressed': return !recovered(spec, v);
    case 'pending': return since !== null && breaches(spec, v) && t - since < spec.holdMs;
    case 'clearing': return since !== null && recovered(spec, v) && t - since < spec.clearHoldMs;
  }
}

/** States as one node last read them, by rule:device (null: no state); see evaluatePoints. */
export type KnownStates = Map<string, StateRow | null>;

interface StateLookup { get(key: string): StateRow | undefined }

async function statesByKey(tx: Db, watches: readonly Watch[], known?: KnownStates): Promise<StateLookup> {
  const out = new Map<string, StateRow>();
  const missing = known === undefined ? watches : watches.filter((w) => !known.has(w.key));
  if (missing.length > 0) {
    for (const row of await statesOf(tx, missing.map((w) => [w.rule.id, w.deviceId] as const))) out.set(watchKey(row.rule_id, row.device_id), row);
  }
  if (known === undefined) return out;
  for (const w of missing) known.set(w.key, out.get(w.key) ?? null);
  return { get: (key) => known.get(key) ?? undefined };
}

/** States whose mail time changed without their phase changing are saved too. */
async function saveMailed(tx: Db, notices: Notice[], saved: string[], mailed: Map<string, number | null>, byKey: StateLookup): Promise<void> {
  const done = new Set(saved);
  for (const n of notices) {
    if (!n.mail || n.rule === undefined) continue;
    const key = `${n.rule.id}:${n.alarm.device_id}`;
    if (done.has(key)) continue;
    done.add(key);
    const row = byKey.get(key) ?? fromState(n.rule.id, n.alarm.device_id, NORMAL, null, null);
    await saveState(tx, { ...row, mailed_at: mailed.get(key) ?? null });
  }
}

/** The timer's step of a pair at `now`: the no-data check, or the end of a threshold's hold. */
export function timedStep(w: Watch, state: AlarmState, now: number): { state: AlarmState; transition?: Transition } {
  return w.spec.kind === 'noData' ? checkNoData(w.spec, state, now, w.rule.updated_at) : checkHold(w.spec, state, now);
}

/** The timer's check (timedStep) of one shard's watches at `now`; undefined when another node is checking that shard right now. */
export async function checkNoDataShard(tx: Db, shard: number, watches: readonly Watch[], now: number, last: LastPoints = new Map()): Promise<Evaluated | undefined> {
  if (!(await tryLockShard(tx, shard))) return undefined;
  const byKey = await statesByKey(tx, watches);
  const notices: Notice[] = [];
  const mailed = new Map<string, number | null>();
  const finals: { w: Watch; state: AlarmState; alarmId: number | null; key: string }[] = [];
  for (const w of watches) {
    const key = w.key;
    const row = byKey.get(key);
    mailed.set(key, row?.mailed_at ?? null);
    const step = timedStep(w, toState(row, last.get(key)), now);
    if (!step.transition) continue;
    const applied = await applyTransition(tx, w, step.transition, row?.alarm_id ?? null, now);
    if (applied.notice) notices.push(applied.notice);
    finals.push({ w, state: step.state, alarmId: applied.alarmId, key });
  }
  limitMails(notices, mailed, now);
  for (const f of finals) await saveState(tx, fromState(f.w.rule.id, f.w.deviceId, f.state, f.alarmId, mailed.get(f.key) ?? null));
  return { notices, kept: new Map(), saved: finals.map((f) => f.key) };
}

/** The e-mail addresses of the rules' recipients (for the mails of notices). */
export async function recipientEmails(db: Db, rules: readonly RuleRow[]): Promise<Map<number, string>> {
  const ids = new Set<number>();
  for (const r of rules) for (const n of JSON.parse(r.notify) as { userId: number }[]) ids.add(n.userId);
  return emailsOf(db, [...ids]);
}
