// Manages relations (docs/api.md#manages): upsert with or without the child's join password, query (and its deprecated GET),
// flag updates by id, and delete with the cascade.
import type { RouteContext } from '../context/route-context.ts';
import type { Db } from '../db/open.ts';
import { ApiError } from '../http/errors.ts';
import { dummyHash, rehashed, verifySecret } from '../auth/passwords.ts';
import { requireRights, requireVisibleRole, type RightOver } from '../access/guards.ts';
import { findRole, rolePasswordHash, upgradeRolePasswordHash } from './roles.store.ts';
import {
  findManagesByIds, findManagesByPair, managesFromParents, sameManagesFlags, updateManagesFlags, upsertManages, wouldCycle,
} from './manages.store.ts';
import { diffFields, recordAudit, removed, type AuditEvent } from '../audit/record.ts';
import { deleteManagesCascade, toDeletionInfo, type DeletionInfo } from './cascade.ts';
import { releaseJoinAttempt, reserveJoinAttempt } from './password-throttle.ts';
import { clientIp, ipThrottleKey } from '../http/client-ip.ts';
import { inList, visibleRoleSet } from './path-roles.ts';
import { markDeprecated } from '../http/deprecation.ts';
import { oneOrMany, relationsOfRole } from '../http/validate.ts';
import { toManages, type ManagesRow } from './serialize.ts';
import {
  DeletionResponse, Flags6, ManagesIdParams, ManagesListQuery, ManagesListResponse, ManagesParentParams, ManagesParentsParams,
  ManagesQueryBody, ManagesResponse, ManagesUpsertQuery, ThrottledError,
} from './roles.schemas.ts';

const MANAGES_SHAPE = 'Manages = { id, parentRoleId, childRoleId, roleManagement, userManagement, viewManagement, '
  + 'deviceManagement, reportManagement, alarmManagement }.';

/** A relation's fields for an audit entry (its id is the entry's target). */
function managesFields(row: ManagesRow | undefined): Record<string, unknown> {
  if (!row) return {};
  const { id: _id, ...fields } = toManages(row);
  return fields;
}

/** manages.put: the relation's fields before and after (a new relation has no before). */
function managesPut(before: ManagesRow | undefined, after: ManagesRow, extra: Record<string, unknown> = {}): AuditEvent {
  return {
    action: 'manages.put', target: { kind: 'manages', id: after.id }, roleId: after.parent_role_id,
    changes: { ...diffFields(managesFields(before), managesFields(after)), ...extra },
  };
}

