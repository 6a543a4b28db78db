// Rights over customers (ours): a customer belongs to a role. Creating one needs roleManagement over the role (direct
// or indirect) or membership of the root role; seeing one needs its role in Reach(u) or root membership. Handing out
// licenses (orders) is for root members only: the licenses are theirs.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { hasRight, reach, reaches } from './rights.ts';
import { isRootMember } from './root.ts';

/** 404 when the role is invisible (or missing), 403 without the right. */
export async function requireCustomerCreation(db: Db, userId: number, roleId: number): Promise<void> {
  if (await isRootMember(db, userId)) {
    const role = await db.get(sql<{ found: 1 }>`SELECT 1 AS found FROM roles WHERE id = ${roleId}`);
    if (role === undefined) throw new ApiError('NOT_FOUND', `role ${roleId} not found`);
    return;
  }
  if (!(await reaches(db, userId, roleId))) throw new ApiError('NOT_FOUND', `role ${roleId} not found`);
  if (!(await hasRight(db, userId, roleId, 'roleManagement', 'either'))) {
    throw new ApiError('FORBIDDEN', `missing right: direct or indirect roleManagement over role ${roleId} (or membership of the root role)`);
  }
}

/** The roles whose customers u may see: Reach(u) (a root member reaches every role). */
export async function customerRoles(db: Db, userId: number): Promise<number[]> {
  return reach(db, userId);
}

/** May u see the customers of this role? */
export async function canSeeCustomersOf(db: Db, userId: number, roleId: number): Promise<boolean> {
  return (await reaches(db, userId, roleId)) || (await isRootMember(db, userId));
}

export async function requireOrderRights(db: Db, userId: number): Promise<void> {
  if (!(await isRootMember(db, userId))) throw new ApiError('FORBIDDEN', 'creating orders needs membership of the root role');
}
