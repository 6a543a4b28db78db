// The role set named by a path segment that allows an id, ids or `*` (docs/api.md#id-lists): `*` = every role in Reach(u);
// an id outside Reach(u) is 404, whether it exists or not.
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { reach } from '../access/rights.ts';

export async function visibleRoleSet(db: Db, userId: number, selection: '*' | number[]): Promise<number[]> {
  const mine = await reach(db, userId);
  if (selection === '*') return mine;
  const visible = new Set(mine);
  for (const id of selection) if (!visible.has(id)) throw new ApiError('NOT_FOUND', `role ${id} not found`);
  return selection;
}

/** A list filter: absent = no constraint; present = the value must be one of the list (an empty list matches nothing). */
export function inList<T>(list: readonly T[] | undefined, value: T): boolean {
  return list === undefined || list.includes(value);
}
