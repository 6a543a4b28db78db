// SQL of manages relations: upsert, flag updates, lookups, and the cycle test.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { MANAGES_COLUMNS, managesColumns, type Flags, type ManagesRow } from './serialize.ts';
import { inValues } from '../db/in-list.ts';

const SELECT = sql`SELECT ${sql.join(MANAGES_COLUMNS.map((c) => sql.ref(c)))} FROM manages`;

/**
 * Would P -> C close a cycle? Yes when C is P itself or one of P's ancestors. Walks UP from P: a role's ancestors are
 * few even in a wide installation, where C's descendants may be thousands. Call inside the writing transaction.
 */
export async function wouldCycle(db: Db, parentId: number, childId: number): Promise<boolean> {
  if (parentId === childId) return true;
  const found = await db.get(sql<{ found: 1 }>`
    WITH RECURSIVE up(id) AS (
      SELECT CAST(${parentId} AS BIGINT)
      UNION
      SELECT m.parent_role_id FROM manages m JOIN up ON m.child_role_id = up.id
    )
    SELECT 1 AS found FROM up WHERE id = ${childId} LIMIT 1`);
  return found !== undefined;
}

export async function findManagesByPair(db: Db, parentId: number, childId: number): Promise<ManagesRow | undefined> {
  return db.get(sql<ManagesRow>`${SELECT} WHERE parent_role_id = ${parentId} AND child_role_id = ${childId}`);
}

/** Does the stored relation already carry exactly these flags? */
export function sameManagesFlags(row: ManagesRow, flags: Flags): boolean {
  return Object.entries(managesColumns(flags)).every(([column, value]) => row[column as keyof ManagesRow] === value);
}

/** Creates P -> C or updates its flags (the pair is unique); returns the row. */
export async function upsertManages(db: Db, parentId: number, childId: number, flags: Flags): Promise<ManagesRow> {
  const cols = managesColumns(flags);
  await db.run(db.qb.insertInto('manages').values({ parent_role_id: parentId, child_role_id: childId, ...cols })
    .onConflict((oc) => oc.columns(['parent_role_id', 'child_role_id']).doUpdateSet(cols)));
  return (await findManagesByPair(db, parentId, childId))!;
}

export async function updateManagesFlags(db: Db, managesId: number, flags: Flags): Promise<void> {
  await db.run(db.qb.updateTable('manages').set(managesColumns(flags)).where('id', '=', managesId));
}

/** Relations by id, ascending (missing ids skipped). */
export async function findManagesByIds(db: Db, ids: readonly number[]): Promise<ManagesRow[]> {
  return db.all(sql<ManagesRow>`${SELECT} WHERE id ${inValues(ids)} ORDER BY id`);
}

/** Every relation whose parent is one of these roles, ascending by id. */
export async function managesFromParents(db: Db, parentIds: readonly number[]): Promise<ManagesRow[]> {
  return db.all(sql<ManagesRow>`${SELECT} WHERE parent_role_id ${inValues(parentIds)} ORDER BY id`);
}
