// The one rights engine (docs/api.md#rights). Every route asks it; no route computes rights by itself.
//
// Two directions, chosen for speed:
// - single checks ("may u do X on role T / device D?") walk UP from the target along manages relations: the ancestors
//   of one role are few, even when the user sits near the top and reaches thousands of roles;
// - lists ("every role u reaches", "every device u may read") walk DOWN once from the user's member roles.
// Recursive CTEs use UNION, which deduplicates on the whole row (node + state), so shared sub-DAGs are visited once per
// state and cycles could not loop (the graph is a DAG anyway: see roles' cycle check).
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/open.ts';
import { inValues } from '../db/in-list.ts';
import { LruCache } from '../lib/lru-cache.ts';

export const RIGHTS = ['roleManagement', 'userManagement', 'viewManagement', 'deviceManagement', 'reportManagement', 'alarmManagement'] as const;
export type Right = (typeof RIGHTS)[number];
export type RightMode = 'direct' | 'indirect' | 'either';

/** manages column of each right; the role's self flag is `self_<column>` */
export const RIGHT_COLUMN: Record<Right, string> = {
  roleManagement: 'role_management',
  userManagement: 'user_management',
  viewManagement: 'view_management',
  deviceManagement: 'device_management',
  reportManagement: 'report_management',
  alarmManagement: 'alarm_management',
};

const BIT: Record<Right, number> = {
  roleManagement: 1, userManagement: 2, viewManagement: 4, deviceManagement: 8, reportManagement: 16, alarmManagement: 32,
};
// Constant SQL text built from the constant tables above (no input reaches it), hence sql.raw.
const MASK_SQL = (alias: string) => sql.raw(RIGHTS.map((r) => `(${alias}.${RIGHT_COLUMN[r]} * ${BIT[r]})`).join(' | '));
const SELF_MASK_SQL = (alias: string) => sql.raw(RIGHTS.map((r) => `(${alias}.self_${RIGHT_COLUMN[r]} * ${BIT[r]})`).join(' | '));

/** The CTE `reach(id)`: M(u) and every role below it along manages relations. */
const reachCte = (userId: number): RawBuilder<unknown> => reachFrom(sql`SELECT role_id FROM members WHERE user_id = ${userId}`);

/** The CTE `reach(id)` from the roles `start` selects (as column id): they and every role below them. */
const reachFrom = (start: RawBuilder<unknown>): RawBuilder<unknown> => sql`
  reach(id) AS (
    ${start}
    UNION
    SELECT m.child_role_id FROM manages m JOIN reach r ON m.parent_role_id = r.id
  )`;

/** A role as the start of a walk: the role that acts (an event subscription's role, src/access/subscribers.ts). */
export const fromRole = (roleId: number): RawBuilder<unknown> => sql`SELECT CAST(${roleId} AS BIGINT) AS id`;

/** M(u): the roles u is a direct member of, ascending. */
export async function memberRoles(db: Db, userId: number): Promise<number[]> {
  const rows = await db.all(sql<{ role_id: number }>`SELECT role_id FROM members WHERE user_id = ${userId} ORDER BY role_id`);
  return rows.map((r) => r.role_id);
}

/** Reach(u) = M(u) and every role reachable from it along manages relations, ascending. */
export async function reach(db: Db, userId: number): Promise<number[]> {
  const rows = await db.all(sql<{ id: number }>`WITH RECURSIVE ${reachCte(userId)} SELECT id FROM reach ORDER BY id`);
  return rows.map((r) => r.id);
}

/** Is role T in Reach(u)? (upward: T or one of its ancestors is a member role of u) */
export async function reaches(db: Db, userId: number, roleId: number): Promise<boolean> {
  const found = await db.get(sql<{ found: 1 }>`
    WITH RECURSIVE up(id) AS (
      SELECT CAST(${roleId} AS BIGINT)
      UNION
      SELECT m.parent_role_id FROM manages m JOIN up ON m.child_role_id = up.id
    )
    SELECT 1 AS found FROM up JOIN members mb ON mb.role_id = up.id AND mb.user_id = ${userId} LIMIT 1`);
  return found !== undefined;
}

