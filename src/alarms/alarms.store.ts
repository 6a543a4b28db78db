// All SQL of alarms: rules, the evaluation state of each (rule, device), the alarms and their history, the catalogue
// lookups that validate a rule's series, and the per-shard lock that lets several nodes share the evaluation.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/open.ts';
import { inValues } from '../db/in-list.ts';
import type { Phase, RuleKind, Severity } from './evaluate.ts';

export interface RuleRow {
  id: number;
  role_id: number;
  name: string;
  device_ids: string | null;
  node_type: string | null;
  namespace: string;
  namespace_key: string;
  measurement: string;
  field: string;
  kind: RuleKind;
  threshold: number | null;
  hysteresis: number;
  hold_ms: number;
  clear_hold_ms: number;
  no_data_ms: number | null;
  severity: Severity;
  notify: string;
  mail_interval_ms: number;
  enabled: number;
  created_by: number | null;
  created_at: number;
  updated_at: number;
}

export type RuleFields = Omit<RuleRow, 'id' | 'created_at' | 'updated_at' | 'created_by'>;

export interface StateRow {
  rule_id: number;
  device_id: number;
  phase: Phase;
  since: number | null;
  since_value: number | null;
  last_at: number | null;
  last_value: number | null;
  alarm_id: number | null;
  mailed_at: number | null;
}

export interface AlarmRow {
  id: number;
  rule_id: number | null;
  rule_name: string;
  role_id: number;
  device_id: number;
  kind: RuleKind;
  severity: Severity;
  series: string;
  value: number | null;
  start_at: number;
  raised_at: number;
  ack_at: number | null;
  ack_by: number | null;
  ack_by_email: string | null;
  clear_at: number | null;
  cleared_by: number | null;
  cleared_by_email: string | null;
  end_at: number | null;
}

// ---------------------------------------------------------------- rules

export async function insertRule(tx: Db, f: RuleFields, by: number, at: number): Promise<number> {
  const row = await tx.get(sql<{ id: number }>`INSERT INTO alarm_rules (role_id, name, device_ids, node_type, namespace, namespace_key, measurement,
      field, kind, threshold, hysteresis, hold_ms, clear_hold_ms, no_data_ms, severity, notify, mail_interval_ms, enabled, created_by, created_at, updated_at)
    VALUES (${f.role_id}, ${f.name}, ${f.device_ids}, ${f.node_type}, ${f.namespace}, ${f.namespace_key}, ${f.measurement}, ${f.field}, ${f.kind},
      ${f.threshold}, ${f.hysteresis}, ${f.hold_ms}, ${f.clear_hold_ms}, ${f.no_data_ms}, ${f.severity}, ${f.notify}, ${f.mail_interval_ms},
      ${f.enabled}, ${by}, ${at}, ${at})
    RETURNING id`);
  return row!.id;
}

export async function updateRule(tx: Db, id: number, f: RuleFields, at: number): Promise<void> {
  await tx.run(sql`UPDATE alarm_rules SET name = ${f.name}, device_ids = ${f.device_ids}, node_type = ${f.node_type}, namespace = ${f.namespace},
      namespace_key = ${f.namespace_key}, measurement = ${f.measurement}, field = ${f.field}, kind = ${f.kind}, threshold = ${f.threshold},
      hysteresis = ${f.hysteresis}, hold_ms = ${f.hold_ms}, clear_hold_ms = ${f.clear_hold_ms}, no_data_ms = ${f.no_data_ms},
      severity = ${f.severity}, notify = ${f.notify}, mail_interval_ms = ${f.mail_interval_ms}, enabled = ${f.enabled},
      updated_at = CASE WHEN updated_at >= ${at} THEN updated_at + 1 ELSE ${at} END
    WHERE id = ${id}`);
}

export async function deleteRule(tx: Db, id: number): Promise<void> {
  await tx.run(sql`DELETE FROM alarm_rules WHERE id = ${id}`);
}

/** Forget where a changed rule stood: its next points are judged afresh (its open alarm, if any, was cleared). */
export async function resetStates(tx: Db, ruleId: number): Promise<void> {
  await tx.run(sql`DELETE FROM alarm_states WHERE rule_id = ${ruleId}`);
}

export async function findRule(db: Db, id: number): Promise<RuleRow | undefined> {
  return db.get(sql<RuleRow>`SELECT * FROM alarm_rules WHERE id = ${id}`);
}

export async function rulesOfRoles(db: Db, roleIds: readonly number[]): Promise<RuleRow[]> {
  if (roleIds.length === 0) return [];
  return db.all(sql<RuleRow>`SELECT * FROM alarm_rules WHERE role_id ${inValues(roleIds)} ORDER BY id`);
}

