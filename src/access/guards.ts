// The rights engine as request guards: each answers "may u do this?" by asking src/access/rights.ts and throws the
// documented error (docs/api.md#errors) when not. Visibility comes first (404: never reveal that an invisible role
// exists), then the right (403 naming it). Rules with one condition take the union of authorizing roles; rules with
// two conditions joined by "and" intersect them, because ONE authorizing role must meet both (docs/api.md#authorizing-roles).
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { authorizersWithRight, reaches, type Right, type RightMode } from './rights.ts';

/** One condition of a rule: right X over role T in a mode. */
export interface RightOver {
  right: Right;
  roleId: number;
  mode: RightMode;
}

const MODE_TEXT: Record<RightMode, string> = { direct: 'direct', indirect: 'indirect', either: 'direct or indirect' };

export function describeRight(c: RightOver): string {
  return `${MODE_TEXT[c.mode]} ${c.right} over role ${c.roleId}`;
}

/** 404 unless role T is in Reach(u). A role that does not exist is reported exactly like an invisible one. */
export async function requireVisibleRole(db: Db, userId: number, roleId: number): Promise<void> {
  if (!(await reaches(db, userId, roleId))) throw new ApiError('NOT_FOUND', `role ${roleId} not found`);
}

/** The authorizing roles meeting ANY of the conditions (a rule "X or Y"). */
export async function authorizersForAny(db: Db, userId: number, conditions: readonly RightOver[]): Promise<number[]> {
  const set = new Set<number>();
  for (const c of conditions) for (const a of await authorizersWithRight(db, userId, c.roleId, c.right, c.mode)) set.add(a);
  return [...set].sort((a, b) => a - b);
}

/**
 * Throws 403 unless one authorizing role meets every clause; a clause holds when any of its conditions holds
 * (`[[A, B], [C]]` = "(A or B) and C", met by one and the same authorizing role).
 */
export async function requireRights(db: Db, userId: number, clauses: readonly (readonly RightOver[])[]): Promise<void> {
  if (!(await rightsHold(db, userId, clauses))) {
    const text = clauses.map((clause) => clause.map(describeRight).join(' or ')).join(', and through the same member role, ');
    throw new ApiError('FORBIDDEN', `missing right: ${text}`);
  }
}

/** Does one authorizing role meet every clause? (see requireRights) */
export async function rightsHold(db: Db, userId: number, clauses: readonly (readonly RightOver[])[]): Promise<boolean> {
  let common: Set<number> | undefined;
  for (const clause of clauses) {
    const these = new Set(await authorizersForAny(db, userId, clause));
    common = common ? new Set([...common].filter((a) => these.has(a))) : these;
    if (common.size === 0) return false;
  }
  return common !== undefined && common.size > 0;
}
