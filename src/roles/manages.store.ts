// SQL of manages relations: upsert, flag updates, lookups, and the cycle test.
import type { Db } from '../db/open.ts';
import { MANAGES_COLUMNS, managesColumns, type Flags, type ManagesRow } from './serialize.ts';
import { inJson, listParam } from '../db/in-list.ts';

const SELECT = `SELECT ${MANAGES_COLUMNS.join(', ')} FROM manages`;

/**
 * Would P -> C close a cycle? Yes when C is P itself or one of P's ancestors. Walks UP from P: a role's ancestors are
 * few even in a wide installation, where C's descendants may be thousands. Call inside the writing transaction.
 */
export function wouldCycle(db: Db, parentId: number, childId: number): boolean {
  if (parentId === childId) return true;
  return db.prepare(`
    WITH RECURSIVE up(id) AS (
      SELECT :parentId
      UNION
      SELECT m.parent_role_id FROM manages m JOIN up ON m.child_role_id = up.id
    )
    SELECT 1 FROM up WHERE id = :childId LIMIT 1`).get({ parentId, childId }) !== undefined;
}

export function findManagesByPair(db: Db, parentId: number, childId: number): ManagesRow | undefined {
  return db.prepare(`${SELECT} WHERE parent_role_id = ? AND child_role_id = ?`).get(parentId, childId) as ManagesRow | undefined;
}

/** Creates P -> C or updates its flags (the pair is unique); returns the row. */
export function upsertManages(db: Db, parentId: number, childId: number, flags: Flags): ManagesRow {
  const cols = managesColumns(flags);
  db.run(db.qb.insertInto('manages').values({ parent_role_id: parentId, child_role_id: childId, ...cols })
    .onConflict((oc) => oc.columns(['parent_role_id', 'child_role_id']).doUpdateSet(cols)));
  return findManagesByPair(db, parentId, childId)!;
}

export function updateManagesFlags(db: Db, managesId: number, flags: Flags): void {
  db.run(db.qb.updateTable('manages').set(managesColumns(flags)).where('id', '=', managesId));
}

/** Relations by id, ascending (missing ids skipped). */
export function findManagesByIds(db: Db, ids: readonly number[]): ManagesRow[] {
  return db.prepare(`${SELECT} WHERE id ${inJson()} ORDER BY id`).all(listParam(ids)) as ManagesRow[];
}

/** Every relation whose parent is one of these roles, ascending by id. */
export function managesFromParents(db: Db, parentIds: readonly number[]): ManagesRow[] {
  return db.prepare(`${SELECT} WHERE parent_role_id ${inJson()} ORDER BY id`)
    .all(listParam(parentIds)) as ManagesRow[];
}