/**
 * The authorizing roles A ∈ M(u) that on their own hold right X over role T (mode direct, indirect or either).
 * Walks up from T with two markers: x = an X relation was crossed (indirect), d = the first relation crossed (into T)
 * carried X (direct through a relation). T's own self flag gives the direct right to every A that reaches T.
 */
export async function authorizersWithRight(db: Db, userId: number, roleId: number, right: Right, mode: RightMode): Promise<number[]> {
  const flag = sql.ref(`m.${RIGHT_COLUMN[right]}`);
  const self = sql.ref(`self_${RIGHT_COLUMN[right]}`);
  const indirect = mode === 'direct' ? 0 : 1;
  const direct = mode === 'indirect' ? 0 : 1;
  const rows = await db.all(sql<{ role_id: number }>`
    WITH RECURSIVE up(id, x, d, first) AS (
      SELECT CAST(${roleId} AS BIGINT), 0, 0, 1
      UNION
      SELECT m.parent_role_id, (up.x | ${flag}), (up.d | (up.first & ${flag})), 0
      FROM manages m JOIN up ON m.child_role_id = up.id
    ),
    target(self) AS (SELECT ${self} FROM roles WHERE id = ${roleId})
    SELECT DISTINCT mb.role_id FROM up
    JOIN members mb ON mb.role_id = up.id AND mb.user_id = ${userId}
    CROSS JOIN target
    WHERE (${indirect} = 1 AND up.x = 1) OR (${direct} = 1 AND (up.d = 1 OR target.self = 1))
    ORDER BY mb.role_id`);
  return rows.map((r) => r.role_id);
}

export async function hasRight(db: Db, userId: number, roleId: number, right: Right, mode: RightMode): Promise<boolean> {
  return (await authorizersWithRight(db, userId, roleId, right, mode)).length > 0;
}

/**
 * Every role in Reach(u) with, per right, whether u holds it (either direct or indirect), as a bit mask per role.
 * Walks down once carrying the OR of the flags crossed: bit X is set on T when some path from M(u) to T crosses an
 * X relation (indirect; that includes the direct-through-a-relation case), or T's own self flag is X.
 */
export async function rightsOverReach(db: Db, userId: number): Promise<Map<number, Record<Right, boolean>>> {
  return rightsBelow(db, sql`SELECT role_id AS id FROM members WHERE user_id = ${userId}`);
}

/** rightsOverReach for the roles `start` selects (as column id) as the authorizing roles (fromRole: one role acting alone). */
export async function rightsBelow(db: Db, start: RawBuilder<unknown>): Promise<Map<number, Record<Right, boolean>>> {
  const rows = await db.all(sql<{ id: number; self: number; mask: number }>`
    WITH RECURSIVE down(id, mask) AS (
      SELECT s.id, 0 FROM (${start}) s
      UNION
      SELECT m.child_role_id, down.mask | ${MASK_SQL('m')} FROM manages m JOIN down ON m.parent_role_id = down.id
    )
    SELECT down.id AS id, (${SELF_MASK_SQL('r')}) AS self, down.mask AS mask
    FROM down JOIN roles r ON r.id = down.id`);
  const bits = new Map<number, number>();
  for (const row of rows) bits.set(row.id, (bits.get(row.id) ?? 0) | row.mask | row.self);
  const out = new Map<number, Record<Right, boolean>>();
  for (const [id, mask] of bits) out.set(id, Object.fromEntries(RIGHTS.map((r) => [r, (mask & BIT[r]) !== 0])) as Record<Right, boolean>);
  return out;
}

// ---------------------------------------------------------------- devices

/** What u may do with one device: the union over the monitors relations (R, D) with R ∈ Reach(u). */
export interface DeviceAccess {
  deviceId: number;
  canRead: boolean;
  monitorManagement: boolean;
  /** readable property names (reads ∪ edits); meaningless when monitorManagement (everything is readable) */
  reads: Set<string>;
  /** editable property names; meaningless when monitorManagement (everything is editable) */
  edits: Set<string>;
}

