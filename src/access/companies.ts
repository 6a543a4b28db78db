// Companies in the rights engine. A company is a role marked as one (roles.is_company).
//
// - u is a member of company C, directly or indirectly, when C ∈ M(u) or C manages one of M(u) through a chain of manages
//   relations: the walk goes UP from the member roles (the opposite direction of Reach(u)).
// - u can see company C when u is such a member, or C ∈ Reach(u) (a company role below u is a role u already sees).
// - a company manages, directly or indirectly, its strict descendants; it monitors, directly or indirectly, the devices
//   of monitors relations held by itself or by one of those descendants.
// Recursive CTEs with UNION dedupe on the node, so shared sub-DAGs are visited once.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/open.ts';
import { inValues } from '../db/in-list.ts';

export interface CompanyRow { id: number; uuid: string; name: string }

/** The CTE `up(id)`: u's member roles and every role above them along manages relations. */
const memberOfCte = (userId: number): RawBuilder<unknown> => sql`
  up(id) AS (
    SELECT role_id FROM members WHERE user_id = ${userId}
    UNION
    SELECT m.parent_role_id FROM manages m JOIN up ON m.child_role_id = up.id
  )`;

/** The companies u is a direct or indirect member of, ascending by id. */
export async function memberCompanies(db: Db, userId: number): Promise<CompanyRow[]> {
  return db.all(sql<CompanyRow>`
    WITH RECURSIVE ${memberOfCte(userId)}
    SELECT r.id, r.uuid, r.name FROM up JOIN roles r ON r.id = up.id
    WHERE r.is_company = 1 ORDER BY r.id`);
}

/**
 * Whether each of the given roles is visible to u: above u's member roles (the `up` walk), or in Reach(u) — which holds
 * when the role or one of its ancestors is a member role of u. Both walks go UP (from u's member roles, and from each
 * given role), so a member of a role near the top does not pay for the thousands of roles below it.
 */
async function visibleIds(db: Db, userId: number, ids: readonly number[], companiesOnly: boolean): Promise<number[]> {
  const extra = companiesOnly ? sql`AND r.is_company = 1` : sql``;
  const rows = await db.all(sql<{ id: number }>`
    WITH RECURSIVE ${memberOfCte(userId)},
    anc(target, id) AS (
      SELECT id, id FROM roles WHERE id ${inValues(ids)}
      UNION
      SELECT anc.target, m.parent_role_id FROM manages m JOIN anc ON m.child_role_id = anc.id
    )
    SELECT r.id FROM roles r
    WHERE r.id ${inValues(ids)} ${extra}
      AND (r.id IN (SELECT id FROM up)
        OR EXISTS (SELECT 1 FROM anc JOIN members mb ON mb.role_id = anc.id AND mb.user_id = ${userId} WHERE anc.target = r.id))
    ORDER BY r.id`);
  return rows.map((r) => r.id);
}

/** Of the given role ids, those that are companies u can see (member of, or in Reach(u)); ascending. */
export async function visibleCompanyIds(db: Db, userId: number, ids: readonly number[]): Promise<number[]> {
  return visibleIds(db, userId, ids, true);
}

/**
 * Strict descendants of the given roles: every role reachable along one or more manages relations — for companies,
 * the roles they manage, directly or through a chain (role query's companyId and ancestorRoleId filters).
 */
export async function descendantsOf(db: Db, roleIds: readonly number[]): Promise<Set<number>> {
  const rows = await db.all(sql<{ id: number }>`
    WITH RECURSIVE down(id) AS (
      SELECT m.child_role_id FROM manages m WHERE m.parent_role_id ${inValues(roleIds)}
      UNION
      SELECT m.child_role_id FROM manages m JOIN down ON m.parent_role_id = down.id
    )
    SELECT id FROM down`);
  return new Set(rows.map((r) => r.id));
}

/** Devices monitored by these companies, directly (their own monitors relations) or through the roles they manage. */
export async function devicesMonitoredByCompanies(db: Db, companyIds: readonly number[]): Promise<Set<number>> {
  const rows = await db.all(sql<{ device_id: number }>`
    WITH RECURSIVE down(id) AS (
      SELECT id FROM roles WHERE id ${inValues(companyIds)}
      UNION
      SELECT m.child_role_id FROM manages m JOIN down ON m.parent_role_id = down.id
    )
    SELECT DISTINCT mo.device_id FROM down JOIN monitors mo ON mo.role_id = down.id`);
  return new Set(rows.map((r) => r.device_id));
}

/** Of the given companies, those that manage at least one of the given roles, directly or through a chain. */
export async function companiesManaging(db: Db, companyIds: readonly number[], roleIds: readonly number[]): Promise<Set<number>> {
  const rows = await db.all(sql<{ id: number }>`
    WITH RECURSIVE up(id) AS (
      SELECT m.parent_role_id FROM manages m WHERE m.child_role_id ${inValues(roleIds)}
      UNION
      SELECT m.parent_role_id FROM manages m JOIN up ON m.child_role_id = up.id
    )
    SELECT id FROM up WHERE id ${inValues(companyIds)}`);
  return new Set(rows.map((r) => r.id));
}

/** Of the given role ids, those u can see: in Reach(u), or above u's member roles (companies u belongs to name them). */
export async function visibleRoleIds(db: Db, userId: number, ids: readonly number[]): Promise<number[]> {
  return visibleIds(db, userId, ids, false);
}
