// All SQL of the audit log: insert (inside the unit of work of the change it records), the visible page of a query,
// the pages an export reads, and the retention prune.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/open.ts';
import type { AuditInsert, AuditLogTable } from '../db/schema.ts';
import { inValues } from '../db/in-list.ts';

export type AuditRow = Omit<AuditLogTable, 'id'> & { id: number };

const COLUMN_NAMES = ['id', 'at', 'actor_user_id', 'actor_email', 'actor_token', 'actor_api_token', 'client_address', 'request_id', 'action',
  'target_kind', 'target_id', 'role_id', 'device_id', 'user_id', 'changes'] as const;
const COLUMNS = sql.raw(COLUMN_NAMES.join(', '));
const A_COLUMNS = sql.raw(COLUMN_NAMES.map((c) => `a.${c}`).join(', '));

/** Inserts one entry; the actor's e-mail is read in the same statement. Called inside a unit of work (Db.write). */
export async function insertAuditEntry(tx: Db, row: AuditInsert): Promise<void> {
  await tx.run(sql`INSERT INTO audit_log (at, actor_user_id, actor_email, actor_token, actor_api_token, client_address, request_id, action,
    target_kind, target_id, role_id, device_id, user_id, changes)
    VALUES (${row.at}, ${row.actor_user_id}, (SELECT email FROM users WHERE id = ${row.actor_user_id}), ${row.actor_token}, ${row.actor_api_token},
      ${row.client_address}, ${row.request_id}, ${row.action}, ${row.target_kind}, ${row.target_id}, ${row.role_id}, ${row.device_id},
      ${row.user_id}, ${row.changes})`);
}

export interface AuditFilter {
  actorId?: number;
  action?: string;
  targetKind?: string;
  targetId?: string;
  /** Unix ms, inclusive */
  from?: number;
  /** Unix ms, exclusive */
  to?: number;
}

/**
 * What a caller who is not a root member may see, as the rights engine answered it: entries about roles in `roles`,
 * member relations of `memberRoles` (roles over which the caller holds userManagement) and its own memberships as
 * they are today (of `ownRoles`, the roles it is a direct member of), devices in `devices`, licenses linked to one of
 * `devices`; entries about the caller as a user; and the caller's own actions.
 */
export interface AuditVisibility {
  userId: number;
  roles: readonly number[];
  memberRoles: readonly number[];
  ownRoles: readonly number[];
  devices: readonly number[];
}

/** One page, newest first: entries with id < afterId that match the filter and (unless `visibility` is undefined) may be seen. */
export async function queryAuditEntries(db: Db, filter: AuditFilter, page: { limit: number; afterId?: number }, visibility?: AuditVisibility): Promise<AuditRow[]> {
  const where: RawBuilder<unknown>[] = [];
  const add = <T>(value: T | undefined, clause: (value: T) => RawBuilder<unknown>) => {
    if (value !== undefined) where.push(clause(value));
  };
  // only the given filters go into the SQL text, so the planner can use the index each one has
  add(page.afterId, (v) => sql`a.id < ${v}`);
  add(filter.actorId, (v) => sql`a.actor_user_id = ${v}`);
  add(filter.action, (v) => sql`a.action = ${v}`);
  add(filter.targetKind, (v) => sql`a.target_kind = ${v}`);
  add(filter.targetId, (v) => sql`a.target_id = ${v}`);
  add(filter.from, (v) => sql`a.at >= ${v}`);
  add(filter.to, (v) => sql`a.at < ${v}`);
  if (visibility) {
    const me = visibility.userId;
    where.push(sql`(a.actor_user_id = ${me}
      OR (a.target_kind IN ('user', 'api-token') AND a.user_id = ${me})
      OR (a.target_kind = 'member' AND (a.role_id ${inValues(visibility.memberRoles)} OR (a.user_id = ${me} AND a.role_id ${inValues(visibility.ownRoles)})))
      OR (a.target_kind IN ('role', 'manages', 'monitors', 'customer', 'order') AND a.role_id ${inValues(visibility.roles)})
      OR (a.target_kind = 'device' AND a.device_id ${inValues(visibility.devices)})
      OR (a.target_kind = 'license' AND EXISTS (SELECT 1 FROM license_datalink dl
        WHERE dl.license_id = a.target_id AND dl.device_id ${inValues(visibility.devices)})))`);
  }
  const whereClause = where.length ? sql`WHERE ${sql.join(where, sql` AND `)}` : sql``;
  return db.all(sql<AuditRow>`SELECT ${A_COLUMNS} FROM audit_log a ${whereClause} ORDER BY a.id DESC LIMIT ${page.limit}`);
}

/** Where the previous export page ended: its last entry's (at, id). */
export interface AuditCursor { at: number; id: number }

/**
 * One page of the entries with from <= at < to, oldest first (ordered by at, then id), after `cursor` (from the
 * start without one). Keyset paging: the next page starts after the last entry of this one; the `at` index bounds each
 * page's scan.
 */
export async function auditEntriesPage(db: Db, from: number, to: number, cursor: AuditCursor | undefined, limit: number): Promise<AuditRow[]> {
  const range = cursor === undefined
    ? sql`at >= ${from}`
    : sql`at >= ${cursor.at} AND (at > ${cursor.at} OR id > ${cursor.id})`; // cursor.at >= from: it is an entry's
  return db.all(sql<AuditRow>`SELECT ${COLUMNS} FROM audit_log WHERE ${range} AND at < ${to} ORDER BY at, id LIMIT ${limit}`);
}

/** Entries with from <= at < to, oldest first, read in pages of `pageSize` (an export may be larger than memory). */
export async function* iterateAuditEntries(db: Db, from: number, to: number, pageSize = 1000): AsyncGenerator<AuditRow, void, undefined> {
  let cursor: AuditCursor | undefined;
  for (;;) {
    const page = await auditEntriesPage(db, from, to, cursor, pageSize);
    yield* page;
    if (page.length < pageSize) return;
    const last = page[page.length - 1];
    cursor = { at: last.at, id: last.id };
  }
}

/** Deletes up to `max` of the oldest entries older than `cutoff` (Unix ms); returns how many went. */
export async function pruneAuditEntries(tx: Db, cutoff: number, max: number): Promise<number> {
  return (await tx.run(sql`DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ${cutoff} ORDER BY at LIMIT ${max})`)).changes;
}