interface MonitorGrant { device_id: number; monitor_management: number; reads: string; edits: string; authorizer: number }

function emptyAccess(deviceId: number): DeviceAccess {
  return { deviceId, canRead: false, monitorManagement: false, reads: new Set(), edits: new Set() };
}

// reads/edits texts repeat across relations ('[]' above all): parse each distinct short text once. The arrays are
// shared, so they are only ever iterated. Bounded in entries and in entry size (at most ~10,000 x 256 characters).
const parsedLists = new LruCache<string, readonly string[]>(10_000);
function propertyList(text: string): readonly string[] {
  if (text.length > 256) return JSON.parse(text) as string[];
  let list = parsedLists.get(text);
  if (list === undefined) parsedLists.set(text, list = JSON.parse(text) as string[]);
  return list;
}

function addGrant(access: DeviceAccess, g: MonitorGrant): void {
  access.canRead = true;
  if (g.monitor_management === 1) access.monitorManagement = true;
  for (const p of propertyList(g.reads)) access.reads.add(p);
  for (const p of propertyList(g.edits)) { access.reads.add(p); access.edits.add(p); }
}

/** The monitors relations of device D reachable by u, each with the member role (authorizer) it is reached through. */
async function deviceGrants(db: Db, userId: number, deviceId: number): Promise<MonitorGrant[]> {
  return db.all(sql<MonitorGrant>`
    WITH RECURSIVE up(role_id, monitors_id) AS (
      SELECT role_id, id FROM monitors WHERE device_id = ${deviceId}
      UNION
      SELECT m.parent_role_id, up.monitors_id FROM manages m JOIN up ON m.child_role_id = up.role_id
    )
    SELECT DISTINCT mo.device_id, mo.monitor_management, mo.reads, mo.edits, mb.role_id AS authorizer
    FROM up
    JOIN members mb ON mb.role_id = up.role_id AND mb.user_id = ${userId}
    JOIN monitors mo ON mo.id = up.monitors_id`);
}

export async function deviceAccess(db: Db, userId: number, deviceId: number): Promise<DeviceAccess> {
  const access = emptyAccess(deviceId);
  for (const g of await deviceGrants(db, userId, deviceId)) addGrant(access, g);
  return access;
}

/** The authorizing roles A ∈ M(u) that have monitorManagement on D through a relation (R, D) with R ∈ Reach(A). */
export async function authorizersWithMonitorManagement(db: Db, userId: number, deviceId: number): Promise<number[]> {
  const set = new Set<number>();
  for (const g of await deviceGrants(db, userId, deviceId)) if (g.monitor_management === 1) set.add(g.authorizer);
  return [...set].sort((a, b) => a - b);
}

/**
 * Access to every device u may read (or to the given ids only; only ids above `afterId`), ascending by id. One
 * downward walk from M(u), then the monitors relations of the reached roles.
 */
export async function readableDevices(db: Db, userId: number, onlyIds?: readonly number[], afterId = -1): Promise<DeviceAccess[]> {
  return devicesBelow(db, reachCte(userId), onlyIds, afterId);
}

/** readableDevices for the roles `start` selects (fromRole: what one role may read). */
export async function readableDevicesBelow(db: Db, start: RawBuilder<unknown>, onlyIds: readonly number[]): Promise<DeviceAccess[]> {
  return devicesBelow(db, reachFrom(start), onlyIds, -1);
}

/** Every device one role may read (through Reach(R)), ascending by id: what an alarm rule of R may watch. */
export async function readableDevicesOfRole(db: Db, roleId: number): Promise<DeviceAccess[]> {
  return devicesBelow(db, reachFrom(fromRole(roleId)), undefined, -1);
}

