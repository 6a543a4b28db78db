// Member relations (docs/api.md#members): upsert by e-mail (creating unknown users), query (and its deprecated GET), PUT by id,
// and delete (own membership allowed; never the last member of the root role).
import type { RouteContext } from '../context/route-context.ts';
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { generatePassword, hashSecret } from '../auth/passwords.ts';
import { emailKey, findUserByEmail, insertUser } from '../auth/users.store.ts';
import { rightsOverReach } from '../access/rights.ts';
import { requireRights, requireVisibleRole, rightsHold, type RightOver } from '../access/guards.ts';
import { ROOT_ROLE_ID } from '../access/root.ts';
import { countMembers, deleteMembers, findMembersByIds, membersOfRoles, upsertMember } from './members.store.ts';
import { toDeletionInfo } from './cascade.ts';
import { inList, visibleRoleSet } from './path-roles.ts';
import { markDeprecated } from '../http/deprecation.ts';
import { oneOrMany, relationsOfRole } from '../http/validate.ts';
import { toMember, type MemberRow } from './serialize.ts';
import { recordAudit } from '../audit/record.ts';
import {
  DeletionResponse, EmptyBody, MemberIdParams, MemberListQuery, MemberQueryBody, MemberResponse, MemberUpsertQuery, MembersResponse,
  RoleIdParams, RoleIdsParams,
} from './roles.schemas.ts';

const MEMBER_SHAPE = 'Member = { id, roleId, userEmail }.';

