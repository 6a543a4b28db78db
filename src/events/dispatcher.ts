// The delivery worker of one node. It claims due deliveries from the outbox in batches (a lease: no other node takes
// them while they run, another node takes them over should this one die), sends them — at most PER_SUBSCRIPTION at a
// time to one subscription and MAX_IN_FLIGHT in all, with at most MAX_HELD claimed, so a slow or failing receiver
// holds a few slots and bounded memory — and records the outcomes and attempts of a batch together. The per-batch
// work (claim, events, the role's rights, the record) is paid once for many deliveries; what stays per delivery is the
// payload, the signature and the request. Events wait in the tables: a restart, or another node, delivers what is
// left. Units of work that wrote events wake it (outbox.ts); it also looks every POLL_MS.
import { randomBytes, type KeyObject } from 'node:crypto';
import { ping } from '../db/operations.ts';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/open.ts';
import type { EventService } from '../context/deps.ts';
import type { Logger } from '../lib/logger.ts';
import type { SecretBox } from '../lib/secret-box.ts';
import { subscriberRights } from '../access/subscribers.ts';
import {
  claimDue, disableSubscription, eventsByIds, longFailing, outboxFigures, pruneEvents, recordOutcomes, subscriptionsWithDue,
  type Claimed, type EventRow, type Outcome, type SubscriptionRow,
} from './events.store.ts';
import { envelopeBody, subjectId, subjectsOf } from './payload.ts';
import { nextAttemptAt, retryAfterMs } from './retry.ts';
import { openSubscriptionSecret } from './secrets.ts';
import { signingKey, signWith } from './signing.ts';
import { postWebhook, WEBHOOK_TIMEOUT_MS, type AttemptResult } from './webhook-sender.ts';

export const PER_SUBSCRIPTION = 8;
export const MAX_IN_FLIGHT = 64;
/** deliveries a healthy subscription claims at once (sent PER_SUBSCRIPTION at a time) */
export const CLAIM_BATCH = 64;
/** claimed deliveries a node holds in all, queued or running: what bounds its memory */
const MAX_HELD = 256;
/** outcomes recorded together at the latest this long after the first of them, or once FLUSH_AT have gathered */
const FLUSH_DELAY_MS = 10;
const FLUSH_AT = 64;
/** the shortest time between two claims of the running worker (real time) */
const LINGER_MS = 10;
/**
 * the same while a stream of new events is busy (after the last claim, not a full one, this node held BUSY_CLAIM or
 * more deliveries): claims, event reads and records are paid per batch, so a busy stream is claimed in larger batches;
 * a quiet one, and a backlog, keep the short wait
 */
const BUSY_LINGER_MS = 50;
const BUSY_CLAIM = 4;
/** a claim's lease: longer than an attempt may take (15 s) */
export const LEASE_MS = 60_000;
const POLL_MS = 1_000;
const MAINTAIN_EVERY_MS = 60_000;
/** a subscription failing without a success for this long, with at least DISABLE_FAILURES failures, is disabled */
export const DISABLE_AFTER_MS = 3 * 24 * 3600_000;
export const DISABLE_FAILURES = 10;
const PRUNE_CHUNK = 1_000;
const STOP_WAIT_MS = 5_000;

