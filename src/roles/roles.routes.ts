// Roles (docs/api.md#roles): create under a parent, update, query (and its deprecated GET). Manages and member relations
// live in manages.routes.ts and members.routes.ts. Every handler first states the right it needs and asks src/access.
import type { RouteContext } from '../context/route-context.ts';
import type { Db } from '../db/open.ts';
import { hashSecret } from '../auth/passwords.ts';
import { RIGHTS, type Right } from '../access/rights.ts';
import { requireRights, requireVisibleRole } from '../access/guards.ts';
import { findRole, insertRole, rolePasswordHash, updateRole } from './roles.store.ts';
import { created as createdFields, diffFields, recordAudit } from '../audit/record.ts';
import { upsertManages } from './manages.store.ts';
import { queryRoles, refuseUnsupported } from './role-query.ts';
import { toManages, toRole } from './serialize.ts';
import { markDeprecated } from '../http/deprecation.ts';
import { registerManagesRoutes } from './manages.routes.ts';
import { registerMemberRoutes } from './members.routes.ts';
import { registerCompanyRoutes } from './companies.routes.ts';
import {
  CreateRoleBody, CreateRoleQuery, CreateRoleResponse, RoleIdParams, RoleInput, RoleListQuery, RoleQueryBody, RoleResponse,
  RolesResponse,
} from './roles.schemas.ts';

const ROLE_SHAPE = 'Role = { id, name, selfRights: {six flags}, userRights, isCompany, uuid? }. The join password is write-only: '
  + 'stored scrypt-hashed and never returned. isCompany (ours) marks a company role; a company carries a stable uuid.';