export function registerMemberRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  /** "direct or indirect userManagement over R, or indirect roleManagement over R" (one condition with two ways to meet it) */
  const memberRule = (roleId: number): RightOver[][] => [[
    { right: 'userManagement', roleId, mode: 'either' },
    { right: 'roleManagement', roleId, mode: 'indirect' },
  ]];
  /** `h`: db, or the transaction handle inside a unit */
  async function authorizeRole(h: Db, userId: number, roleId: number): Promise<void> {
    await requireVisibleRole(h, userId, roleId);
    await requireRights(h, userId, memberRule(roleId));
  }

  /** The member relations `ids` of role R, in request order; 404 for an id that is not a member relation of R. */
  async function relationsOf(h: Db, roleId: number, ids: number[]): Promise<(MemberRow & { user_id: number })[]> {
    return relationsOfRole(await findMembersByIds(h, ids), ids, roleId, (r) => r.role_id, 'member relation');
  }

  api.route({
    method: 'put', path: '/v1/role/:roleId/member', tag: 'roles', summary: 'Add a user to a role (creating the user when unknown)',
    description: 'Body exactly {}. Needs direct or indirect userManagement over the role, or indirect roleManagement. '
      + 'An unknown userEmail creates the user: with `password` when given, otherwise with a random password written once to '
      + 'the log (warn level) for the operator to hand over; `password` never changes an existing user\'s password. '
      + `Answers { member } (the existing relation when there is one). ${MEMBER_SHAPE}`,
    auth: auth.requireActor, params: RoleIdParams, query: MemberUpsertQuery, body: EmptyBody,
    responses: { 200: { description: 'the member relation', schema: MemberResponse } },
  }, async (c, { params, query }) => {
    const userId = c.var.actor.userId;
    const roleId = params.roleId;
    await authorizeRole(db, userId, roleId);
    let newUser: { hash: string; generated?: string } | undefined;
    if (!(await findUserByEmail(db, query.userEmail))) {
      const generated = query.password === undefined ? generatePassword() : undefined;
      newUser = { hash: await hashSecret(query.password ?? generated!), ...(generated ? { generated } : {}) };
    }
    const { row, createdId } = await db.write(async (tx) => {
      await authorizeRole(tx, userId, roleId);
      // the e-mail may have been registered while the hash was computed: then that user is the one added
      const createdId = newUser ? await insertUser(tx, query.userEmail, newUser.hash, deps.now()) : undefined;
      const user = (await findUserByEmail(tx, query.userEmail))!;
      const row = await upsertMember(tx, roleId, user.id);
      // an existing relation is answered as it is: nothing changed, nothing to record
      if (row.created) {
        await recordAudit(tx, c, deps, {
          action: 'member.put', target: { kind: 'member', id: row.id }, roleId, userId: user.id,
          changes: { roleId: { after: roleId }, userEmail: { after: row.email }, ...(createdId !== undefined ? { userCreated: true } : {}) },
        });
      }
      return { row, createdId };
    });
    if (createdId !== undefined) {
      deps.log.info('user created by a member relation', { userId: createdId, roleId, byUserId: userId });
      // The "random password that is logged once" of docs/api.md#members: the only way this user can ever log in,
      // since the appliance sends no e-mail. Nothing else secret goes in the line; callers who want none pass `password`.
      if (newUser?.generated) deps.log.warn('generated password for a new user (shown once)', { userId: createdId, email: query.userEmail, password: newUser.generated });
    }
    return c.json({ member: toMember(row) });
  });

  const queryDescription = 'Member relations of the path\'s roles (an id, comma-separated ids, or * = every role the caller is '
    + 'a member of, directly or indirectly) over which the caller holds direct or indirect userManagement, plus the caller\'s '
    + 'own; ascending by id, matching every given filter (lists match any value; an empty list matches nothing; userEmail '
    + `is case-insensitive). A path role outside the caller's reach is 404. ${MEMBER_SHAPE}`;

  async function queryMembers(userId: number, selection: '*' | number[], f: { id?: number[]; roleId?: number[]; userEmail?: string[] }) {
    const roles = await visibleRoleSet(db, userId, selection);
    const rights = await rightsOverReach(db, userId);
    const emails = f.userEmail?.map(emailKey);
    return (await membersOfRoles(db, roles))
      .filter((m) => m.user_id === userId || rights.get(m.role_id)?.userManagement === true)
      .filter((m) => inList(f.id, m.id) && inList(f.roleId, m.role_id) && inList(emails, emailKey(m.email)))
      .map(toMember);
  }

  api.route({
    method: 'post', path: '/v1/role/:roleId/member/query', tag: 'roles', summary: 'Query member relations',
    description: `Body { filter?: { id?: int[], roleId?: int[], userEmail?: string[] } } ({} or no body: no filter). Answers { member: Member[] }. ${queryDescription}`,
    auth: auth.requireActor, params: RoleIdsParams, body: MemberQueryBody,
    responses: { 200: { description: 'the member relations', schema: MembersResponse } },
  }, async (c, { params, body }) => c.json({ member: await queryMembers(c.var.actor.userId, params.roleId, body?.filter ?? {}) }));

  api.route({
    method: 'get', path: '/v1/role/:roleId/member', tag: 'roles', summary: 'Collect member relations (deprecated: use POST …/member/query)',
    description: `Query parameters id, roleId, userEmail (repeated or comma-separated). ${queryDescription} Adds `
      + '`Deprecation: true` and `Link: </v1/role/{roleId}/member/query>; rel="successor-version"`.',
    deprecated: true, auth: auth.requireActor, params: RoleIdsParams, query: MemberListQuery,
    responses: { 200: { description: 'the member relations', schema: MembersResponse } },
  }, async (c, { params, query }) => {
    const members = await queryMembers(c.var.actor.userId, params.roleId, query);
    markDeprecated(c, `/v1/role/${c.req.param('roleId')}/member/query`);
    return c.json({ member: members });
  });

  api.route({
    method: 'put', path: '/v1/role/:roleId/member/:memberId', tag: 'roles', summary: 'Confirm member relations by id',
    description: 'Body exactly {} (a member relation has nothing to change). Same right as adding a member. Answers { member }: '
      + 'one object for one id, an array in request order for comma-separated ids; an id that is not a member relation of '
      + `this role is 404. ${MEMBER_SHAPE}`,
    auth: auth.requireActor, params: MemberIdParams, body: EmptyBody,
    responses: { 200: { description: 'the member relations', schema: MemberResponse } },
  }, async (c, { params }) => {
    await authorizeRole(db, c.var.actor.userId, params.roleId);
    const out = (await relationsOf(db, params.roleId, params.memberId)).map(toMember);
    return c.json({ member: oneOrMany(params.memberId.several, out) });
  });

  api.route({
    method: 'delete', path: '/v1/role/:roleId/member/:memberId', tag: 'roles', summary: 'Remove member relations',
    description: 'Allowed with the right needed to add a member, or for the caller\'s own membership (without that right, any '
      + 'other id is 403 whether it exists or not). Removing the last member of the root role is 409 LAST_ROOT_MEMBER. '
      + 'Answers { deletedNodeIds: [], deletedRelationIds: [memberId], deleted: {...} } (the shape of a manages deletion); '
      + 'for comma-separated ids an array of those in request order. All or nothing.',
    auth: auth.requireActor, params: MemberIdParams,
    responses: { 200: { description: 'what was deleted', schema: DeletionResponse } },
  }, async (c, { params }) => {
    const userId = c.var.actor.userId;
    const { roleId, memberId } = params;
    const infos = await db.write(async (tx) => {
      await requireVisibleRole(tx, userId, roleId);
      if (!(await rightsHold(tx, userId, memberRule(roleId)))) {
        // only the caller's own memberships; the 403 does not depend on whether another id exists
        const own = new Set((await findMembersByIds(tx, memberId)).filter((m) => m.role_id === roleId && m.user_id === userId).map((m) => m.id));
        if (!memberId.every((id) => own.has(id))) await requireRights(tx, userId, memberRule(roleId));
      }
      await relationsOf(tx, roleId, memberId);
      if (roleId === ROOT_ROLE_ID && await countMembers(tx, roleId) <= memberId.length) {
        throw new ApiError('LAST_ROOT_MEMBER', 'the last member of the root role cannot be removed');
      }
      const rows = await relationsOf(tx, roleId, memberId);
      await deleteMembers(tx, memberId);
      await recordAudit(tx, c, deps, rows.map((row) => ({
        action: 'member.delete' as const, target: { kind: 'member' as const, id: row.id }, roleId, userId: row.user_id,
        changes: { roleId: { before: roleId }, userEmail: { before: row.email } },
      })));
      return memberId.map((id) => toDeletionInfo({ roles: [], devices: [], manages: [], members: [id], monitors: [] }));
    });
    return c.json(oneOrMany(memberId.several, infos));
  });
}
