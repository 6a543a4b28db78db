// Webhooks and MQTT subscriptions (docs/api.md#events): CRUD under /v1/webhook, secret rotation, a test event, the
// delivery log with its attempts, and replays. A subscription belongs to a role; the right to manage it is the right
// to add members to that role (src/access/subscribers.ts).
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import type { Db } from '../db/open.ts';
import { requireSubscription, requireSubscriptionManagement, subscriberRights, subscriptionRoles } from '../access/subscribers.ts';
import { envelopeFor, subjectsOf } from './payload.ts';
import { refusedWebhookUrl } from './address-rules.ts';
import { eventTypes, filtersSelecting } from './event-types.ts';
import {
  attemptsOf, deleteSubscription, deliveriesPage, eventsToReplay, findDelivery, findSubscription, insertSubscription, queueAgain, rotateSecret,
  subscriptionsOfRoles, updateSubscription, type SubscriptionRow,
} from './events.store.ts';
import { writeEvents } from './outbox.ts';
import { sealSubscriptionSecret, openSubscriptionSecret } from './secrets.ts';
import { newWebhookSecret } from './signing.ts';
import {
  CreateWebhookBody, CreateWebhookQuery, DeliveriesResponse, DeliveryParams, DeliveryQueryBody, DeliveryResponse, EventTypesResponse,
  ReplayBody, ReplayResponse, RotateBody, SecretResponse, TestResponse, UpdateWebhookBody, WebhookParams, WebhookQueryBody,
  WebhookResponse, WebhooksResponse, toAttempt, toDelivery, toEventTypes, toWebhook,
} from './events.schemas.ts';

const TAG = 'events';
const RULE = 'Needs, over the subscription\'s role, the right to add members to it: direct or indirect userManagement, or '
  + 'indirect roleManagement (a role outside the caller\'s reach is 404).';
/** a rotated-out secret keeps signing beside the new one this long */
const ROTATION_OVERLAP_MS = 24 * 3600_000;
const MAX_REPLAY = 10_000;

/** The target of a subscription: a webhook's URL (checked against the address rules) or an MQTT topic prefix. */
function target(kind: SubscriptionRow['kind'], url: string | undefined, topicPrefix: string | undefined, allowInternal: boolean): { url: string | null; topic_prefix: string | null } {
  if (kind === 'mqtt') {
    if (url !== undefined) throw new ApiError('BAD_REQUEST', 'url: an MQTT subscription has no URL (it publishes to GRIDKEEPER_MQTT_URL)');
    return { url: null, topic_prefix: topicPrefix ?? 'gridkeeper' };
  }
  if (topicPrefix !== undefined) throw new ApiError('BAD_REQUEST', 'topicPrefix: only for an MQTT subscription');
  if (url === undefined) throw new ApiError('BAD_REQUEST', 'url: required for a webhook');
  const why = refusedWebhookUrl(url, allowInternal);
  if (why !== undefined) throw new ApiError('BAD_REQUEST', `url: ${why}`);
  return { url: new URL(url).toString(), topic_prefix: null };
}

