// Request and response schemas of webhooks and MQTT subscriptions, their delivery log and replays (validation and
// the OpenAPI document), and the serializers. Secrets are answered once, when made; never afterwards.
import * as v from 'valibot';
import { jsonId, pathInt, qInt } from '../http/validate.ts';
import { eventTypes, isTypeFilter } from './event-types.ts';
import { webhookSecretKey } from './signing.ts';
import type { AttemptRow, DeliveryRow, SubscriptionRow } from './events.store.ts';

const MAX_LIST = 1000;
const Name = v.pipe(v.string('expected a string'), v.trim(), v.minLength(1, 'expected 1 to 100 characters'), v.maxLength(100, 'expected 1 to 100 characters'));
const Url = v.pipe(v.string('expected a URL'), v.trim(), v.minLength(1, 'expected a URL'), v.maxLength(2048, 'expected at most 2048 characters'));
const TopicPrefix = v.pipe(v.string('expected a string'), v.regex(/^[A-Za-z0-9_-]{1,64}(?:\/[A-Za-z0-9_-]{1,64}){0,3}$/, 'expected 1 to 4 topic levels of letters, digits, - or _'));
const Types = v.pipe(
  v.array(v.pipe(v.string('expected an event type'), v.check(isTypeFilter, 'expected an event type, a prefix ending in .* or * (GET /v1/event/types lists them)')), 'expected an array of event types'),
  v.minLength(1, 'expected at least one event type (["*"]: every type)'),
  v.maxLength(100, 'expected at most 100 entries'),
);
const Secret = v.pipe(v.string('expected a whsec_ secret'), v.check((s) => webhookSecretKey(s) !== undefined, 'expected whsec_ and 24 to 64 bytes in base64'));
const Kind = v.picklist(['webhook', 'mqtt'], 'expected webhook or mqtt');

export const CreateWebhookQuery = v.strictObject({ roleId: qInt });
export const CreateWebhookBody = v.strictObject({
  kind: v.optional(Kind),
  name: Name,
  url: v.optional(Url),
  topicPrefix: v.optional(TopicPrefix),
  types: v.optional(Types),
  secret: v.optional(Secret),
});
export const UpdateWebhookBody = v.strictObject({
  name: Name,
  url: v.optional(Url),
  topicPrefix: v.optional(TopicPrefix),
  types: Types,
  enabled: v.boolean('expected true or false'),
});
export const WebhookParams = v.strictObject({ webhookId: pathInt });
export const DeliveryParams = v.strictObject({ webhookId: pathInt, deliveryId: pathInt });
export const WebhookQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    id: v.optional(v.pipe(v.array(jsonId, 'expected an array of integers'), v.maxLength(MAX_LIST, `expected at most ${MAX_LIST} items`))),
    roleId: v.optional(v.pipe(v.array(jsonId, 'expected an array of integers'), v.maxLength(MAX_LIST, `expected at most ${MAX_LIST} items`))),
    kind: v.optional(Kind),
  })),
}));
export const RotateBody = v.optional(v.strictObject({ secret: v.optional(Secret) }));

const States = v.picklist(['pending', 'delivered', 'failed'], 'expected pending, delivered or failed');
const EventUid = v.pipe(v.string('expected an event id'), v.regex(/^evt_[A-Za-z0-9_-]{22}$/, 'expected an event id (evt_...)'));
export const DeliveryQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    state: v.optional(v.pipe(v.array(States), v.maxLength(3, 'expected at most 3 states'))),
    eventId: v.optional(EventUid),
  })),
  beforeId: v.optional(jsonId),
  limit: v.optional(v.pipe(jsonId, v.minValue(1, 'expected 1 to 1000'), v.maxValue(1000, 'expected 1 to 1000'))),
}));
const Time = v.pipe(v.string('expected an ISO 8601 time'), v.isoTimestamp('expected an ISO 8601 time with a zone'), v.transform((s) => Date.parse(s)));
export const ReplayBody = v.union([
  v.strictObject({ eventId: EventUid }),
  v.pipe(v.strictObject({ from: Time, to: Time }), v.check((r) => r.from < r.to, 'expected from before to')),
], 'expected { eventId } or { from, to }');

// ---- responses ----

const Iso = v.pipe(v.string(), v.isoTimestamp());
export const Webhook = v.object({
  id: v.number(), roleId: v.number(), kind: Kind, name: v.string(), url: v.nullable(v.string()), topicPrefix: v.nullable(v.string()),
  types: v.array(v.string()), enabled: v.boolean(), disabledAt: v.nullable(Iso), disabledReason: v.nullable(v.string()),
  failures: v.number(), failingSince: v.nullable(Iso), previousSecretUntil: v.nullable(Iso), createdAt: Iso, updatedAt: Iso,
});
export const WebhookResponse = v.object({ webhook: v.object({ ...Webhook.entries, secret: v.optional(v.string()) }) });
export const WebhooksResponse = v.object({ webhook: v.array(Webhook) });
export const SecretResponse = v.object({ secret: v.string(), previousSecretUntil: v.nullable(Iso) });
export const Delivery = v.object({
  id: v.number(), event: v.object({ id: v.string(), type: v.string(), time: Iso }), state: States, attempts: v.number(),
  nextAttemptAt: v.nullable(Iso), createdAt: Iso, doneAt: v.nullable(Iso), lastStatus: v.nullable(v.number()), lastError: v.nullable(v.string()),
});
export const Attempt = v.object({ at: Iso, durationMs: v.number(), status: v.nullable(v.number()), error: v.nullable(v.string()), response: v.nullable(v.string()) });
export const DeliveriesResponse = v.object({ deliveries: v.array(Delivery) });
export const DeliveryResponse = v.object({ delivery: Delivery, attempts: v.array(Attempt) });
export const TestResponse = v.object({ eventId: v.string() });
export const ReplayResponse = v.object({ queued: v.number() });
export const EventTypesResponse = v.object({ types: v.array(v.object({ type: v.string(), subject: v.string(), summary: v.string() })) });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toWebhook(row: SubscriptionRow, now: number): v.InferOutput<typeof Webhook> {
  return {
    id: row.id, roleId: row.role_id, kind: row.kind, name: row.name, url: row.url, topicPrefix: row.topic_prefix,
    types: JSON.parse(row.types) as string[], enabled: row.enabled === 1, disabledAt: iso(row.disabled_at), disabledReason: row.disabled_reason,
    failures: row.failures, failingSince: iso(row.failing_since),
    previousSecretUntil: row.previous_until !== null && row.previous_until > now ? iso(row.previous_until) : null,
    createdAt: iso(row.created_at)!, updatedAt: iso(row.updated_at)!,
  };
}

export function toDelivery(row: DeliveryRow): v.InferOutput<typeof Delivery> {
  return {
    id: row.id, event: { id: row.event_uid, type: row.event_type, time: iso(row.event_at)! }, state: row.state as 'pending' | 'delivered' | 'failed', attempts: row.attempts,
    nextAttemptAt: row.state === 'pending' ? iso(row.next_at) : null, createdAt: iso(row.created_at)!, doneAt: iso(row.done_at),
    lastStatus: row.last_status, lastError: row.last_error,
  };
}

export function toAttempt(row: AttemptRow): v.InferOutput<typeof Attempt> {
  return { at: iso(row.at)!, durationMs: row.duration_ms, status: row.status, error: row.error, response: row.response };
}

export function toEventTypes(): v.InferOutput<typeof EventTypesResponse> {
  return { types: eventTypes().map(({ type, subject, summary }) => ({ type, subject, summary })) };
}
