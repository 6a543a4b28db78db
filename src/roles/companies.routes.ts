// GET /v1/company (Eniris): the companies the caller belongs to. A company is a role marked as one (PUT /v1/role).
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { companiesManaging, memberCompanies, visibleRoleIds } from '../access/companies.ts';
import { CompaniesResponse, CompanyListQuery } from './roles.schemas.ts';

export function registerCompanyRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'get', path: '/v1/company', tag: 'roles', summary: 'The companies the caller is a member of',
    description: 'Answers { company: [{ id, uuid, name }] }: the company roles among the caller\'s member roles and every role '
      + 'that manages one of them, directly or through a chain, ascending by id. Filters (repeated or comma-separated, '
      + 'combined with "and"): id, uuid, roleId (keeps companies that manage one of those roles directly or through a '
      + 'chain; a role the caller cannot see matches nothing). viewId / viewInsightsVersion: 400 NOT_SUPPORTED.',
    auth: auth.requireActor, query: CompanyListQuery,
    responses: { 200: { description: 'the companies', schema: CompaniesResponse } },
  }, async (c, { query }) => {
    for (const key of ['viewId', 'viewInsightsVersion'] as const) {
      if (query[key] !== undefined) throw new ApiError('NOT_SUPPORTED', `query.${key}: not supported (a gridkeeper appliance has no views)`);
    }
    const userId = c.var.actor.userId;
    // the rights engine decides membership; the filters only narrow what it returned
    let companies = await memberCompanies(db, userId);
    if (query.id) {
      const ids = new Set(query.id);
      companies = companies.filter((x) => ids.has(x.id));
    }
    if (query.uuid) {
      const uuids = new Set(query.uuid);
      companies = companies.filter((x) => uuids.has(x.uuid));
    }
    if (query.roleId) {
      const roles = await visibleRoleIds(db, userId, query.roleId);
      const managing = await companiesManaging(db, companies.map((x) => x.id), roles);
      companies = companies.filter((x) => managing.has(x.id));
    }
    return c.json({ company: companies.map(({ id, uuid, name }) => ({ id, uuid, name })) });
  });
}