export async function enabledRules(db: Db): Promise<RuleRow[]> {
  return db.all(sql<RuleRow>`SELECT * FROM alarm_rules WHERE enabled = 1 ORDER BY id`);
}

/**
 * What the in-memory rule index depends on, as one text: the rules, the rights (what a role may read) and the devices
 * (their nodeId and nodeType). Any node sees a change made on another by this text changing.
 */
export async function indexVersion(db: Db): Promise<string> {
  const row = await db.get(sql<{ n: number; u: number | null; r: number | string; d: number | null; c: number }>`SELECT
    (SELECT count(*) FROM alarm_rules) AS n, (SELECT max(updated_at) FROM alarm_rules) AS u,
    (SELECT version FROM rights_version) AS r, (SELECT max(last_update) FROM devices) AS d, (SELECT count(*) FROM devices) AS c`);
  return `${row!.n}/${row!.u}/${row!.r}/${row!.d}/${row!.c}`;
}

// ---------------------------------------------------------------- catalogue and devices

/** The stored type of a field of a measurement in a namespace (float, integer, unsigned, string, boolean), or undefined. */
export async function fieldType(db: Db, namespaceKey: string, measurement: string, field: string): Promise<string | undefined> {
  const row = await db.get(sql<{ type: string }>`SELECT f.type FROM telemetry_fields f JOIN telemetry_namespaces n ON n.id = f.namespace_id
    WHERE n.key = ${namespaceKey} AND f.measurement = ${measurement} AND f.field = ${field}`);
  return row?.type;
}

/** Among `nodeIds`, those with at least one series of the measurement in the namespace. */
export async function nodeIdsWithSeries(db: Db, namespaceKey: string, measurement: string, nodeIds: readonly string[]): Promise<Set<string>> {
  if (nodeIds.length === 0) return new Set();
  const rows = await db.all(sql<{ node_id: string }>`SELECT DISTINCT s.node_id FROM telemetry_series s JOIN telemetry_namespaces n ON n.id = s.namespace_id
    WHERE n.key = ${namespaceKey} AND s.measurement = ${measurement} AND s.node_id ${inValues(nodeIds)}`);
  return new Set(rows.map((r) => r.node_id));
}

export interface DeviceNode { id: number; node_id: string | null; node_type: string | null }

export async function deviceNodes(db: Db, ids: readonly number[]): Promise<DeviceNode[]> {
  if (ids.length === 0) return [];
  const rows = await db.all(sql<{ id: number; node_id: unknown; node_type: unknown }>`SELECT id, node_id, node_type FROM devices WHERE id ${inValues(ids)} ORDER BY id`);
  // SQLite's generated columns keep the JSON type: a nodeId written as a number is a number here
  return rows.map((r) => ({ id: r.id, node_id: r.node_id === null ? null : String(r.node_id), node_type: r.node_type === null ? null : String(r.node_type) }));
}

export async function usersByEmail(db: Db, emails: readonly string[]): Promise<Map<string, number>> {
  if (emails.length === 0) return new Map();
  const rows = await db.all(sql<{ id: number; email: string }>`SELECT id, email FROM users WHERE lower(email) ${inValues(emails.map((e) => e.toLowerCase()))}`);
  return new Map(rows.map((r) => [r.email.toLowerCase(), r.id]));
}

export async function emailsOf(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.all(sql<{ id: number; email: string }>`SELECT id, email FROM users WHERE id ${inValues(ids)}`);
  return new Map(rows.map((r) => [r.id, r.email]));
}

// ---------------------------------------------------------------- evaluation state

/** Serializes the evaluation of one rule shard across nodes (PostgreSQL), until the transaction ends. */
const SHARD_LOCK = 0x676b616c; // 'gkal'
export async function lockShard(tx: Db, shard: number): Promise<void> {
  if (tx.backend === 'postgres') await tx.get(sql`SELECT pg_advisory_xact_lock(${SHARD_LOCK}, ${shard})`);
}

