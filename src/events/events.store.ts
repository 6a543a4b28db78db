// All SQL of events: the outbox (events and their fan-out), subscriptions, the claim of due deliveries, their
// outcomes and attempts, the delivery log, replays, retention and the figures of /metrics.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { inValues } from '../db/in-list.ts';
import type { Audience } from './event-types.ts';
import { filtersSelecting, minimalFilters } from './event-types.ts';

export interface EventRow {
  id: number;
  uid: string;
  type: string;
  at: number;
  subject_kind: string;
  subject_id: string | null;
  audience: Audience;
  role_id: number | null;
  device_id: number | null;
  data: string;
}

export interface SubscriptionRow {
  id: number;
  role_id: number;
  kind: 'webhook' | 'mqtt';
  name: string;
  url: string | null;
  topic_prefix: string | null;
  types: string;
  secret: string | null;
  previous_secret: string | null;
  previous_until: number | null;
  enabled: number;
  disabled_at: number | null;
  disabled_reason: string | null;
  failing_since: number | null;
  failures: number;
  created_at: number;
  updated_at: number;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'skipped';

export interface DeliveryRow {
  id: number;
  subscription_id: number;
  event_id: number;
  state: DeliveryState;
  attempts: number;
  next_at: number;
  created_at: number;
  done_at: number | null;
  last_status: number | null;
  last_error: string | null;
  event_uid: string;
  event_type: string;
  event_at: number;
}

export interface AttemptRow {
  id: number;
  delivery_id: number;
  at: number;
  duration_ms: number;
  status: number | null;
  error: string | null;
  response: string | null;
}

// ---------------------------------------------------------------- the outbox

export async function insertEvent(tx: Db, e: {
  uid: string; type: string; at: number; subject: string; subjectId: string | null; audience: Audience;
  roleId: number | null; deviceId: number | null; data: string;
}): Promise<number> {
  const row = await tx.get(sql<{ id: number }>`INSERT INTO events (uid, type, at, subject_kind, subject_id, audience, role_id, device_id, data)
    VALUES (${e.uid}, ${e.type}, ${e.at}, ${e.subject}, ${e.subjectId}, ${e.audience}, ${e.roleId}, ${e.deviceId}, ${e.data}) RETURNING id`);
  return row!.id;
}

/** A pending delivery of the event for every enabled subscription whose filter selects its type (or for `only`). */
export async function fanOut(tx: Db, eventId: number, type: string, now: number, only?: number): Promise<void> {
  if (only !== undefined) {
    await tx.run(sql`INSERT INTO event_deliveries (subscription_id, event_id, state, next_at, created_at) VALUES (${only}, ${eventId}, 'pending', ${now}, ${now})`);
    return;
  }
  // a subscription's filter entries never overlap (setTypes keeps the minimal ones), so each matches once: no DISTINCT;
  // the candidates are bound one by one (2 to 4 of them), which plans as a few primary-key lookups
  await tx.run(sql`INSERT INTO event_deliveries (subscription_id, event_id, state, next_at, created_at)
    SELECT t.subscription_id, CAST(${eventId} AS BIGINT), 'pending', CAST(${now} AS BIGINT), CAST(${now} AS BIGINT)
    FROM event_subscription_types t JOIN event_subscriptions s ON s.id = t.subscription_id
    WHERE t.type IN (${sql.join(filtersSelecting(type))}) AND s.enabled = 1`);
}

export async function eventsAfter(db: Db, afterId: number, limit: number): Promise<EventRow[]> {
  return db.all(sql<EventRow>`SELECT * FROM events WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`);
}

// ---------------------------------------------------------------- subscriptions

export type SubscriptionInsert = Omit<SubscriptionRow, 'id' | 'disabled_at' | 'disabled_reason' | 'failing_since' | 'failures' | 'previous_secret' | 'previous_until'>;

export async function insertSubscription(tx: Db, row: SubscriptionInsert, types: readonly string[]): Promise<number> {
  const made = await tx.get(sql<{ id: number }>`INSERT INTO event_subscriptions (role_id, kind, name, url, topic_prefix, types, secret, enabled, created_at, updated_at)
    VALUES (${row.role_id}, ${row.kind}, ${row.name}, ${row.url}, ${row.topic_prefix}, ${row.types}, ${row.secret}, ${row.enabled}, ${row.created_at}, ${row.updated_at})
    RETURNING id`);
  await setTypes(tx, made!.id, types);
  return made!.id;
}

async function setTypes(tx: Db, id: number, types: readonly string[]): Promise<void> {
  await tx.run(sql`DELETE FROM event_subscription_types WHERE subscription_id = ${id}`);
  for (const type of minimalFilters(types)) await tx.run(sql`INSERT INTO event_subscription_types (type, subscription_id) VALUES (${type}, ${id})`);
}

export interface SubscriptionChange {
  name: string;
  url: string | null;
  topic_prefix: string | null;
  types: readonly string[];
  enabled: boolean;
}

/** Changes what the owner sets; enabling again clears the reason it was disabled and the run of failures. */
export async function updateSubscription(tx: Db, id: number, change: SubscriptionChange, now: number): Promise<void> {
  await tx.run(sql`UPDATE event_subscriptions SET name = ${change.name}, url = ${change.url}, topic_prefix = ${change.topic_prefix},
    types = ${JSON.stringify(change.types)}, updated_at = ${now},
    disabled_at = CASE WHEN ${change.enabled ? 1 : 0} = 1 THEN NULL WHEN enabled = 1 THEN ${now} ELSE disabled_at END,
    disabled_reason = CASE WHEN ${change.enabled ? 1 : 0} = 1 THEN NULL WHEN enabled = 1 THEN 'disabled by its owner' ELSE disabled_reason END,
    failures = CASE WHEN ${change.enabled ? 1 : 0} = 1 AND enabled = 0 THEN 0 ELSE failures END,
    failing_since = CASE WHEN ${change.enabled ? 1 : 0} = 1 AND enabled = 0 THEN NULL ELSE failing_since END,
    enabled = ${change.enabled ? 1 : 0}
    WHERE id = ${id}`);
  await setTypes(tx, id, change.types);
}

/** A new secret; the one it replaces keeps signing beside it until `previousUntil`. */
export async function rotateSecret(tx: Db, id: number, sealed: string, previousSealed: string | null, previousUntil: number, now: number): Promise<void> {
  await tx.run(sql`UPDATE event_subscriptions SET secret = ${sealed}, previous_secret = ${previousSealed}, previous_until = ${previousUntil}, updated_at = ${now}
    WHERE id = ${id}`);
}

export async function deleteSubscription(tx: Db, id: number): Promise<boolean> {
  return (await tx.run(sql`DELETE FROM event_subscriptions WHERE id = ${id}`)).changes > 0;
}

export async function findSubscription(db: Db, id: number): Promise<SubscriptionRow | undefined> {
  return db.get(sql<SubscriptionRow>`SELECT * FROM event_subscriptions WHERE id = ${id}`);
}

export async function subscriptionsOfRoles(db: Db, roleIds: readonly number[], kind: SubscriptionRow['kind']): Promise<SubscriptionRow[]> {
  return db.all(sql<SubscriptionRow>`SELECT * FROM event_subscriptions WHERE role_id ${inValues(roleIds)} AND kind = ${kind} ORDER BY id`);
}

/** Enabled subscriptions with a delivery due, as a claim and the sends after it need them. */
export async function subscriptionsWithDue(db: Db, now: number): Promise<SubscriptionRow[]> {
  return db.all(sql<SubscriptionRow>`SELECT s.* FROM event_subscriptions s
    WHERE s.enabled = 1 AND EXISTS (SELECT 1 FROM event_deliveries d WHERE d.subscription_id = s.id AND d.state = 'pending' AND d.next_at <= ${now})
    ORDER BY s.id`);
}

// ---------------------------------------------------------------- claims and outcomes

/** A claimed delivery: its row's id, the attempts made so far, and its event. */
export interface Claimed {
  id: number;
  attempts: number;
  event_id: number;
}

/**
 * Takes up to `limit` due deliveries of one subscription in one statement: their next_at moves to `leaseUntil` and
 * `lease` marks them as this claim's, so no other node takes them meanwhile (PostgreSQL: rows another node is claiming
 * are skipped, not waited for). A claim that is never settled (the node died) is due again when its lease ends.
 */
export async function claimDue(tx: Db, subscriptionId: number, now: number, limit: number, leaseUntil: number, lease: string): Promise<Claimed[]> {
  const lock = tx.backend === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  const rows = await tx.all(sql<Claimed>`UPDATE event_deliveries SET next_at = ${leaseUntil}, lease = ${lease}
    WHERE id IN (SELECT id FROM event_deliveries WHERE subscription_id = ${subscriptionId} AND state = 'pending' AND next_at <= ${now}
      ORDER BY next_at, id LIMIT ${limit} ${lock})
    RETURNING id, attempts, event_id`);
  // RETURNING gives no order
  return rows.sort((a, b) => a.id - b.id);
}

/** The events of claimed deliveries, by id. */
export async function eventsByIds(db: Db, ids: readonly number[]): Promise<Map<number, EventRow>> {
  if (ids.length === 0) return new Map();
  return new Map((await db.all(sql<EventRow>`SELECT * FROM events WHERE id ${inValues(ids)}`)).map((e) => [e.id, e]));
}

/** What became of one claimed delivery. */
export interface Outcome {
  deliveryId: number;
  subscriptionId: number;
  lease: string;
  state: DeliveryState;
  /** pending: when to try again */
  nextAt?: number;
  /** an attempt was made (skipped deliveries make none) */
  attempt?: { at: number; durationMs: number; status: number | null; error: string | null; response: string | null };
  /** the subscription's bookkeeping: success resets its failures, failure counts one, disable stops it */
  subscription: 'success' | 'failure' | 'none';
  disable?: string;
  error?: string;
}

/** Rows of one multi-row INSERT of attempts: 6 parameters each, well below either backend's limit. */
const ATTEMPT_ROWS = 500;

/**
 * Records the outcomes of claims, a batch at a time: deliveries that end alike (state, next attempt, status, error)
 * are settled by one UPDATE, the attempts of those settled go in by multi-row INSERTs, and each subscription's run of
 * failures is updated once. An outcome whose lease was taken over meanwhile (this node was too slow) changes nothing.
 */
export async function recordOutcomes(tx: Db, outcomes: readonly Outcome[], now: number): Promise<void> {
  const skipped = new Map<string, number[]>();
  const groups = new Map<string, Outcome[]>();
  for (const o of outcomes) {
    if (o.state === 'skipped') {
      skipped.set(o.lease, [...(skipped.get(o.lease) ?? []), o.deliveryId]);
      continue;
    }
    const key = JSON.stringify([o.lease, o.state, o.nextAt ?? null, o.attempt !== undefined, o.attempt?.status ?? null, o.error ?? null]);
    const group = groups.get(key);
    if (group) group.push(o);
    else groups.set(key, [o]);
  }
  // an event the role may not read leaves no trace in its subscription's log
  for (const [lease, ids] of skipped) await tx.run(sql`DELETE FROM event_deliveries WHERE id ${inValues(ids)} AND lease = ${lease}`);
  const settled = new Set<number>();
  for (const group of groups.values()) {
    const o = group[0];
    const rows = await tx.all(sql<{ id: number }>`UPDATE event_deliveries SET state = ${o.state}, attempts = attempts + ${o.attempt !== undefined ? 1 : 0},
      next_at = ${o.nextAt ?? now}, lease = NULL, done_at = ${o.state === 'pending' ? null : now},
      last_status = ${o.attempt?.status ?? null}, last_error = ${o.error ?? null}
      WHERE id ${inValues(group.map((g) => g.deliveryId))} AND lease = ${o.lease}
      RETURNING id`);
    for (const r of rows) settled.add(Number(r.id));
  }
  const done = outcomes.filter((o) => o.state !== 'skipped' && settled.has(o.deliveryId));
  const attempted = done.filter((o) => o.attempt !== undefined);
  for (let i = 0; i < attempted.length; i += ATTEMPT_ROWS) {
    const values = attempted.slice(i, i + ATTEMPT_ROWS).map(({ deliveryId, attempt: a }) =>
      sql`(${deliveryId}, ${a!.at}, ${a!.durationMs}, ${a!.status}, ${a!.error}, ${a!.response})`);
    await tx.run(sql`INSERT INTO event_attempts (delivery_id, at, duration_ms, status, error, response) VALUES ${sql.join(values)}`);
  }
  for (const [subscriptionId, run] of failureRuns(done, now)) {
    if (run.reset && run.since === null) {
      await tx.run(sql`UPDATE event_subscriptions SET failures = 0, failing_since = NULL WHERE id = ${subscriptionId} AND (failures > 0 OR failing_since IS NOT NULL)`);
    } else if (run.reset) {
      await tx.run(sql`UPDATE event_subscriptions SET failures = ${run.failures}, failing_since = ${run.since} WHERE id = ${subscriptionId}`);
    } else {
      await tx.run(sql`UPDATE event_subscriptions SET failures = failures + ${run.failures}, failing_since = COALESCE(failing_since, ${run.since})
        WHERE id = ${subscriptionId}`);
    }
  }
  for (const o of done) if (o.disable !== undefined) await disableSubscription(tx, o.subscriptionId, o.disable, now);
}

/**
 * Each subscription's run of failures after a batch of outcomes, in their order: a success resets the run (`reset`:
 * the run is `failures` since `since`), failures after it start a new one; without a success they add to the stored run.
 */
function failureRuns(outcomes: readonly Outcome[], now: number): Map<number, { reset: boolean; failures: number; since: number | null }> {
  const runs = new Map<number, { reset: boolean; failures: number; since: number | null }>();
  for (const o of outcomes) {
    // a success with no run known at its claim ends a run only of this batch
    if (o.subscription === 'none') {
      if (runs.has(o.subscriptionId)) runs.set(o.subscriptionId, { reset: true, failures: 0, since: null });
      continue;
    }
    const run = runs.get(o.subscriptionId) ?? { reset: false, failures: 0, since: null };
    if (o.subscription === 'success') runs.set(o.subscriptionId, { reset: true, failures: 0, since: null });
    else runs.set(o.subscriptionId, { reset: run.reset, failures: run.failures + 1, since: run.since ?? o.attempt?.at ?? now });
  }
  return runs;
}

export async function disableSubscription(tx: Db, id: number, reason: string, now: number): Promise<void> {
  await tx.run(sql`UPDATE event_subscriptions SET enabled = 0, disabled_at = ${now}, disabled_reason = ${reason} WHERE id = ${id} AND enabled = 1`);
}

/** Subscriptions failing without a success since before `since`, with at least `minFailures` failures: to be disabled. */
export async function longFailing(db: Db, since: number, minFailures: number): Promise<SubscriptionRow[]> {
  return db.all(sql<SubscriptionRow>`SELECT * FROM event_subscriptions WHERE enabled = 1 AND failing_since <= ${since} AND failures >= ${minFailures}`);
}

// ---------------------------------------------------------------- the delivery log and replays

const DELIVERY_COLUMNS = sql`d.id, d.subscription_id, d.event_id, d.state, d.attempts, d.next_at, d.created_at, d.done_at, d.last_status, d.last_error,
  e.uid AS event_uid, e.type AS event_type, e.at AS event_at`;

export interface DeliveryFilter {
  state?: readonly DeliveryState[];
  eventId?: string;
}

/** One page of a subscription's deliveries, newest first, below `beforeId`. */
export async function deliveriesPage(db: Db, subscriptionId: number, filter: DeliveryFilter, limit: number, beforeId?: number): Promise<DeliveryRow[]> {
  return db.all(sql<DeliveryRow>`SELECT ${DELIVERY_COLUMNS} FROM event_deliveries d JOIN events e ON e.id = d.event_id
    WHERE d.subscription_id = ${subscriptionId}
    ${beforeId !== undefined ? sql`AND d.id < ${beforeId}` : sql``}
    ${filter.state ? sql`AND d.state ${inValues(filter.state)}` : sql``}
    ${filter.eventId !== undefined ? sql`AND e.uid = ${filter.eventId}` : sql``}
    ORDER BY d.id DESC LIMIT ${limit}`);
}

export async function findDelivery(db: Db, subscriptionId: number, deliveryId: number): Promise<DeliveryRow | undefined> {
  return db.get(sql<DeliveryRow>`SELECT ${DELIVERY_COLUMNS} FROM event_deliveries d JOIN events e ON e.id = d.event_id
    WHERE d.id = ${deliveryId} AND d.subscription_id = ${subscriptionId}`);
}

export async function attemptsOf(db: Db, deliveryId: number): Promise<AttemptRow[]> {
  return db.all(sql<AttemptRow>`SELECT * FROM event_attempts WHERE delivery_id = ${deliveryId} ORDER BY id`);
}

/** The events a replay asks for: the one with `uid`, or those of [from, to) whose type is one of `types`, oldest first. */
export async function eventsToReplay(db: Db, what: { uid: string } | { from: number; to: number; types: readonly string[] }, max: number): Promise<EventRow[]> {
  const picked = 'uid' in what ? sql`uid = ${what.uid}` : sql`at >= ${what.from} AND at < ${what.to} AND type ${inValues(what.types)}`;
  return db.all(sql<EventRow>`SELECT * FROM events WHERE ${picked} ORDER BY id LIMIT ${max}`);
}

/** Queues the events for the subscription again; a delivery of one still pending is made due now instead of doubled. */
export async function queueAgain(tx: Db, subscriptionId: number, eventIds: readonly number[], now: number): Promise<void> {
  if (eventIds.length === 0) return;
  await tx.run(sql`UPDATE event_deliveries SET next_at = ${now} WHERE subscription_id = ${subscriptionId} AND state = 'pending' AND lease IS NULL
    AND event_id ${inValues(eventIds)}`);
  await tx.run(sql`INSERT INTO event_deliveries (subscription_id, event_id, state, next_at, created_at)
    SELECT CAST(${subscriptionId} AS BIGINT), e.id, 'pending', CAST(${now} AS BIGINT), CAST(${now} AS BIGINT) FROM events e WHERE e.id ${inValues(eventIds)}
    AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.subscription_id = ${subscriptionId} AND d.event_id = e.id AND d.state = 'pending')`);
}

// ---------------------------------------------------------------- retention and figures

/**
 * Deletes up to `max` of the oldest events older than `cutoff` that no delivery waits for (their deliveries and
 * attempts go with them); returns how many went.
 */
export async function pruneEvents(tx: Db, cutoff: number, max: number): Promise<number> {
  return (await tx.run(sql`DELETE FROM events WHERE id IN (SELECT e.id FROM events e WHERE e.at < ${cutoff}
    AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.state = 'pending') ORDER BY e.at LIMIT ${max})`)).changes;
}

export interface OutboxFigures {
  pending: number;
  /** created_at of the oldest pending delivery (Unix ms), or null */
  oldest: number | null;
}

export async function outboxFigures(db: Db): Promise<OutboxFigures> {
  const row = await db.get(sql<{ pending: number; oldest: number | null }>`SELECT count(*) AS pending, min(created_at) AS oldest
    FROM event_deliveries WHERE state = 'pending'`);
  return { pending: Number(row?.pending ?? 0), oldest: row?.oldest ?? null };
}

/** The installation's id: drawn by the first node that asks and kept in settings, so every node names it alike. */
export async function installationId(db: Db, drawn: string): Promise<string> {
  await db.run(sql`INSERT INTO settings (key, value) VALUES ('installation', ${drawn}) ON CONFLICT (key) DO NOTHING`);
  return (await db.get(sql<{ value: string }>`SELECT value FROM settings WHERE key = 'installation'`))!.value;
}

/**
 * Makes every claimed delivery due now. Only for a database that one process serves (SQLite at start): every lease in
 * it belongs to a process that is gone.
 */
export async function releaseLeases(db: Db, now: number): Promise<number> {
  return (await db.run(sql`UPDATE event_deliveries SET next_at = ${now}, lease = NULL WHERE lease IS NOT NULL AND state = 'pending'`)).changes;
}
