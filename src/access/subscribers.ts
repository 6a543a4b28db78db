// Rights of event subscriptions (docs/api.md#event-rights). A subscription belongs to a role and acts as a member of
// that role alone would: it receives what the role may read, decided when each delivery is made. Managing a role's
// subscriptions takes the right that adding a member to it takes: a subscription is a machine member that hears of
// what the role's members could read, and whoever may add a member could hand that member's view to any system.
import { sql } from 'kysely';
import type { Db } from '../db/open.ts';
import { inValues } from '../db/in-list.ts';
import { requireRights, requireVisibleRole, type RightOver } from './guards.ts';
import { fromRole, reaches, readableDevicesBelow, rightsBelow, type DeviceAccess } from './rights.ts';
import { ApiError } from '../http/errors.ts';
import { isRootMember, ROOT_ROLE_ID } from './root.ts';

/** The rule of members, as for PUT /v1/role/{R}/member: direct or indirect userManagement, or indirect roleManagement. */
const manageRule = (roleId: number): RightOver[] => [
  { right: 'userManagement', roleId, mode: 'either' },
  { right: 'roleManagement', roleId, mode: 'indirect' },
];

/** 404 unless the role is in Reach(u); 403 unless u may manage its subscriptions. */
export async function requireSubscriptionManagement(db: Db, userId: number, roleId: number): Promise<void> {
  await requireVisibleRole(db, userId, roleId);
  await requireRights(db, userId, [manageRule(roleId)]);
}

/**
 * For a route on one subscription: 404 (the same as for an id that does not exist) unless its role is in Reach(u),
 * then 403 unless u may manage the role's subscriptions. `roleId` undefined: no such subscription.
 */
export async function requireSubscription(db: Db, userId: number, id: number, roleId: number | undefined): Promise<void> {
  if (roleId === undefined || !(await reaches(db, userId, roleId))) throw new ApiError('NOT_FOUND', `webhook ${id} not found`);
  await requireRights(db, userId, [manageRule(roleId)]);
}

/** The roles whose subscriptions u may see and manage, ascending (root members: every role). */
export async function subscriptionRoles(db: Db, userId: number): Promise<number[]> {
  const rights = await rightsBelow(db, sql`SELECT role_id AS id FROM members WHERE user_id = ${userId}`);
  const root = await isRootMember(db, userId);
  const out: number[] = [];
  for (const [roleId, r] of rights) if (root || r.userManagement) out.push(roleId);
  // indirect roleManagement: the roles below a relation flagged roleManagement (rightsBelow's mask also counts self flags)
  const indirect = await indirectRoleManagement(db, userId);
  for (const id of indirect) if (!out.includes(id)) out.push(id);
  return out.sort((a, b) => a - b);
}

/** Roles over which u holds indirect roleManagement: below a manages relation flagged roleManagement. */
async function indirectRoleManagement(db: Db, userId: number): Promise<number[]> {
  const rows = await db.all(sql<{ id: number }>`
    WITH RECURSIVE down(id, x) AS (
      SELECT role_id, 0 FROM members WHERE user_id = ${userId}
      UNION
      SELECT m.child_role_id, (down.x | m.role_management) FROM manages m JOIN down ON m.parent_role_id = down.id
    )
    SELECT DISTINCT id FROM down WHERE x = 1`);
  return rows.map((r) => r.id);
}

/** What a subscription's role may read now, for the events of one delivery batch. */
export interface SubscriberRights {
  /** the root role: receives every event */
  root: boolean;
  /** Reach(R): the role and every role below it */
  reach: ReadonlySet<number>;
  /** roles over which R holds userManagement (direct or indirect): whose member relations it may read */
  members: ReadonlySet<number>;
  /** access of R to the devices asked about */
  devices: ReadonlyMap<number, DeviceAccess>;
  /** the licenses asked about that are linked to a controller R may read */
  licenses: ReadonlySet<string>;
}

/** The rights of role R over what one batch of events is about (devices and licenses by id). */
export async function subscriberRights(db: Db, roleId: number, deviceIds: readonly number[], licenseIds: readonly string[]): Promise<SubscriberRights> {
  const root = roleId === ROOT_ROLE_ID;
  // the root role reads everything: nothing to ask
  if (root) return { root, reach: new Set(), members: new Set(), devices: new Map(), licenses: new Set() };
  const rights = await rightsBelow(db, fromRole(roleId));
  const members = new Set<number>();
  for (const [id, r] of rights) if (r.userManagement) members.add(id);
  const links = licenseIds.length === 0 ? [] : await db.all(sql<{ license_id: string; device_id: number }>`
    SELECT license_id, device_id FROM license_datalink WHERE license_id ${inValues(licenseIds)}`);
  const asked = [...new Set([...deviceIds, ...links.map((l) => l.device_id)])];
  const devices = new Map((asked.length === 0 ? [] : await readableDevicesBelow(db, fromRole(roleId), asked)).map((a) => [a.deviceId, a]));
  const licenses = new Set(links.filter((l) => devices.get(l.device_id)?.canRead).map((l) => l.license_id));
  return { root, reach: new Set(rights.keys()), members, devices, licenses };
}