/** Like lockShard, but false at once when another node holds the shard (the no-data timer then leaves it to that node). */
export async function tryLockShard(tx: Db, shard: number): Promise<boolean> {
  if (tx.backend !== 'postgres') return true;
  const row = await tx.get(sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${SHARD_LOCK}, ${shard}) AS ok`);
  return row?.ok === true;
}

/** The states of the given (rule, device) pairs that exist. */
export async function statesOf(tx: Db, pairs: readonly (readonly [number, number])[]): Promise<StateRow[]> {
  if (pairs.length === 0) return [];
  const rules = [...new Set(pairs.map((p) => p[0]))];
  const devices = [...new Set(pairs.map((p) => p[1]))];
  const wanted = new Set(pairs.map(([r, d]) => `${r}:${d}`));
  const rows = await tx.all(sql<StateRow>`SELECT * FROM alarm_states WHERE rule_id ${inValues(rules)} AND device_id ${inValues(devices)}`);
  return rows.filter((r) => wanted.has(`${r.rule_id}:${r.device_id}`));
}

/** The pairs holding a breach or a recovery (the timer ends their holds). */
export async function heldStates(db: Db): Promise<StateRow[]> {
  return db.all(sql<StateRow>`SELECT * FROM alarm_states WHERE phase IN ('pending', 'clearing')`);
}

export async function stateOf(tx: Db, ruleId: number, deviceId: number): Promise<StateRow | undefined> {
  return tx.get(sql<StateRow>`SELECT * FROM alarm_states WHERE rule_id = ${ruleId} AND device_id = ${deviceId}`);
}

export async function saveState(tx: Db, s: StateRow): Promise<void> {
  await tx.run(sql`INSERT INTO alarm_states (rule_id, device_id, phase, since, since_value, last_at, last_value, alarm_id, mailed_at)
    VALUES (${s.rule_id}, ${s.device_id}, ${s.phase}, ${s.since}, ${s.since_value}, ${s.last_at}, ${s.last_value}, ${s.alarm_id}, ${s.mailed_at})
    ON CONFLICT (rule_id, device_id) DO UPDATE SET phase = excluded.phase, since = excluded.since, since_value = excluded.since_value,
      last_at = excluded.last_at, last_value = excluded.last_value, alarm_id = excluded.alarm_id, mailed_at = excluded.mailed_at`);
}

/**
 * Moves the newest judged point of (rule, device) pairs forward, never back (a state's phase is left as it is; a pair
 * without a state gets a normal one).
 */
export async function advanceLastPoints(tx: Db, rows: readonly { ruleId: number; deviceId: number; lastAt: number; lastValue: number | null }[]): Promise<void> {
  // a statement per chunk of rows, not per row: a node writes thousands every few seconds
  const sorted = [...rows].sort((x, y) => x.ruleId - y.ruleId || x.deviceId - y.deviceId);
  for (let i = 0; i < sorted.length; i += ADVANCE_CHUNK) {
    const chunk = sorted.slice(i, i + ADVANCE_CHUNK);
    const source = tx.backend === 'postgres'
      ? sql`SELECT r, d, 'normal', a, v FROM unnest(${chunk.map((r) => r.ruleId)}::bigint[], ${chunk.map((r) => r.deviceId)}::bigint[],
          ${chunk.map((r) => r.lastAt)}::bigint[], ${chunk.map((r) => finite(r.lastValue))}::float8[]) AS t (r, d, a, v)`
      : sql`SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), 'normal', json_extract(value, '$[2]'), json_extract(value, '$[3]')
          FROM json_each(${JSON.stringify(chunk.map((r) => [r.ruleId, r.deviceId, r.lastAt, finite(r.lastValue)]))}) WHERE true`;
    await tx.run(sql`INSERT INTO alarm_states (rule_id, device_id, phase, last_at, last_value) ${source}
      ON CONFLICT (rule_id, device_id) DO UPDATE SET last_at = excluded.last_at, last_value = excluded.last_value
      WHERE alarm_states.last_at IS NULL OR alarm_states.last_at < excluded.last_at`);
  }
}
const ADVANCE_CHUNK = 1000;
/** a value JSON and a float8 array both carry (no infinities or NaN: those are stored as none) */
const finite = (v: number | null): number | null => (v !== null && Number.isFinite(v) ? v : null);

// ---------------------------------------------------------------- alarms

/** `column`, or `at` when that is later: a recorded time never runs back behind the one it follows (see insertAlarm). */
const notBefore = (column: RawBuilder<unknown>, at: number) => sql`CASE WHEN ${column} > ${at} THEN ${column} ELSE ${at} END`;

/**
 * Inserts an alarm. Its raised time is never before the clear time of the pair's previous alarm: a node that read its
 * clock before it waited for the shard's lock, or whose clock is behind another node's, still records a history in
 * which a rule's alarms on a device follow each other.
 */
export async function insertAlarm(tx: Db, a: Omit<AlarmRow, 'id' | 'ack_at' | 'ack_by' | 'ack_by_email' | 'clear_at' | 'cleared_by' | 'cleared_by_email' | 'end_at'>): Promise<number> {
  const raisedAt = sql`(SELECT ${notBefore(sql`max(clear_at)`, a.raised_at)} FROM alarms WHERE rule_id = ${a.rule_id} AND device_id = ${a.device_id})`;
  const row = await tx.get(sql<{ id: number }>`INSERT INTO alarms (rule_id, rule_name, role_id, device_id, kind, severity, series, value, start_at, raised_at)
    VALUES (${a.rule_id}, ${a.rule_name}, ${a.role_id}, ${a.device_id}, ${a.kind}, ${a.severity}, ${a.series}, ${a.value}, ${a.start_at}, ${raisedAt})
    RETURNING id`);
  return row!.id;
}

export async function findAlarm(db: Db, id: number): Promise<AlarmRow | undefined> {
  return db.get(sql<AlarmRow>`SELECT * FROM alarms WHERE id = ${id}`);
}

/** The active alarm of a rule on a device, if any. */
export async function activeAlarm(tx: Db, ruleId: number, deviceId: number): Promise<AlarmRow | undefined> {
  return tx.get(sql<AlarmRow>`SELECT * FROM alarms WHERE rule_id = ${ruleId} AND device_id = ${deviceId} AND clear_at IS NULL`);
}

export async function activeAlarmsOfRule(tx: Db, ruleId: number): Promise<AlarmRow[]> {
  return tx.all(sql<AlarmRow>`SELECT * FROM alarms WHERE rule_id = ${ruleId} AND clear_at IS NULL ORDER BY id`);
}

/** Acknowledges an unacknowledged alarm; false when it already was. Never recorded before it was raised (see insertAlarm). */
export async function acknowledge(tx: Db, id: number, at: number, userId: number, email: string): Promise<boolean> {
  const r = await tx.run(sql`UPDATE alarms SET ack_at = ${notBefore(sql`raised_at`, at)}, ack_by = ${userId}, ack_by_email = ${email} WHERE id = ${id} AND ack_at IS NULL`);
  return r.changes > 0;
}

/**
 * Clears an active alarm (by a user, or by its rule when `userId` is null); false when it was not active. The clear
 * time is never before the raised time (see insertAlarm).
 */
export async function clearAlarm(tx: Db, id: number, at: number, endAt: number, userId: number | null, email: string | null): Promise<boolean> {
  const r = await tx.run(sql`UPDATE alarms SET clear_at = ${notBefore(sql`raised_at`, at)}, end_at = ${endAt}, cleared_by = ${userId}, cleared_by_email = ${email}
    WHERE id = ${id} AND clear_at IS NULL`);
  return r.changes > 0;
}

export interface AlarmPage {
  filter: {
    id?: number[]; deviceId?: number[]; roleId?: number[]; ruleId?: number[]; severity?: string[];
    state?: string[]; from?: number; to?: number;
  };
  /** the devices the caller may read; undefined: every device (root) */
  deviceIds: readonly number[] | undefined;
  limit: number;
  beforeId?: number;
}

const STATE_SQL: Record<string, ReturnType<typeof sql>> = {
  active_unack: sql`(clear_at IS NULL AND ack_at IS NULL)`,
  active_ack: sql`(clear_at IS NULL AND ack_at IS NOT NULL)`,
  cleared_unack: sql`(clear_at IS NOT NULL AND ack_at IS NULL)`,
  cleared_ack: sql`(clear_at IS NOT NULL AND ack_at IS NOT NULL)`,
};

/** Alarms newest first, matching every filter; an alarm is in [from, to) when its start is before `to` and it had not ended by `from`. */
export async function alarmsPage(db: Db, p: AlarmPage): Promise<AlarmRow[]> {
  const f = p.filter;
  const where = [sql`1 = 1`];
  if (p.deviceIds !== undefined) where.push(sql`device_id ${inValues(p.deviceIds)}`);
  if (f.id) where.push(sql`id ${inValues(f.id)}`);
  if (f.deviceId) where.push(sql`device_id ${inValues(f.deviceId)}`);
  if (f.roleId) where.push(sql`role_id ${inValues(f.roleId)}`);
  if (f.ruleId) where.push(sql`rule_id ${inValues(f.ruleId)}`);
  if (f.severity) where.push(sql`severity ${inValues(f.severity)}`);
  if (f.state) where.push(f.state.length === 0 ? sql`1 = 0` : sql`(${sql.join(f.state.map((s) => STATE_SQL[s]), sql` OR `)})`);
  if (f.to !== undefined) where.push(sql`start_at < ${f.to}`);
  if (f.from !== undefined) where.push(sql`(end_at IS NULL OR end_at >= ${f.from})`);
  if (p.beforeId !== undefined) where.push(sql`id < ${p.beforeId}`);
  return db.all(sql<AlarmRow>`SELECT * FROM alarms WHERE ${sql.join(where, sql` AND `)} ORDER BY id DESC LIMIT ${p.limit}`);
}