async function devicesBelow(db: Db, reachSql: RawBuilder<unknown>, onlyIds: readonly number[] | undefined, afterId: number): Promise<DeviceAccess[]> {
  // Without an id list, CROSS JOIN pins the order: walk Reach(u) first, then seek each role's relations through
  // UNIQUE(role_id, device_id). Left alone the planner may scan every monitors relation in device order, O(all relations)
  // for every user. With an id list the planner's device-first plan is the right one.
  // (CROSS JOIN as an order hint is SQLite's idiom; PostgreSQL's planner chooses the role-first plan by itself.)
  const join = onlyIds ? sql`JOIN monitors mo ON mo.role_id = reach.id AND mo.device_id ${inValues(onlyIds)}`
    : db.backend === 'sqlite' ? sql`CROSS JOIN monitors mo ON mo.role_id = reach.id` : sql`JOIN monitors mo ON mo.role_id = reach.id`;
  const rows = await db.all(sql<MonitorGrant>`
    WITH RECURSIVE ${reachSql}
    SELECT mo.device_id, mo.monitor_management, mo.reads, mo.edits, 0 AS authorizer
    FROM reach ${join}
    ${afterId >= 0 ? sql`WHERE mo.device_id > ${afterId}` : sql``}
    ORDER BY mo.device_id`);
  const out: DeviceAccess[] = [];
  let current: DeviceAccess | undefined;
  for (const row of rows) {
    if (!current || current.deviceId !== row.device_id) out.push(current = emptyAccess(row.device_id));
    addGrant(current, row);
  }
  return out;
}

// ---------------------------------------------------------------- readable sets, cached per node

/**
 * The readable set of each user, kept in memory with the rights version it was computed under (sql/0012: a value the
 * database changes in the same transaction as every write to members, manages or monitors). A set is used only while
 * the database still holds its version, read in the caller's transaction or snapshot before anything else: so a cached
 * set is never older than what the caller's own reads see, on this node or any other. Bounded by devices over all sets.
 */
const READABLE_SETS = Symbol('readable sets');
const READABLE_SETS_MAX_USERS = 1024;
/** devices (DeviceAccess objects) over all cached sets: about 200 bytes each, a few tens of MB at most */
const READABLE_SETS_MAX_DEVICES = 100_000;

interface ReadableSet { version: string; accesses: readonly DeviceAccess[] }

function readableSets(db: Db): LruCache<number, ReadableSet> {
  let sets = db.memo.get(READABLE_SETS) as LruCache<number, ReadableSet> | undefined;
  if (!sets) {
    sets = new LruCache<number, ReadableSet>(READABLE_SETS_MAX_USERS, undefined, { of: (set) => set.accesses.length + 1, max: READABLE_SETS_MAX_DEVICES });
    db.memo.set(READABLE_SETS, sets);
  }
  return sets;
}

/** The database's rights version as a statement's column: a caller that reads it with its own rows saves a round trip. */
export const RIGHTS_VERSION_COLUMN = sql<number | string>`(SELECT version FROM rights_version)`;

/**
 * The database's rights version, read in the caller's snapshot (or given: read by the caller with RIGHTS_VERSION_COLUMN,
 * in its snapshot, before it asks for any access), and this node's kept set of the user.
 */
async function keptSet(db: Db, userId: number, given?: number | string): Promise<{ version: string; kept: ReadableSet | undefined }> {
  const version = given ?? (await db.get(sql<{ version: number | string }>`SELECT ${RIGHTS_VERSION_COLUMN} AS version`))?.version;
  return { version: String(version), kept: readableSets(db).get(userId) };
}

/**
 * Access to every device u may read, ascending by id (readableDevices without arguments), from this node's cache when
 * the rights have not changed since it was computed. The array and its objects are shared: read them, never change them.
 */
export async function allReadableDevices(db: Db, userId: number): Promise<readonly DeviceAccess[]> {
  const { version, kept } = await keptSet(db, userId);
  if (kept?.version === version) return kept.accesses;
  const accesses = await readableDevices(db, userId);
  readableSets(db).set(userId, { version, accesses });
  return accesses;
}