export function registerEventRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;
  const allowInternal = deps.config.webhookAllowInternal;

  /** The subscription `id` after the rights check (404 / 403), read through `h` (db or the unit's tx). */
  async function authorized(h: Db, userId: number, id: number): Promise<SubscriptionRow> {
    const row = await findSubscription(h, id);
    await requireSubscription(h, userId, id, row?.role_id);
    return row!;
  }

  api.route({
    method: 'get', path: '/v1/event/types', tag: TAG, summary: 'List the event types',
    description: 'Every event type (noun.verb) with the kind of its subject. A subscription\'s `types` takes these, a prefix ending in .* or *.',
    auth: auth.requireActor, responses: { 200: { description: 'the types', schema: EventTypesResponse } },
  }, async (c) => c.json(toEventTypes()));

  api.route({
    method: 'post', path: '/v1/webhook', tag: TAG, summary: 'Create a webhook endpoint or MQTT subscription of a role',
    description: `Body { kind?: webhook (default) | mqtt, name, url (webhook), topicPrefix? (mqtt, default gridkeeper), types? (default ["*"]), `
      + 'secret? (whsec_…; default: a new one) }. Answers { webhook } with its `secret` — shown this once. A URL to loopback, link-local '
      + `or metadata addresses is 400 unless GRIDKEEPER_WEBHOOK_ALLOW_INTERNAL is on. ${RULE}`,
    auth: auth.requireActor, query: CreateWebhookQuery, body: CreateWebhookBody,
    responses: { 200: { description: 'the new subscription', schema: WebhookResponse } },
  }, async (c, { query, body }) => {
    const userId = c.var.actor.userId;
    const kind = body.kind ?? 'webhook';
    const where = target(kind, body.url, body.topicPrefix, allowInternal);
    const types = body.types ?? ['*'];
    const secret = kind === 'webhook' ? body.secret ?? newWebhookSecret() : undefined;
    const at = deps.now();
    const row = await db.write(async (tx) => {
      await requireSubscriptionManagement(tx, userId, query.roleId);
      const id = await insertSubscription(tx, {
        role_id: query.roleId, kind, name: body.name, ...where, types: JSON.stringify(types), secret: null, enabled: 1, created_at: at, updated_at: at,
      }, types);
      if (secret !== undefined) await rotateSecret(tx, id, sealSubscriptionSecret(deps.secrets, id, secret), null, at, at);
      return (await findSubscription(tx, id))!;
    });
    return c.json({ webhook: { ...toWebhook(row, at), ...(secret !== undefined ? { secret } : {}) } });
  });

  api.route({
    method: 'post', path: '/v1/webhook/query', tag: TAG, summary: 'Query the webhooks and MQTT subscriptions the caller may manage',
    description: 'Body { filter?: { id?: int[], roleId?: int[], kind? } } ({} or no body: no filter). Subscriptions of the roles over which '
      + 'the caller holds the right to add members, ascending by id. Secrets are never answered.',
    auth: auth.requireActor, body: WebhookQueryBody,
    responses: { 200: { description: 'the subscriptions', schema: WebhooksResponse } },
  }, async (c, { body }) => {
    const f = body?.filter ?? {};
    let roles = await subscriptionRoles(db, c.var.actor.userId);
    if (f.roleId) roles = roles.filter((r) => f.roleId!.includes(r));
    const at = deps.now();
    const rows = [...await subscriptionsOfRoles(db, roles, 'webhook'), ...await subscriptionsOfRoles(db, roles, 'mqtt')]
      .filter((r) => (f.id === undefined || f.id.includes(r.id)) && (f.kind === undefined || f.kind === r.kind))
      .sort((a, b) => a.id - b.id);
    return c.json({ webhook: rows.map((r) => toWebhook(r, at)) });
  });

  api.route({
    method: 'get', path: '/v1/webhook/:webhookId', tag: TAG, summary: 'Read a webhook or MQTT subscription',
    description: `Its settings and state: enabled, and when disabled why (410 Gone, days of failures, its owner). ${RULE}`,
    auth: auth.requireActor, params: WebhookParams,
    responses: { 200: { description: 'the subscription', schema: WebhookResponse } },
  }, async (c, { params }) => {
    const row = await authorized(db, c.var.actor.userId, params.webhookId);
    return c.json({ webhook: toWebhook(row, deps.now()) });
  });

  api.route({
    method: 'put', path: '/v1/webhook/:webhookId', tag: TAG, summary: 'Change a webhook or MQTT subscription',
    description: 'Body { name, url (webhook) | topicPrefix? (mqtt), types, enabled }. Enabling a disabled one clears the reason and its '
      + `run of failures; its pending deliveries go on. ${RULE}`,
    auth: auth.requireActor, params: WebhookParams, body: UpdateWebhookBody,
    responses: { 200: { description: 'the subscription', schema: WebhookResponse } },
  }, async (c, { params, body }) => {
    const userId = c.var.actor.userId;
    const at = deps.now();
    const row = await db.write(async (tx) => {
      const before = await authorized(tx, userId, params.webhookId);
      const where = target(before.kind, body.url, body.topicPrefix, allowInternal);
      await updateSubscription(tx, before.id, { name: body.name, ...where, types: body.types, enabled: body.enabled }, at);
      return (await findSubscription(tx, before.id))!;
    });
    deps.events.wake();
    return c.json({ webhook: toWebhook(row, at) });
  });

  api.route({
    method: 'delete', path: '/v1/webhook/:webhookId', tag: TAG, summary: 'Delete a webhook or MQTT subscription',
    description: `Its pending deliveries and its delivery log go with it. ${RULE}`,
    auth: auth.requireActor, params: WebhookParams,
    responses: { 204: { description: 'deleted' } },
  }, async (c, { params }) => {
    const userId = c.var.actor.userId;
    await db.write(async (tx) => {
      await authorized(tx, userId, params.webhookId);
      await deleteSubscription(tx, params.webhookId);
    });
    return c.body(null, 204);
  });

  api.route({
    method: 'post', path: '/v1/webhook/:webhookId/secret', tag: TAG, summary: 'Rotate a webhook\'s secret',
    description: 'Body { secret? } (whsec_…; default: a new one). Answers the new secret, shown this once. For 24 hours every delivery '
      + `carries two signatures, one per secret (Standard Webhooks' zero-downtime rotation). ${RULE}`,
    auth: auth.requireActor, params: WebhookParams, body: RotateBody,
    responses: { 200: { description: 'the new secret', schema: SecretResponse } },
  }, async (c, { params, body }) => {
    const userId = c.var.actor.userId;
    const secret = body?.secret ?? newWebhookSecret();
    const at = deps.now();
    const until = at + ROTATION_OVERLAP_MS;
    await db.write(async (tx) => {
      const row = await authorized(tx, userId, params.webhookId);
      if (row.kind !== 'webhook') throw new ApiError('BAD_REQUEST', 'an MQTT subscription has no secret');
      const previous = sealSubscriptionSecret(deps.secrets, row.id, openSubscriptionSecret(deps.secrets, row.id, row.secret!));
      await rotateSecret(tx, row.id, sealSubscriptionSecret(deps.secrets, row.id, secret), previous, until, at);
    });
    return c.json({ secret, previousSecretUntil: new Date(until).toISOString() });
  });

  api.route({
    method: 'post', path: '/v1/webhook/:webhookId/test', tag: TAG, summary: 'Send a test event',
    description: `Queues a subscription.tested event for this subscription alone (also when disabled: it waits until enabled). ${RULE}`,
    auth: auth.requireActor, params: WebhookParams,
    responses: { 200: { description: 'the test event\'s id', schema: TestResponse } },
  }, async (c, { params }) => {
    const userId = c.var.actor.userId;
    const at = deps.now();
    const [made] = await db.write(async (tx) => {
      const row = await authorized(tx, userId, params.webhookId);
      return writeEvents(tx, [{
        type: 'subscription.tested', at, subject: 'subscription', subjectId: String(row.id), audience: 'role', roleId: row.role_id, deviceId: null,
        data: { message: 'a test event, sent on request', requestedBy: userId },
      }], row.id);
    });
    deps.events.wake();
    return c.json({ eventId: made.uid });
  });

  api.route({
    method: 'post', path: '/v1/webhook/:webhookId/delivery/query', tag: TAG, summary: 'The delivery log of a subscription',
    description: 'Body { filter?: { state?: (pending|delivered|failed|skipped)[], eventId? }, beforeId?, limit? (1-1000, default 100) }. '
      + 'Deliveries newest first, each with its state, attempts, next attempt (pending), last status and error; page with beforeId = '
      + `the last id. An event the role may not read when it is due is not sent and not listed. ${RULE}`,
    auth: auth.requireActor, params: WebhookParams, body: DeliveryQueryBody,
    responses: { 200: { description: 'the deliveries', schema: DeliveriesResponse } },
  }, async (c, { params, body }) => {
    const row = await authorized(db, c.var.actor.userId, params.webhookId);
    const rows = await deliveriesPage(db, row.id, body?.filter ?? {}, body?.limit ?? 100, body?.beforeId);
    return c.json({ deliveries: rows.map(toDelivery) });
  });

  api.route({
    method: 'get', path: '/v1/webhook/:webhookId/delivery/:deliveryId', tag: TAG, summary: 'One delivery with its attempts',
    description: `Every attempt: when, how long, the HTTP status (or why there was none) and the first bytes of the answer. ${RULE}`,
    auth: auth.requireActor, params: DeliveryParams,
    responses: { 200: { description: 'the delivery', schema: DeliveryResponse } },
  }, async (c, { params }) => {
    const row = await authorized(db, c.var.actor.userId, params.webhookId);
    const delivery = await findDelivery(db, row.id, params.deliveryId);
    if (!delivery) throw new ApiError('NOT_FOUND', `delivery ${params.deliveryId} not found`);
    return c.json({ delivery: toDelivery(delivery), attempts: (await attemptsOf(db, delivery.id)).map(toAttempt) });
  });

  api.route({
    method: 'post', path: '/v1/webhook/:webhookId/replay', tag: TAG, summary: 'Replay one event or a time range',
    description: 'Body { eventId } or { from, to } (ISO 8601 with a zone): queues those events again for this subscription (a range: the '
      + `types its filter selects, at most ${MAX_REPLAY}), those its role may read now; a delivery still pending is made due now instead of doubled. Events are kept `
      + `GRIDKEEPER_EVENT_RETENTION after delivery. Answers { queued }. ${RULE}`,
    auth: auth.requireActor, params: WebhookParams, body: ReplayBody,
    responses: { 200: { description: 'how many were queued', schema: ReplayResponse } },
  }, async (c, { params, body }) => {
    const userId = c.var.actor.userId;
    const at = deps.now();
    const queued = await db.write(async (tx) => {
      const row = await authorized(tx, userId, params.webhookId);
      const filter = JSON.parse(row.types) as string[];
      const types = eventTypes().map((t) => t.type).filter((t) => t !== 'subscription.tested' && filtersSelecting(t).some((f) => filter.includes(f)));
      const asked = await eventsToReplay(tx, 'eventId' in body ? { uid: body.eventId } : { from: body.from, to: body.to, types }, MAX_REPLAY);
      // only what the subscription's role may read now: an event it may not read is answered like one that does not exist
      const { deviceIds, licenseIds } = subjectsOf(asked);
      const rights = await subscriberRights(tx, row.role_id, deviceIds, licenseIds);
      const visible = asked.filter((e) => envelopeFor(e, rights, deps.events.installation) !== undefined);
      if ('eventId' in body && visible.length === 0) throw new ApiError('NOT_FOUND', `event ${body.eventId} not found`);
      await queueAgain(tx, row.id, visible.map((e) => e.id), at);
      return visible.length;
    });
    deps.events.wake();
    return c.json({ queued });
  });
}
