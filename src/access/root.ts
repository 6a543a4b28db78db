// Root-role membership: the one right outside the manages graph (user tiers, creating licenses). Direct membership
// of role 1 only — reaching root through a relation is impossible (root has no parent).
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';

/** The root role: created on first start, never deleted, never managed by another role. */
export const ROOT_ROLE_ID = 1;

export async function isRootMember(db: Db, userId: number): Promise<boolean> {
  const found = await db.get(sql<{ found: 1 }>`SELECT 1 AS found FROM members WHERE ${rootMemberRow(userId)}`);
  return found !== undefined;
}

/** The condition on `members` of the user's root membership (for a statement that asks it beside other things). */
export function rootMemberRow(userId: number) {
  return sql<boolean>`role_id = ${ROOT_ROLE_ID} AND user_id = ${userId}`;
}