/** Sends a payload to an MQTT broker (mqtt-publisher.ts); `connected` false: MQTT subscriptions wait. */
export interface MqttSink {
  connected(): boolean;
  publish(topic: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export interface DispatcherOptions {
  db: Db;
  now: () => number;
  log: Logger;
  secrets: SecretBox;
  installation: string;
  allowInternal: boolean;
  /** delivered events are kept this long (ms); null: kept */
  retentionMs: number | null;
  version: string;
  registry?: Registry;
  mqtt?: MqttSink;
  random?: () => number;
}

/**
 * Bookkeeping of deliveries (claims, outcomes, retention): READ COMMITTED on PostgreSQL, so it never makes a
 * SERIALIZABLE unit of the API run again; on SQLite it joins the API's group commit.
 */
function bookkeeping<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.backend === 'postgres' ? db.tx(fn) : db.write(fn);
}

/** A claimed delivery on its way: the body its subscription's role may see (undefined: none of it), sent in order. */
interface Job {
  id: number;
  attempts: number;
  event: EventRow;
  subscription: SubscriptionRow;
  body: string | undefined;
  lease: string;
  /** not started after this (ms): its lease could end during the attempt, and another node may have taken it */
  startBy: number;
  done: () => void;
}

export function createDispatcher(o: DispatcherOptions): EventService {
  const { db, now, log } = o;
  const random = o.random ?? Math.random;
  /** per subscription: claimed jobs not started yet, and attempts running */
  const queues = new Map<number, Job[]>();
  const inFlight = new Map<number, number>();
  let total = 0;
  let held = 0;
  let running = false;
  let loop: Promise<void> | undefined;
  let signal: () => void = () => {};
  let woken = false;
  let lastMaintain: number | undefined;
  let lastPump = -Infinity;
  let busy = false;
  const outcomes: Outcome[] = [];
  let flushing: Promise<void> | undefined;
  let flushTimer: NodeJS.Timeout | undefined;
  const keys = new SecretCache(o.secrets);
  const counters = metrics(o.registry, db, now);

  function wake(): void {
    woken = true;
    signal();
  }

  /**
   * Claims what is due for each subscription whose queue is empty — a healthy one up to CLAIM_BATCH deliveries at
   * once, one that is failing PER_SUBSCRIPTION — reads their events once and the role's rights once per subscription,
   * and queues them. A subscription still working through its queue is claimed for again when the queue runs empty,
   * so a busy stream is claimed, sent and settled in batches. Returns the claimed jobs' ends.
   */
  async function pump(): Promise<Promise<void>[]> {
    if (held >= MAX_HELD) return [];
    const at = now();
    const lease = randomBytes(12).toString('base64url');
    const subs = (await subscriptionsWithDue(db, at)).filter((s) => (s.kind !== 'mqtt' || o.mqtt?.connected()) && (queues.get(s.id)?.length ?? 0) === 0);
    if (subs.length === 0) return [];
    const claims = await bookkeeping(db, async (tx) => {
      const out: { sub: SubscriptionRow; claimed: Claimed[] }[] = [];
      let room = MAX_HELD - held;
      for (const sub of subs) {
        const want = Math.min(sub.failures > 0 ? PER_SUBSCRIPTION - (inFlight.get(sub.id) ?? 0) : CLAIM_BATCH, room);
        if (want <= 0) continue;
        const claimed = await claimDue(tx, sub.id, at, want, at + LEASE_MS, lease);
        room -= claimed.length;
        if (claimed.length > 0) out.push({ sub, claimed });
      }
      return out;
    });
    if (claims.length === 0) return [];
    const events = await eventsByIds(db, [...new Set(claims.flatMap((c) => c.claimed.map((d) => d.event_id)))]);
    const ends: Promise<void>[] = [];
    for (const { sub, claimed } of claims) {
      const batch = claimed.filter((d) => events.has(d.event_id)).sort((a, b) => a.id - b.id);
      const { deviceIds, licenseIds } = subjectsOf(batch.map((d) => events.get(d.event_id)!));
      const rights = await subscriberRights(db, sub.role_id, deviceIds, licenseIds);
      const queue = queues.get(sub.id) ?? [];
      queues.set(sub.id, queue);
      for (const d of batch) {
        const event = events.get(d.event_id)!;
        held++;
        ends.push(new Promise<void>((done) => queue.push({
          id: d.id, attempts: d.attempts, event, subscription: sub, lease, done,
          body: envelopeBody(event, rights, o.installation), startBy: at + LEASE_MS - WEBHOOK_TIMEOUT_MS,
        })));
      }
      startSends(sub.id);
    }
    return ends;
  }

  /** Starts queued jobs of the subscription while it and the node have free slots. */
  function startSends(subscriptionId: number): void {
    const queue = queues.get(subscriptionId);
    let started = false;
    while (queue !== undefined && queue.length > 0 && (inFlight.get(subscriptionId) ?? 0) < PER_SUBSCRIPTION && total < MAX_IN_FLIGHT) {
      const job = queue.shift()!;
      if (now() > job.startBy) {
        // its lease may end before the attempt does: left to whichever claim comes after the lease
        held--;
        job.done();
        continue;
      }
      inFlight.set(subscriptionId, (inFlight.get(subscriptionId) ?? 0) + 1);
      total++;
      started = true;
      void send(job).then((outcome) => {
        outcomes.push(outcome);
      }, (err: unknown) => {
        log.error('event delivery failed unexpectedly', { deliveryId: job.id, error: err instanceof Error ? err.stack : String(err) });
      }).finally(() => {
        inFlight.set(subscriptionId, inFlight.get(subscriptionId)! - 1);
        total--;
        held--;
        job.done();
        startSends(subscriptionId);
        // a subscription with slots to spare on this node may wait for them
        if (total === MAX_IN_FLIGHT - 1) for (const id of queues.keys()) if (id !== subscriptionId) startSends(id);
        settleSoon();
      });
    }
    if (queue === undefined || queue.length > 0) return;
    if ((inFlight.get(subscriptionId) ?? 0) === 0) queues.delete(subscriptionId);
    // the queue ran empty: claim the next batch while the last attempts of this one run
    if (started) wake();
  }

  /**
   * Outcomes are recorded in batches: at once when nothing is left to send or FLUSH_AT have gathered, else after
   * FLUSH_DELAY_MS. The claim for more follows a batch's record, or the queue running empty.
   */
  function settleSoon(): void {
    const idle = held === 0;
    if (idle || outcomes.length >= FLUSH_AT) {
      clearTimeout(flushTimer);
      flushTimer = undefined;
      void flush();
    } else if (flushTimer === undefined) {
      flushTimer = setTimeout(() => { flushTimer = undefined; void flush(); }, FLUSH_DELAY_MS);
      flushTimer.unref();
    }
  }

  async function send(job: Job): Promise<Outcome> {
    const sub = job.subscription;
    const base = { deliveryId: job.id, subscriptionId: sub.id, lease: job.lease };
    if (job.body === undefined) {
      return { ...base, state: 'skipped', subscription: 'none', error: 'not readable by the subscription\'s role at delivery time' };
    }
    const started = now();
    const clock = performance.now();
    const result = sub.kind === 'mqtt' ? await publishMqtt(sub, job.event, job.body) : await postSigned(sub, job.event.uid, job.body);
    const attempt = { at: started, durationMs: Math.round(performance.now() - clock), status: result.status, error: result.error, response: result.response };
    counters.attempts.inc({ kind: sub.kind });
    // a success ends a run of failures; with none known at the claim, one only of this batch (recordOutcomes)
    if (result.error === null) return { ...base, state: 'delivered', attempt, subscription: sub.failures > 0 ? 'success' : 'none' };
    counters.failures.inc({ kind: sub.kind });
    if (result.status === 410) {
      return { ...base, state: 'failed', attempt, subscription: 'failure', error: result.error, disable: `the endpoint answered 410 Gone at ${new Date(started).toISOString()}` };
    }
    const next = nextAttemptAt(job.attempts + 1, now(), random(), retryAfterMs(result.retryAfter, now()));
    return next === undefined
      ? { ...base, state: 'failed', attempt, subscription: 'failure', error: `${result.error} (attempt ${job.attempts + 1}, the last)` }
      : { ...base, state: 'pending', nextAt: next, attempt, subscription: 'failure', error: result.error };
  }

  async function postSigned(sub: SubscriptionRow, id: string, body: string): Promise<AttemptResult> {
    const at = now();
    const timestamp = Math.floor(at / 1000);
    return postWebhook(sub.url!, {
      'content-type': 'application/json',
      'user-agent': `gridkeeper/${o.version}`,
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWith(keys.of(sub, at), id, timestamp, body),
    }, body, { allowInternal: o.allowInternal });
  }

  async function publishMqtt(sub: SubscriptionRow, event: EventRow, body: string): Promise<AttemptResult> {
    const topic = [sub.topic_prefix ?? 'gridkeeper', o.installation, ...event.type.split('.'), String(subjectId(event.subject_id) ?? '')].join('/');
    if (!o.mqtt) return { status: null, error: 'no MQTT broker is configured (GRIDKEEPER_MQTT_URL)', response: null };
    try {
      await o.mqtt.publish(topic, body);
      return { status: null, error: null, response: topic };
    } catch (err) {
      return { status: null, error: `MQTT: ${err instanceof Error ? err.message : String(err)}`, response: topic };
    }
  }

  /** Records the outcomes gathered so far, one transaction at a time. */
  function flush(): Promise<void> {
    if (flushing !== undefined) return flushing.then(() => (outcomes.length > 0 ? flush() : undefined));
    if (outcomes.length === 0) return Promise.resolve();
    const batch = outcomes.splice(0);
    flushing = bookkeeping(db, (tx) => recordOutcomes(tx, batch, now())).catch((err: unknown) => {
      // unrecorded outcomes are delivered again when their lease ends: at least once, never lost
      log.warn('event delivery outcomes not recorded', { count: batch.length, error: err instanceof Error ? err.message : String(err) });
    }).finally(() => {
      flushing = undefined;
      wake();
    });
    return flushing;
  }

  /** At most once a minute: disable subscriptions failing for days, and drop delivered events past retention. */
  async function maintain(force = false): Promise<void> {
    const at = now();
    if (!force && lastMaintain !== undefined && at - lastMaintain < MAINTAIN_EVERY_MS && at >= lastMaintain) return;
    lastMaintain = at;
    for (const sub of await longFailing(db, at - DISABLE_AFTER_MS, DISABLE_FAILURES)) {
      const reason = `every attempt failed since ${new Date(sub.failing_since!).toISOString()} (${sub.failures} failures)`;
      await bookkeeping(db, (tx) => disableSubscription(tx, sub.id, reason, at));
      log.warn('event subscription disabled', { subscriptionId: sub.id, reason });
    }
    if (o.retentionMs !== null) {
      const cutoff = at - o.retentionMs;
      while ((await bookkeeping(db, (tx) => pruneEvents(tx, cutoff, PRUNE_CHUNK))) === PRUNE_CHUNK && force);
    }
  }

  async function drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      const started = await pump();
      await Promise.all(started);
      await flush();
      if (started.length === 0) break;
      sent += started.length;
    }
    await maintain(true);
    return sent;
  }

  async function run(): Promise<void> {
    while (running) {
      try {
        // a busy stream wakes the worker with every commit: claims come at most every LINGER_MS (BUSY_LINGER_MS while
        // busy), each taking what gathered meanwhile, so claims and records are paid per batch; the first change after
        // a quiet spell goes at once
        const since = performance.now() - lastPump;
        const linger = busy ? BUSY_LINGER_MS : LINGER_MS;
        if (since < linger) await sleep(linger - since);
        lastPump = performance.now();
        // the unit that woke us commits first: on SQLite a statement waits for the open transaction, on PostgreSQL an
        // empty unit joins the next group commit, which begins after the current one committed
        if (woken) await (db.backend === 'postgres' ? db.write(async () => {}) : ping(db));
        woken = false;
        const claimed = (await pump()).length;
        // a full claim is a backlog: the next follows as soon as its queue runs empty
        if (claimed > 0) busy = claimed < CLAIM_BATCH && held >= BUSY_CLAIM;
        else if (held === 0) busy = false;
        await maintain();
      } catch (err) {
        log.warn('event delivery loop', { error: err instanceof Error ? err.message : String(err) });
      }
      if (!running) break;
      if (!woken) await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        timer.unref();
        signal = () => { clearTimeout(timer); resolve(); };
      });
      signal = () => {};
    }
  }

  return {
    installation: o.installation,
    wake,
    drain,
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      signal();
      await loop;
      // queued jobs are not started: their claims end with their lease (on SQLite at the next start)
      for (const queue of queues.values()) for (const job of queue.splice(0)) { held--; job.done(); }
      // deliveries in flight get a few seconds to end; one still running then is sent again after its lease (at least once)
      for (let waited = 0; (total > 0 || flushing !== undefined) && waited < STOP_WAIT_MS; waited += 20) await new Promise((r) => setTimeout(r, 20));
      clearTimeout(flushTimer);
      await flush();
      await o.mqtt?.close();
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Signing keys of opened webhook secrets per subscription, kept while its sealed values stay the same (a rotation
 * changes them).
 */
class SecretCache {
  private readonly opened = new Map<number, { sealed: string; previous: string | null; one: KeyObject[]; both: KeyObject[] | null }>();
  constructor(private readonly box: SecretBox) {}

  /** The keys a delivery is signed with now: the subscription's, and during a rotation the one it replaces. */
  of(sub: SubscriptionRow, at: number): readonly KeyObject[] {
    let entry = this.opened.get(sub.id);
    if (entry === undefined || entry.sealed !== sub.secret || entry.previous !== sub.previous_secret) {
      if (this.opened.size >= 1_000) this.opened.clear();
      const key = signingKey(openSubscriptionSecret(this.box, sub.id, sub.secret!));
      entry = {
        sealed: sub.secret!, previous: sub.previous_secret, one: [key],
        both: sub.previous_secret === null ? null : [key, signingKey(openSubscriptionSecret(this.box, sub.id, sub.previous_secret))],
      };
      this.opened.set(sub.id, entry);
    }
    return entry.both !== null && sub.previous_until !== null && sub.previous_until > at ? entry.both : entry.one;
  }
}

/** /metrics: the outbox read when scraped (shared by every node), attempts and failures of this node. */
function metrics(registry: Registry | undefined, db: Db, now: () => number) {
  const registers = registry ? [registry] : [];
  let figures: Promise<{ pending: number; oldest: number | null } | undefined> | undefined;
  // a database that cannot be reached leaves the two gauges out of the scrape: /metrics itself still answers
  const read = () => (figures ??= outboxFigures(db).catch(() => undefined).finally(() => { setTimeout(() => { figures = undefined; }, 100).unref(); }));
  new Gauge({
    name: 'gridkeeper_events_pending', help: 'Event deliveries waiting in the outbox (all nodes)', registers,
    async collect() { const f = await read(); if (f !== undefined) this.set(f.pending); },
  });
  new Gauge({
    name: 'gridkeeper_events_oldest_pending_age_seconds', help: 'Age of the oldest event delivery waiting in the outbox (0: none)', registers,
    async collect() { const f = await read(); if (f !== undefined) this.set(f.oldest === null ? 0 : Math.max(now() - f.oldest, 0) / 1000); },
  });
  return {
    attempts: new Counter({ name: 'gridkeeper_event_delivery_attempts_total', help: 'Event delivery attempts made by this node', labelNames: ['kind'], registers }),
    failures: new Counter({ name: 'gridkeeper_event_delivery_failures_total', help: 'Event delivery attempts of this node that failed', labelNames: ['kind'], registers }),
  };
}
