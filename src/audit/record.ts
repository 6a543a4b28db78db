// recordAudit(tx, c, deps, events): the one way an audit entry is written. It is called INSIDE the unit of work of the
// change (a Db.write unit), with that unit's transaction handle `tx`, and awaited there, so the entry commits with the
// change or not at all: a request that is refused or fails throws in its unit, its savepoint is rolled back, and no
// entry remains. Failed logins are the exception and are recorded on purpose in a unit of their own.
//
// An entry says who (user id, e-mail, the kind of token presented), from where (client address, request id), what
// (action, target kind and id) and the changes. Secrets never go in: for passwords, second factors, recovery codes
// and tokens `changes` says THAT they changed, never a value or a hash.
import type { Context } from 'hono';
import type { AppEnv, TokenType } from '../http/env.ts';
import type { AuditLog, Deps } from '../context/deps.ts';
import type { Db } from '../db/open.ts';
import type { AuditLogTable } from '../db/schema.ts';
import { clientIp } from '../http/client-ip.ts';
import { insertAuditEntry, pruneAuditEntries } from './audit.store.ts';
import type { AuditInsert } from '../db/schema.ts';

export type AuditAction =
  | 'role.create' | 'role.update' | 'manages.put' | 'manages.delete' | 'member.put' | 'member.delete'
  | 'device.create' | 'device.patch' | 'device.put' | 'monitors.put' | 'monitors.delete'
  | 'license.create' | 'license.activate' | 'license.claim'
  | 'user.create' | 'user.password' | 'user.2fa.setup' | 'user.2fa.enable' | 'user.2fa.disable' | 'user.2fa.recovery-codes' | 'user.tier'
  | 'auth.login' | 'auth.login.partial' | 'auth.login.failed' | 'auth.sudo' | 'auth.sudo.failed' | 'auth.refresh' | 'auth.logout'
  | 'user.password.reset-link' | 'user.token.create' | 'user.token.delete' | 'customer.create' | 'order.create';

export type TargetKind = AuditLogTable['target_kind'];

export interface AuditEvent {
  action: AuditAction;
  target: { kind: TargetKind; id: number | string | null };
  /** field -> { before?, after? } (absent before: created; absent after: removed), or facts about the change */
  changes?: Record<string, unknown>;
  /** what decides who may read the entry, when the target alone does not say it (see audit.store.ts AuditVisibility) */
  roleId?: number;
  deviceId?: number;
  userId?: number;
}

/** Who acted, when the request has no authenticated actor (login) or acts for another (none yet). */
export interface AuditActor {
  userId: number | null;
  token: TokenType | 'api' | null;
  /** the API token used, when token is 'api' */
  apiTokenId?: number;
}

/** Inserts entries for the request `c` through `tx`, the transaction handle of the unit of work (Db.write) it runs in. */
export async function recordAudit(tx: Db, c: Context<AppEnv>, deps: Deps, events: AuditEvent | readonly AuditEvent[], actor?: AuditActor): Promise<void> {
  const who: AuditActor = actor ?? { userId: c.var.actor.userId, token: c.var.actor.tokenType, apiTokenId: c.var.actor.apiTokenId };
  const source = { at: deps.now(), actor: who, clientAddress: clientIp(c, deps), requestId: c.get('requestId') ?? null };
  await deps.audit.write(tx, toRows(source, events));
}

/**
 * Inserts entries for a change made by a command on the host (`license create`, `user add`): no actor, no client
 * address, no request id — the operator with access to the data dir. Through `tx`, the handle of the command's
 * transaction, and `log` (the entries' events go with them: src/events/outbox.ts withEvents).
 */
export async function recordCommandAudit(tx: Db, at: number, events: AuditEvent | readonly AuditEvent[], log: AuditLog = plainAuditLog): Promise<void> {
  await log.write(tx, toRows({ at, actor: { userId: null, token: null }, clientAddress: null, requestId: null }, events));
}

/** Inserts the entries and nothing else (a command's, which prunes nothing). */
export const plainAuditLog: AuditLog = {
  async write(tx, rows) {
    for (const row of rows) await insertAuditEntry(tx, row);
  },
};

interface Source { at: number; actor: AuditActor; clientAddress: string | null; requestId: string | null }

function toRows(source: Source, events: AuditEvent | readonly AuditEvent[]): AuditInsert[] {
  const list = Array.isArray(events) ? events as readonly AuditEvent[] : [events as AuditEvent];
  return list.map((e) => ({
    at: source.at,
    actor_user_id: source.actor.userId,
    actor_token: source.actor.token,
    actor_api_token: source.actor.apiTokenId ?? null,
    client_address: source.clientAddress,
    request_id: source.requestId,
    action: e.action,
    target_kind: e.target.kind,
    target_id: e.target.id === null ? null : String(e.target.id),
    role_id: e.roleId ?? (e.target.kind === 'role' ? Number(e.target.id) : null),
    device_id: e.deviceId ?? (e.target.kind === 'device' ? Number(e.target.id) : null),
    user_id: e.userId ?? (e.target.kind === 'user' && e.target.id !== null ? Number(e.target.id) : null),
    changes: JSON.stringify(e.changes ?? {}),
  }));
}

/**
 * The fields whose values differ between two objects, as { field: { before, after } } (a side without the field has
 * no key). Values compare as JSON.
 */
export function diffFields(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, { before?: unknown; after?: unknown }> {
  const out: Record<string, { before?: unknown; after?: unknown }> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const had = Object.hasOwn(before, key);
    const has = Object.hasOwn(after, key);
    if (had && has && (before[key] === after[key] || JSON.stringify(before[key]) === JSON.stringify(after[key]))) continue;
    out[key] = { ...(had ? { before: before[key] } : {}), ...(has ? { after: after[key] } : {}) };
  }
  return out;
}

/** Each field as created: { field: { after } }. */
export function created(fields: Record<string, unknown>): Record<string, { after: unknown }> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { after: v }]));
}

/** Each field as removed: { field: { before } }. */
export function removed(fields: Record<string, unknown>): Record<string, { before: unknown }> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { before: v }]));
}

const PRUNE_EVERY_MS = 60_000;
/** Rows deleted per unit of work: a long-overdue prune never holds the writer for long; the rest goes with the next writes. */
const PRUNE_CHUNK = 1_000;

/**
 * The audit log of a running service. Retention is applied like telemetry's, lazily: at most once a minute, the write
 * of an entry also deletes entries older than `retentionMs` — at most PRUNE_CHUNK of them, inside the same unit of work
 * (the `at` index finds them). While a backlog remains (a full chunk went), the next write continues it.
 */
export function createAuditLog(options: { retentionMs: number | null; now: () => number }): AuditLog {
  let lastPrune: number | undefined;
  return {
    async write(tx, rows) {
      // a programming error, not a request error: an entry outside a unit would not commit with its change
      if (!tx.inTransaction) throw new Error('recordAudit outside a unit of work (Db.write)');
      for (const row of rows) await insertAuditEntry(tx, row);
      if (options.retentionMs === null) return;
      const now = options.now();
      if (lastPrune === undefined || now - lastPrune >= PRUNE_EVERY_MS || now < lastPrune) {
        const deleted = await pruneAuditEntries(tx, now - options.retentionMs, PRUNE_CHUNK);
        lastPrune = deleted < PRUNE_CHUNK ? now : undefined;
      }
    },
  };
}

/** For the benchmark's comparison only (bench/audit.mjs): records nothing. The service always uses createAuditLog. */
export const noAuditLog: AuditLog = { async write() {} };