/**
 * readableDevices(db, userId, onlyIds, afterId) answered from the cached readable set when there is a current one (or
 * when the whole set is asked for, which then fills the cache); otherwise by the narrowed walk.
 */
export async function readableDevicesOf(db: Db, userId: number, onlyIds?: readonly number[], afterId = -1): Promise<readonly DeviceAccess[]> {
  if (onlyIds === undefined) {
    const all = await allReadableDevices(db, userId);
    return afterId >= 0 ? all.slice(firstAtOrAbove(all, afterId + 1)) : all;
  }
  const { version, kept } = await keptSet(db, userId);
  if (kept?.version !== version) return readableDevices(db, userId, onlyIds, afterId);
  const all = kept.accesses;
  const out: DeviceAccess[] = [];
  for (const id of [...new Set(onlyIds)].filter((id) => id > afterId).sort((a, b) => a - b)) {
    const at = firstAtOrAbove(all, id);
    if (at < all.length && all[at]!.deviceId === id) out.push(all[at]!);
  }
  return out;
}

/**
 * Single devices' access, kept per node like the readable sets: under the rights version read in the caller's
 * transaction or snapshot, so an entry is used only while no write to members, manages or monitors happened since it
 * was made (on any node). A device that does not exist, or that u cannot read, is kept as such: creating or deleting a
 * device writes its monitors relations, which changes the version too. The objects are shared: read them, never change them.
 */
const DEVICE_ACCESSES = Symbol('device accesses');
const DEVICE_ACCESSES_MAX = 20_000;

interface KeptAccesses { version: string; byUserDevice: LruCache<string, DeviceAccess> }

/**
 * Access of u to each of the given devices (canRead false for one u cannot read or that does not exist): from the
 * user's kept readable set when it is current, else from the kept single accesses, else walked — up to
 * `perDeviceWalks` devices one upward walk each (deviceAccess), more by one narrowed downward walk (readableDevices).
 */
export async function deviceAccesses(db: Db, userId: number, ids: readonly number[], perDeviceWalks: number, rightsVersion?: number | string): Promise<Map<number, DeviceAccess>> {
  const { version, kept } = await keptSet(db, userId, rightsVersion);
  const out = new Map<number, DeviceAccess>();
  if (kept?.version === version) {
    const all = kept.accesses;
    for (const id of ids) {
      const found = all[firstAtOrAbove(all, id)];
      out.set(id, found?.deviceId === id ? found : emptyAccess(id));
    }
    return out;
  }
  let cache = db.memo.get(DEVICE_ACCESSES) as KeptAccesses | undefined;
  if (cache?.version !== version) {
    cache = { version, byUserDevice: new LruCache<string, DeviceAccess>(DEVICE_ACCESSES_MAX) };
    db.memo.set(DEVICE_ACCESSES, cache);
  }
  const missing: number[] = [];
  for (const id of new Set(ids)) {
    const hit = cache.byUserDevice.get(`${userId}/${id}`);
    if (hit === undefined) missing.push(id);
    else out.set(id, hit);
  }
  if (missing.length === 0) return out;
  const walked = new Map<number, DeviceAccess>();
  if (missing.length <= perDeviceWalks) for (const id of missing) walked.set(id, await deviceAccess(db, userId, id));
  else for (const access of await readableDevices(db, userId, missing)) walked.set(access.deviceId, access);
  for (const id of missing) {
    const access = walked.get(id) ?? emptyAccess(id);
    cache.byUserDevice.set(`${userId}/${id}`, access);
    out.set(id, access);
  }
  return out;
}

/** The index of the first access whose device id is >= id (accesses ascending by id). */
function firstAtOrAbove(accesses: readonly DeviceAccess[], id: number): number {
  let lo = 0;
  let hi = accesses.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (accesses[mid]!.deviceId < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function canReadProperty(access: DeviceAccess, property: string): boolean {
  return access.monitorManagement || access.reads.has(property);
}

export function canEditProperty(access: DeviceAccess, property: string): boolean {
  return access.monitorManagement || access.edits.has(property);
}
