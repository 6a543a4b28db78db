// Request and response schemas of the audit log (validation and the OpenAPI document), and the one serializer.
import * as v from 'valibot';
import { jsonId } from '../http/validate.ts';
import { parseIsoWithOffset } from '../lib/time-text.ts';
import type { AuditRow } from './audit.store.ts';

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;

export const TARGET_KINDS = ['role', 'manages', 'member', 'device', 'monitors', 'license', 'user', 'customer', 'order', 'api-token'] as const;

/** An ISO 8601 date-time with a UTC offset, as Unix ms. */
export const IsoTime = v.pipe(
  v.string(),
  v.description('ISO 8601 date-time with a UTC offset (Z or ±hh:mm)'),
  v.maxLength(64, 'expected at most 64 characters'),
  v.transform(parseIsoWithOffset),
  v.number('expected an ISO 8601 date-time with a UTC offset, e.g. 2026-01-02T03:04:05.678Z'),
);

const TargetId = v.union([
  jsonId,
  v.pipe(v.string(), v.uuid('expected a license id (UUID)')),
], 'expected an integer >= 0, or a license id (UUID)');

export const AuditQueryBody = v.optional(v.strictObject({
  filter: v.optional(v.strictObject({
    actorId: v.optional(v.pipe(jsonId, v.description('the acting user\'s id'))),
    action: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a non-empty action'), v.maxLength(64, 'expected at most 64 characters'),
      v.description('e.g. device.patch, role.update, auth.login.failed'))),
    targetKind: v.optional(v.picklist(TARGET_KINDS, `expected one of ${TARGET_KINDS.join(', ')}`)),
    targetId: v.optional(TargetId),
    from: v.optional(v.pipe(IsoTime, v.description('entries at or after this time'))),
    to: v.optional(v.pipe(IsoTime, v.description('entries before this time'))),
  })),
  limit: v.optional(v.pipe(
    v.number(), v.integer(`expected an integer from 1 to ${MAX_LIMIT}`), v.minValue(1, `expected an integer from 1 to ${MAX_LIMIT}`),
    v.maxValue(MAX_LIMIT, `expected an integer from 1 to ${MAX_LIMIT}`), v.description(`default ${DEFAULT_LIMIT}`),
  )),
  afterId: v.optional(v.pipe(jsonId, v.description('the id of the last entry of the previous page: entries older than it'))),
}));
export type AuditQueryInput = NonNullable<v.InferOutput<typeof AuditQueryBody>>;

// ---- responses ----

/** targets whose ids are UUID strings; the others are integers */
const UUID_TARGETS = new Set(['license', 'customer', 'order']);

export const AuditEntry = v.object({
  id: v.number(),
  time: v.pipe(v.string(), v.isoTimestamp()),
  actor: v.object({
    userId: v.nullable(v.number()),
    email: v.nullable(v.string()),
    token: v.nullable(v.picklist(['access', 'sudo', 'refresh', 'partial', 'api'])),
    /** the API token used, when token is 'api' */
    apiTokenId: v.optional(v.number()),
  }),
  clientAddress: v.nullable(v.string()),
  requestId: v.nullable(v.string()),
  action: v.string(),
  target: v.object({ kind: v.picklist(TARGET_KINDS), id: v.nullable(v.union([v.number(), v.string()])) }),
  changes: v.record(v.string(), v.unknown()),
});
export type AuditEntryJson = v.InferOutput<typeof AuditEntry>;

export const AuditQueryResponse = v.object({ entries: v.array(AuditEntry) });

/** The public JSON of an entry; `changes` as given (the routes narrow it to what the caller may read). */
export function toAuditEntry(row: AuditRow, changes: Record<string, unknown> = JSON.parse(row.changes) as Record<string, unknown>): AuditEntryJson {
  return {
    id: row.id,
    time: new Date(row.at).toISOString(),
    actor: { userId: row.actor_user_id, email: row.actor_email, token: row.actor_token, ...(row.actor_api_token !== null ? { apiTokenId: row.actor_api_token } : {}) },
    clientAddress: row.client_address,
    requestId: row.request_id,
    action: row.action,
    // ids are integers on the wire; license ids are UUID strings
    target: { kind: row.target_kind, id: row.target_id === null ? null : UUID_TARGETS.has(row.target_kind) ? row.target_id : Number(row.target_id) },
    changes,
  };
}
