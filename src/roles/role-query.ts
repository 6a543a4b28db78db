// POST /v1/role/query and GET /v1/role: the roles of Reach(u) matching every given filter, with the requested userRights.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { RIGHTS, reach, rightsOverReach, type Right } from '../access/rights.ts';
import { descendantsOf, visibleCompanyIds } from '../access/companies.ts';
import { findRoles } from './roles.store.ts';
import { toRole, type Flags, type Role } from './serialize.ts';

export interface RoleFilter {
  id?: number[];
  name?: string[];
  ancestorRoleId?: number[];
  companyId?: number[];
}

/** 400 NOT_SUPPORTED for the Eniris filter that has no meaning on an appliance (no views). */
export function refuseUnsupported(filter: { viewId?: unknown } | undefined, where: string): void {
  if (filter?.viewId !== undefined) {
    throw new ApiError('NOT_SUPPORTED', `${where}viewId: not supported (a gridkeeper appliance has no views)`);
  }
}

/**
 * Filters combine with "and"; a list matches any of its values (an empty list matches nothing). `ancestorRoleId` keeps
 * strict descendants of those roles, counting only ancestors u can see: a role outside Reach(u) filters everything out
 * rather than reveal which of u's roles hang below it. `companyId` keeps roles managed (directly or through a chain) by
 * those companies, counting only companies u can see.
 */
export async function queryRoles(db: Db, userId: number, filter: RoleFilter = {}, userRights: Partial<Record<Right, boolean>> = {}): Promise<Role[]> {
  const wanted = RIGHTS.filter((r) => userRights[r] === true);
  const rights = wanted.length > 0 ? await rightsOverReach(db, userId) : undefined;
  const visible = rights ? [...rights.keys()] : await reach(db, userId);
  let ids = visible;
  if (filter.id) {
    const only = new Set(filter.id);
    ids = ids.filter((id) => only.has(id));
  }
  if (filter.companyId) {
    // a company u cannot see counts for nothing: the filter then matches nothing, as for a company that does not exist
    const below = await descendantsOf(db, await visibleCompanyIds(db, userId, filter.companyId));
    ids = ids.filter((id) => below.has(id));
  }
  if (filter.ancestorRoleId) {
    const mine = new Set(visible);
    const below = await descendantsOf(db, filter.ancestorRoleId.filter((id) => mine.has(id)));
    ids = ids.filter((id) => below.has(id));
  }
  let rows = await findRoles(db, ids);
  if (filter.name) {
    const names = new Set(filter.name);
    rows = rows.filter((r) => names.has(r.name));
  }
  if (!rights) return rows.map((row) => toRole(row));
  return rows.map((row) => {
    const held = rights.get(row.id) as Flags;
    const userRights: Partial<Flags> = {};
    for (const r of wanted) userRights[r] = held[r];
    return toRole(row, userRights);
  });
}