export function registerManagesRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;
  const overParent = (roleId: number): RightOver => ({ right: 'roleManagement', roleId, mode: 'either' });

  /** 404 unless P is visible, 403 unless u holds direct or indirect roleManagement over P. `h`: db or the unit's tx. */
  async function authorizeParent(h: Db, userId: number, parentId: number): Promise<void> {
    await requireVisibleRole(h, userId, parentId);
    await requireRights(h, userId, [[overParent(parentId)]]);
  }

  /** The relations `ids` of parent P, in request order; 404 for an id that is not a relation of P. */
  async function relationsOf(h: Db, parentId: number, ids: number[]): Promise<ManagesRow[]> {
    return relationsOfRole(await findManagesByIds(h, ids), ids, parentId, (r) => r.parent_role_id, 'manages relation');
  }

  api.route({
    method: 'put', path: '/v1/role/:parentRoleId/manages', tag: 'roles', summary: 'Create or update a manages relation',
    description: 'Creates parentRoleId -> childRoleId with the body\'s six flags, or updates the flags of the existing relation; '
      + 'answers { manages }. With a childRolePassword (the child\'s join password): needs direct or indirect roleManagement '
      + 'over the parent; a wrong password (or a child without one) is 403 ROLE_PASSWORD_INCORRECT; wrong passwords are '
      + 'counted per caller and client address with growing delays (429 TOO_MANY_PASSWORD_CHECKS with retryAfter; see '
      + 'docs/api.md#manages), so one member guessing never locks the password for others. Without it: one member '
      + 'role of the caller must hold direct or indirect roleManagement over the parent AND indirect roleManagement over the '
      + `child. A relation that would close a cycle (parent = child included) is 409 ROLE_CYCLE; nothing is written. ${MANAGES_SHAPE}`,
    auth: auth.requireActor, params: ManagesParentParams, query: ManagesUpsertQuery, body: Flags6,
    responses: {
      200: { description: 'the relation', schema: ManagesResponse },
      429: { description: 'TOO_MANY_PASSWORD_CHECKS', schema: ThrottledError },
    },
  }, async (c, { params, query, body }) => {
    const userId = c.var.actor.userId;
    const parentId = params.parentRoleId;
    const childId = query.childRoleId;
    const password = query.childRolePassword;
    /** `h`: db before the unit, the unit's tx inside it */
    const authorize = password !== undefined
      ? (h: Db) => authorizeParent(h, userId, parentId)
      : async (h: Db) => {
        await requireVisibleRole(h, userId, parentId);
        await requireVisibleRole(h, userId, childId);
        await requireRights(h, userId, [[overParent(parentId)], [{ right: 'roleManagement', roleId: childId, mode: 'indirect' }]]);
      };
    await authorize(db);
    if (password !== undefined) {
      // The child may be invisible to the caller (that is what the password is for): an unknown role, a role without a
      // password and a wrong password all answer the same 403 after the same scrypt work, and count alike.
      const attempt = await reserveJoinAttempt(db, userId, ipThrottleKey(clientIp(c, deps)), deps.now());
      const stored = await rolePasswordHash(db, childId);
      const ok = await verifySecret(password, stored ?? dummyHash()) && typeof stored === 'string';
      if (!ok) throw new ApiError('ROLE_PASSWORD_INCORRECT', `childRolePassword is incorrect for role ${childId}`);
      // right: no failure, whatever happens next (a cycle refused below is not a wrong password); a hash made with
      // older parameters is made again with today's
      const upgraded = await rehashed(password, stored);
      await db.write(async (tx) => {
        await releaseJoinAttempt(tx, attempt);
        if (upgraded !== undefined) await upgradeRolePasswordHash(tx, childId, stored, upgraded);
      });
    }
    const row = await db.write(async (tx) => {
      await authorize(tx);
      if (!(await findRole(tx, childId))) throw new ApiError('NOT_FOUND', `role ${childId} not found`);
      // inside the transaction, so no concurrent write can slip a reverse path in between test and insert
      if (await wouldCycle(tx, parentId, childId)) {
        throw new ApiError('ROLE_CYCLE', `a manages relation ${parentId} -> ${childId} would create a cycle`);
      }
      const before = await findManagesByPair(tx, parentId, childId);
      // An upsert that changes nothing writes nothing. On PostgreSQL every write unit is SERIALIZABLE (db/postgres.ts):
      // a needless UPDATE makes each of N concurrent identical upserts a writer of the same row (and of a table every
      // rights check reads), so they abort one another with 40001 and one could use up the bounded retry and answer
      // 500 (test/http/races.test.ts, cycle race). A read-only repeat does not conflict; no lock is needed either.
      const after = before && sameManagesFlags(before, body) ? before : await upsertManages(tx, parentId, childId, body);
      // that the child's join password was given is recorded; the password never is
      const event = managesPut(before, after, password !== undefined ? { childRolePassword: 'accepted' } : {});
      if (!before || Object.keys(event.changes!).length > 1 || password === undefined && Object.keys(event.changes!).length > 0) await recordAudit(tx, c, deps, event);
      return after;
    });
    return c.json({ manages: toManages(row) });
  });

  const queryDescription = 'Relations whose parent is one of the path\'s roles (an id, comma-separated ids, or * = every '
    + 'role the caller is a member of, directly or indirectly), ascending by id, matching every given filter (a list '
    + `matches any of its values; an empty list matches nothing). A path role outside the caller's reach is 404. ${MANAGES_SHAPE}`;

  api.route({
    method: 'post', path: '/v1/role/:parentRoleId/manages/query', tag: 'roles', summary: 'Query manages relations',
    description: `Body { filter?: { id?: int[], parentRoleId?: int[], childRoleId?: int[] } } ({} or no body: no filter). ${queryDescription}`,
    auth: auth.requireActor, params: ManagesParentsParams, body: ManagesQueryBody,
    responses: { 200: { description: 'the relations', schema: ManagesListResponse } },
  }, async (c, { params, body }) => {
    const parents = await visibleRoleSet(db, c.var.actor.userId, params.parentRoleId);
    const f = body?.filter ?? {};
    const rows = (await managesFromParents(db, parents))
      .filter((r) => inList(f.id, r.id) && inList(f.parentRoleId, r.parent_role_id) && inList(f.childRoleId, r.child_role_id));
    return c.json({ manages: rows.map(toManages) });
  });

  api.route({
    method: 'get', path: '/v1/role/:parentRoleId/manages', tag: 'roles', summary: 'Collect manages relations (deprecated: use POST …/manages/query)',
    description: `Query parameters id, childRoleId (repeated or comma-separated). ${queryDescription} Adds \`Deprecation: true\` `
      + 'and `Link: </v1/role/{parentRoleId}/manages/query>; rel="successor-version"`.',
    deprecated: true, auth: auth.requireActor, params: ManagesParentsParams, query: ManagesListQuery,
    responses: { 200: { description: 'the relations', schema: ManagesListResponse } },
  }, async (c, { params, query }) => {
    const parents = await visibleRoleSet(db, c.var.actor.userId, params.parentRoleId);
    const rows = (await managesFromParents(db, parents)).filter((r) => inList(query.id, r.id) && inList(query.childRoleId, r.child_role_id));
    markDeprecated(c, `/v1/role/${c.req.param('parentRoleId')}/manages/query`);
    return c.json({ manages: rows.map(toManages) });
  });

  api.route({
    method: 'put', path: '/v1/role/:parentRoleId/manages/:managesId', tag: 'roles', summary: 'Update the flags of manages relations',
    description: 'managesId: one id, or comma-separated ids (all relations of this parent). Body: the six flags. Needs direct or '
      + 'indirect roleManagement over the parent. Answers { manages } with one object for one id, an array in request order '
      + `for several; an id that is not a relation of this parent is 404 and nothing is written. ${MANAGES_SHAPE}`,
    auth: auth.requireActor, params: ManagesIdParams, body: Flags6,
    responses: { 200: { description: 'the updated relations', schema: ManagesResponse } },
  }, async (c, { params, body }) => {
    const userId = c.var.actor.userId;
    const { parentRoleId, managesId } = params;
    const rows = await db.write(async (tx) => {
      await authorizeParent(tx, userId, parentRoleId);
      const before = await relationsOf(tx, parentRoleId, managesId);
      for (const id of managesId) await updateManagesFlags(tx, id, body);
      const after = await relationsOf(tx, parentRoleId, managesId);
      const events = after.map((row, i) => managesPut(before[i], row)).filter((e) => Object.keys(e.changes!).length > 0);
      if (events.length > 0) await recordAudit(tx, c, deps, events);
      return after;
    });
    const out = rows.map(toManages);
    return c.json({ manages: oneOrMany(managesId.several, out) });
  });

  api.route({
    method: 'delete', path: '/v1/role/:parentRoleId/manages/:managesId', tag: 'roles', summary: 'Delete manages relations (with the cascade)',
    description: 'Needs direct or indirect roleManagement over the parent. A child that loses its last incoming relation is '
      + 'deleted with its member, monitors and outgoing relations, recursively; devices that thereby lose their last monitors '
      + 'relation with monitorManagement are deleted too. The root role is never deleted. One transaction. Answers '
      + '{ deletedNodeIds (roles, then devices), deletedRelationIds (manages, members, monitors), deleted: { roles, devices, '
      + 'manages, members, monitors } } (`deleted`, ours, tells the kinds apart: role and device ids may coincide); for '
      + 'several comma-separated ids, an array of those in request order, each listing what its own deletion removed.',
    auth: auth.requireActor, params: ManagesIdParams,
    responses: { 200: { description: 'what was deleted', schema: DeletionResponse } },
  }, async (c, { params }) => {
    const userId = c.var.actor.userId;
    const { parentRoleId, managesId } = params;
    const infos = await db.write(async (tx) => {
      await authorizeParent(tx, userId, parentRoleId);
      const rows = await relationsOf(tx, parentRoleId, managesId);
      const infos: DeletionInfo[] = [];
      for (const id of managesId) infos.push(toDeletionInfo(await deleteManagesCascade(tx, id)));
      await recordAudit(tx, c, deps, rows.map((row, i) => ({
        action: 'manages.delete', target: { kind: 'manages', id: row.id }, roleId: row.parent_role_id,
        // what the cascade removed with it (the relation itself is in `manages`)
        changes: { ...removed(managesFields(row)), cascade: infos[i].deleted },
      } satisfies AuditEvent)));
      return infos;
    });
    return c.json(oneOrMany(managesId.several, infos));
  });
}
