// Root-role membership: the one right outside the manages graph (user tiers, creating licenses). Direct membership
// of role 1 only — reaching root through a relation is impossible (root has no parent).
import type { Db } from '../db/open.ts';

/** The root role: created on first start, never deleted, never managed by another role. */
export const ROOT_ROLE_ID = 1;

export function isRootMember(db: Db, userId: number): boolean {
  return db.prepare('SELECT 1 FROM members WHERE role_id = ? AND user_id = ?').get(ROOT_ROLE_ID, userId) !== undefined;
}
