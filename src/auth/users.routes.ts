// PUT /v1/user/{email}/tier: the telemetry tier of a user (docs/api.md#rate-limit), set by members of the root role.
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { findUserByEmail, setTier } from './users.store.ts';
import { recordAudit } from '../audit/record.ts';
import { isRootMember } from '../access/root.ts';
import { TierBody, TierParams } from './auth.schemas.ts';

export function registerUserRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'put', path: '/v1/user/:email/tier', tag: 'users', summary: 'Set a user\'s telemetry tier',
    description: 'Members of the root role only. Tiers: free, basic (default), premium.',
    auth: auth.requireActor, params: TierParams, body: TierBody,
    responses: { 204: { description: 'tier set' } },
  }, async (c, { params, body }) => {
    if (!(await isRootMember(db, c.var.actor.userId))) throw new ApiError('FORBIDDEN', 'setting a tier needs membership of the root role');
    await db.write(async (tx) => {
      const user = await findUserByEmail(tx, params.email);
      if (!user || !(await setTier(tx, params.email, body.tier))) throw new ApiError('NOT_FOUND', `no user ${params.email}`);
      if (user.tier !== body.tier) {
        await recordAudit(tx, c, deps, { action: 'user.tier', target: { kind: 'user', id: user.id }, changes: { tier: { before: user.tier, after: body.tier } } });
      }
    });
    return c.body(null, 204);
  });
}
