// All SQL of the audit log: insert (inside the unit of work of the change it records), the visible page of a query,
// the range an export reads, and the retention prune.
import type { Db } from '../db/open.ts';
import type { AuditLogTable } from '../db/schema.ts';
import { inJson, listParam } from '../db/in-list.ts';

export type AuditRow = Omit<AuditLogTable, 'id'> & { id: number };
export type AuditInsert = Omit<AuditLogTable, 'id' | 'actor_email'>;

const COLUMNS = 'id, at, actor_user_id, actor_email, actor_token, actor_api_token, client_address, request_id, action, target_kind, target_id, '
  + 'role_id, device_id, user_id, changes';

/** Inserts one entry; the actor's e-mail is read in the same statement. Called inside a unit of work (Db.write). */
export function insertAuditEntry(db: Db, row: AuditInsert): void {
  db.prepare(`INSERT INTO audit_log (at, actor_user_id, actor_email, actor_token, actor_api_token, client_address, request_id, action,
    target_kind, target_id, role_id, device_id, user_id, changes)
    VALUES (?, ?, (SELECT email FROM users WHERE id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    row.at, row.actor_user_id, row.actor_user_id, row.actor_token, row.actor_api_token, row.client_address, row.request_id, row.action, row.target_kind,
    row.target_id, row.role_id, row.device_id, row.user_id, row.changes,
  );
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
export function queryAuditEntries(db: Db, filter: AuditFilter, page: { limit: number; afterId?: number }, visibility?: AuditVisibility): AuditRow[] {
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: page.limit };
  const add = (clause: string, name: string, value: unknown) => {
    if (value === undefined) return;
    where.push(clause);
    params[name] = value;
  };
  // only the given filters go into the SQL text, so the planner can use the index each one has
  add('a.id < :afterId', 'afterId', page.afterId);
  add('a.actor_user_id = :actorId', 'actorId', filter.actorId);
  add('a.action = :action', 'action', filter.action);
  add('a.target_kind = :targetKind', 'targetKind', filter.targetKind);
  add('a.target_id = :targetId', 'targetId', filter.targetId);
  add('a.at >= :from', 'from', filter.from);
  add('a.at < :to', 'to', filter.to);
  if (visibility) {
    where.push(`(a.actor_user_id = :me
      OR (a.target_kind IN ('user', 'api-token') AND a.user_id = :me)
      OR (a.target_kind = 'member' AND (a.role_id ${inJson(':memberRoles')} OR (a.user_id = :me AND a.role_id ${inJson(':ownRoles')})))
      OR (a.target_kind IN ('role', 'manages', 'monitors', 'customer', 'order') AND a.role_id ${inJson(':roles')})
      OR (a.target_kind = 'device' AND a.device_id ${inJson(':devices')})
      OR (a.target_kind = 'license' AND EXISTS (SELECT 1 FROM license_datalink dl
        WHERE dl.license_id = a.target_id AND dl.device_id ${inJson(':devices')})))`);
    Object.assign(params, {
      me: visibility.userId, roles: listParam(visibility.roles), memberRoles: listParam(visibility.memberRoles), ownRoles: listParam(visibility.ownRoles), devices: listParam(visibility.devices),
    });
  }
  const sql = `SELECT ${COLUMNS.split(', ').map((c) => `a.${c}`).join(', ')} FROM audit_log a
    ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY a.id DESC LIMIT :limit`;
  return db.prepare(sql).all(params) as AuditRow[];
}

/** Entries with from <= at < to, oldest first, one at a time (an export may be larger than memory). */
export function iterateAuditEntries(db: Db, from: number, to: number): IterableIterator<AuditRow> {
  return db.prepare(`SELECT ${COLUMNS} FROM audit_log WHERE at >= ? AND at < ? ORDER BY at, id`).iterate(from, to) as IterableIterator<AuditRow>;
}

/** Deletes up to `max` of the oldest entries older than `cutoff` (Unix ms); returns how many went. */
export function pruneAuditEntries(db: Db, cutoff: number, max: number): number {
  return db.prepare('DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? ORDER BY at LIMIT ?)').run(cutoff, max).changes;
}