export function registerRoleRoutes(ctx: RouteContext): void {
  const { api, deps, auth } = ctx;
  const { db } = deps;

  api.route({
    method: 'post', path: '/v1/role', tag: 'roles', summary: 'Create a role under a parent role',
    description: 'Creates the role and the manages relation parentRoleId -> new role with the given flags. Needs direct or '
      + 'indirect roleManagement over the parent (404 when the parent is not visible). `role.password` (ours) sets the '
      + `join password. Answers 200 { manages, role }; role.userRights is {} here (ask POST /v1/role/query). ${ROLE_SHAPE}`,
    auth: auth.requireActor, query: CreateRoleQuery, body: CreateRoleBody,
    responses: { 200: { description: 'created', schema: CreateRoleResponse } },
  }, async (c, { query, body }) => {
    const userId = c.var.actor.userId;
    const parentId = query.parentRoleId;
    /** `h`: db before the unit, the unit's tx inside it */
    const authorize = async (h: Db) => {
      await requireVisibleRole(h, userId, parentId);
      await requireRights(h, userId, [[{ right: 'roleManagement', roleId: parentId, mode: 'either' }]]);
    };
    await authorize(db);
    const passwordHash = typeof body.role.password === 'string' ? await hashSecret(body.role.password) : null;
    // checked again inside the transaction: the hash was computed while other requests ran
    const created = await db.write(async (tx) => {
      await authorize(tx);
      const roleId = await insertRole(tx, {
        name: body.role.name, selfRights: body.role.selfRights, passwordHash, isCompany: body.role.isCompany ?? false,
      }, deps.now());
      const manages = await upsertManages(tx, parentId, roleId, body.manages);
      const result = { manages, role: (await findRole(tx, roleId))! };
      const { id: managesId, ...flags } = toManages(result.manages);
      await recordAudit(tx, c, deps, {
        // readable by those who reach the parent, where the role was made (like the relation to it, which it lists)
        action: 'role.create', target: { kind: 'role', id: roleId }, roleId: parentId,
        changes: {
          ...createdFields({ name: body.role.name, selfRights: body.role.selfRights, isCompany: body.role.isCompany ?? false }),
          ...(passwordHash !== null ? { password: { after: 'set' } } : {}),
          manages: { after: { id: managesId, ...flags } },
        },
      });
      return result;
    });
    return c.json({ manages: toManages(created.manages), role: toRole(created.role) });
  });

  api.route({
    method: 'put', path: '/v1/role/:roleId', tag: 'roles', summary: 'Update a role',
    description: 'Body RoleInput { name, selfRights, password?, isCompany? }: password absent keeps the join password, null '
      + 'clears it, a string sets it; isCompany absent keeps the mark. A role marked as a company for the first time gets its '
      + `uuid, which it keeps. Needs indirect roleManagement over the role. Answers { role } with userRights {}. ${ROLE_SHAPE}`,
    auth: auth.requireActor, params: RoleIdParams, body: RoleInput,
    responses: { 200: { description: 'updated', schema: RoleResponse } },
  }, async (c, { params, body }) => {
    const userId = c.var.actor.userId;
    const roleId = params.roleId;
    /** `h`: db before the unit, the unit's tx inside it */
    const authorize = async (h: Db) => {
      await requireVisibleRole(h, userId, roleId);
      await requireRights(h, userId, [[{ right: 'roleManagement', roleId, mode: 'indirect' }]]);
    };
    await authorize(db);
    const passwordHash = typeof body.password === 'string' ? await hashSecret(body.password) : body.password;
    const row = await db.write(async (tx) => {
      await authorize(tx);
      const before = toRole((await findRole(tx, roleId))!);
      const hadPassword = typeof (await rolePasswordHash(tx, roleId)) === 'string';
      await updateRole(tx, roleId, { name: body.name, selfRights: body.selfRights, passwordHash, isCompany: body.isCompany });
      const after = (await findRole(tx, roleId))!;
      const { name, selfRights, isCompany } = toRole(after);
      // the join password is a secret: the entry says that it was set or cleared, never what it is
      const password = typeof passwordHash === 'string' ? { password: { after: 'set' } }
        : passwordHash === null && hadPassword ? { password: { before: 'set', after: 'cleared' } } : {};
      const changes = { ...diffFields({ name: before.name, selfRights: before.selfRights, isCompany: before.isCompany }, { name, selfRights, isCompany }), ...password };
      // an update that changes nothing records nothing
      if (Object.keys(changes).length > 0) await recordAudit(tx, c, deps, { action: 'role.update', target: { kind: 'role', id: roleId }, changes });
      return after;
    });
    return c.json({ role: toRole(row) });
  });

  api.route({
    method: 'post', path: '/v1/role/query', tag: 'roles', summary: 'Query the roles the caller is a member of (directly or indirectly)',
    description: 'Body { filter?: { id?: int[], name?: string[], ancestorRoleId?: int[] }, userRights?: { <flag>?: boolean } } '
      + '(a missing body is {}). Returns { role: Role[] } over Reach(u), ascending by id; filters combine with "and", a list '
      + 'matches any of its values, an empty list matches nothing; names match exactly. ancestorRoleId keeps strict '
      + 'descendants of those roles (ancestors the caller cannot see match nothing). For each flag set true in userRights, '
      + 'every role\'s userRights.<flag> says whether the caller holds that right over it (direct or indirect); other flags '
      + 'are absent. filter.companyId (an id or a list) keeps the roles those companies manage directly or through a chain '
      + `(a company the caller cannot see matches nothing). filter.viewId: 400 NOT_SUPPORTED. ${ROLE_SHAPE}`,
    auth: auth.requireActor, body: RoleQueryBody,
    responses: { 200: { description: 'the matching roles', schema: RolesResponse } },
  }, async (c, { body }) => {
    refuseUnsupported(body?.filter, 'filter.');
    return c.json({ role: await queryRoles(db, c.var.actor.userId, body?.filter, body?.userRights) });
  });

  api.route({
    method: 'get', path: '/v1/role', tag: 'roles', summary: 'Collect roles (deprecated: use POST /v1/role/query)',
    description: 'The filters of POST /v1/role/query as query parameters: id, name, ancestorRoleId (repeated or '
      + 'comma-separated), companyId, userRights.<flag>=true. viewId: 400 NOT_SUPPORTED. Answers like the query, with '
      + '`Deprecation: true` and `Link: </v1/role/query>; rel="successor-version"`.',
    deprecated: true, auth: auth.requireActor, query: RoleListQuery,
    responses: { 200: { description: 'the matching roles', schema: RolesResponse } },
  }, async (c, { query }) => {
    refuseUnsupported(query, 'query.');
    const userRights = Object.fromEntries(RIGHTS.map((r) => [r, query[`userRights.${r}`]])) as Partial<Record<Right, boolean>>;
    const roles = await queryRoles(db, c.var.actor.userId, {
      id: query.id, name: query.name, ancestorRoleId: query.ancestorRoleId, companyId: query.companyId,
    }, userRights);
    markDeprecated(c, '/v1/role/query');
    return c.json({ role: roles });
  });

  registerManagesRoutes(ctx);
  registerMemberRoutes(ctx);
  registerCompanyRoutes(ctx);
}

