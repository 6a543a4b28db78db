// Rights over customers (ours): a customer belongs to a role. Creating one needs roleManagement over the role (direct
// or indirect) or membership of the root role; seeing one needs its role in Reach(u) or root membership. Handing out
// licenses (orders) is for root members only: the licenses are theirs.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { hasRight, reach, reaches } from './rights.ts';
import { isRootMember } from './root.ts';

/** 404 when the role is invisible (or missing), 403 without the right. */
export function requireCustomerCreation(db: Db, userId: number, roleId: number): void {
  if (isRootMember(db, userId)) {
    if (db.prepare('SELECT 1 FROM roles WHERE id = ?').get(roleId) === undefined) throw new ApiError('NOT_FOUND', `role ${roleId} not found`);
    return;
  }
  if (!reaches(db, userId, roleId)) throw new ApiError('NOT_FOUND', `role ${roleId} not found`);
  if (!hasRight(db, userId, roleId, 'roleManagement', 'either')) {
    throw new ApiError('FORBIDDEN', `missing right: direct or indirect roleManagement over role ${roleId} (or membership of the root role)`);
  }
}

/** The roles whose customers u may see: Reach(u) (a root member reaches every role). */
export function customerRoles(db: Db, userId: number): number[] {
  return reach(db, userId);
}

/** May u see the customers of this role? */
export function canSeeCustomersOf(db: Db, userId: number, roleId: number): boolean {
  return reaches(db, userId, roleId) || isRootMember(db, userId);
}

export function requireOrderRights(db: Db, userId: number): void {
  if (!isRootMember(db, userId)) throw new ApiError('FORBIDDEN', 'creating orders needs membership of the root role');
}
