// The delivery worker of one node. It claims due deliveries from the outbox (a lease: no other node takes them while
// they run, another node takes them over should this one die), sends them — at most PER_SUBSCRIPTION at a time to one
// subscription and MAX_IN_FLIGHT in all, so a slow or failing receiver holds a few slots and no memory beyond them —
// and records each outcome and attempt. Events wait in the tables, never in memory: a restart, or another node,
// delivers what is left. Units of work that wrote events wake it (outbox.ts); it also looks every POLL_MS.
import { randomBytes } from 'node:crypto';
import { ping } from '../db/operations.ts';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/open.ts';
import type { EventService } from '../context/deps.ts';
import type { Logger } from '../lib/logger.ts';
import type { SecretBox } from '../lib/secret-box.ts';
import { subscriberRights } from '../access/subscribers.ts';
import {
  claimDue, disableSubscription, jobsOf, longFailing, outboxFigures, pruneEvents, recordOutcomes, subscriptionsWithDue,
  type DeliveryJob, type Outcome, type SubscriptionRow,
} from './events.store.ts';
import { envelopeFor, subjectsOf, type Envelope } from './payload.ts';
import { nextAttemptAt, retryAfterMs } from './retry.ts';
import { openSubscriptionSecret } from './secrets.ts';
import { signatureHeader } from './signing.ts';
import { postWebhook, type AttemptResult } from './webhook-sender.ts';

export const PER_SUBSCRIPTION = 8;
export const MAX_IN_FLIGHT = 64;
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

export function createDispatcher(o: DispatcherOptions): EventService {
  const { db, now, log } = o;
  const random = o.random ?? Math.random;
  const inFlight = new Map<number, number>();
  let total = 0;
  let running = false;
  let loop: Promise<void> | undefined;
  let signal: () => void = () => {};
  let woken = false;
  let lastMaintain: number | undefined;
  const outcomes: Outcome[] = [];
  let flushing: Promise<void> | undefined;
  const counters = metrics(o.registry, db, now);

  function wake(): void {
    woken = true;
    signal();
  }

  /** Claims what is due for each subscription with free slots, and starts sending it. Returns the deliveries started. */
  async function pump(): Promise<Promise<void>[]> {
    if (total >= MAX_IN_FLIGHT) return [];
    const at = now();
    const lease = randomBytes(12).toString('base64url');
    const subs = (await subscriptionsWithDue(db, at)).filter((s) => s.kind !== 'mqtt' || o.mqtt?.connected());
    if (subs.length === 0) return [];
    const claimed = await bookkeeping(db, async (tx) => {
      const ids: number[] = [];
      for (const s of subs) {
        const free = Math.min(PER_SUBSCRIPTION - (inFlight.get(s.id) ?? 0), MAX_IN_FLIGHT - total - ids.length);
        if (free > 0) ids.push(...await claimDue(tx, s.id, at, free, at + LEASE_MS, lease));
      }
      return ids;
    });
    const jobs = await jobsOf(db, claimed);
    const started: Promise<void>[] = [];
    for (const [subscriptionId, batch] of groupBy(jobs, (j) => j.subscription.id)) {
      const sub = batch[0].subscription;
      const { deviceIds, licenseIds } = subjectsOf(batch.map((j) => j.event));
      const rights = await subscriberRights(db, sub.role_id, deviceIds, licenseIds);
      for (const job of batch) {
        inFlight.set(subscriptionId, (inFlight.get(subscriptionId) ?? 0) + 1);
        total++;
        const envelope = envelopeFor(job.event, rights, o.installation);
        started.push(send(job, envelope, lease).then((outcome) => {
          outcomes.push(outcome);
        }, (err: unknown) => {
          log.error('event delivery failed unexpectedly', { deliveryId: job.id, error: err instanceof Error ? err.stack : String(err) });
        }).finally(() => {
          inFlight.set(subscriptionId, (inFlight.get(subscriptionId) ?? 1) - 1);
          total--;
          void flush();
        }));
      }
    }
    return started;
  }

  async function send(job: DeliveryJob, envelope: Envelope | undefined, lease: string): Promise<Outcome> {
    const base = { deliveryId: job.id, subscriptionId: job.subscription.id, lease };
    if (envelope === undefined) {
      return { ...base, state: 'skipped', subscription: 'none', error: 'not readable by the subscription\'s role at delivery time' };
    }
    const body = JSON.stringify(envelope);
    const started = now();
    const clock = performance.now();
    const result = job.subscription.kind === 'mqtt' ? await publishMqtt(job.subscription, envelope, body) : await postSigned(job.subscription, envelope, body);
    const attempt = { at: started, durationMs: Math.round(performance.now() - clock), status: result.status, error: result.error, response: result.response };
    counters.attempts.inc({ kind: job.subscription.kind });
    // a success resets a run of failures; with none to reset there is nothing to write
    if (result.error === null) return { ...base, state: 'delivered', attempt, subscription: job.subscription.failures > 0 ? 'success' : 'none' };
    counters.failures.inc({ kind: job.subscription.kind });
    if (result.status === 410) {
      return { ...base, state: 'failed', attempt, subscription: 'failure', error: result.error, disable: `the endpoint answered 410 Gone at ${new Date(started).toISOString()}` };
    }
    const next = nextAttemptAt(job.attempts + 1, now(), random(), retryAfterMs(result.retryAfter, now()));
    return next === undefined
      ? { ...base, state: 'failed', attempt, subscription: 'failure', error: `${result.error} (attempt ${job.attempts + 1}, the last)` }
      : { ...base, state: 'pending', nextAt: next, attempt, subscription: 'failure', error: result.error };
  }

  async function postSigned(sub: SubscriptionRow, envelope: Envelope, body: string): Promise<AttemptResult> {
    const at = now();
    const secrets = [openSubscriptionSecret(o.secrets, sub.id, sub.secret!)];
    if (sub.previous_secret !== null && sub.previous_until !== null && sub.previous_until > at) {
      secrets.push(openSubscriptionSecret(o.secrets, sub.id, sub.previous_secret));
    }
    const timestamp = Math.floor(at / 1000);
    return postWebhook(sub.url!, {
      'content-type': 'application/json',
      'user-agent': `gridkeeper/${o.version}`,
      'webhook-id': envelope.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, envelope.id, timestamp, body),
    }, body, { allowInternal: o.allowInternal });
  }

  async function publishMqtt(sub: SubscriptionRow, envelope: Envelope, body: string): Promise<AttemptResult> {
    const topic = [sub.topic_prefix ?? 'gridkeeper', o.installation, ...envelope.type.split('.'), String(envelope.subject.id ?? '')].join('/');
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
        // the unit that woke us commits first: on SQLite a statement waits for the open transaction, on PostgreSQL an
        // empty unit joins the next group commit, which begins after the current one committed
        if (woken) await (db.backend === 'postgres' ? db.write(async () => {}) : ping(db));
        woken = false;
        await pump();
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
      // deliveries in flight get a few seconds to end; one still running then is sent again after its lease (at least once)
      for (let waited = 0; (total > 0 || flushing !== undefined) && waited < STOP_WAIT_MS; waited += 20) await new Promise((r) => setTimeout(r, 20));
      await flush();
      await o.mqtt?.close();
    },
  };
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
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
