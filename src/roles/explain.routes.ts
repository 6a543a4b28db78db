// GET /v1/access/explain (ours, docs/api.md#explain): whether the caller holds a right, and the shortest chain that grants it.
// The chain is found by the rights engine (access/explain.ts) and shown with the relations' own serializers.
import * as v from 'valibot';
import type { RouteContext } from '../context/route-context.ts';
import { ApiError } from '../http/errors.ts';
import { qInt, qString } from '../http/validate.ts';
import { RIGHTS } from '../access/rights.ts';
import { explainDeviceAccess, explainRoleRight, type Step } from '../access/explain.ts';
import { toManages, toMember } from './serialize.ts';
import { toMonitors } from '../devices/serialize.ts';
import { requireVisibleRole } from '../access/guards.ts';

const ExplainQuery = v.strictObject({
  deviceId: v.optional(qInt),
  property: v.optional(v.pipe(qString, v.minLength(1, 'expected a non-empty string'), v.maxLength(256, 'expected at most 256 characters'))),
  action: v.optional(v.pipe(qString, v.picklist(['read', 'edit'], 'expected read or edit'))),
  roleId: v.optional(qInt),
  right: v.optional(v.pipe(qString, v.picklist(RIGHTS, `expected one of ${RIGHTS.join(', ')}`))),
  mode: v.optional(v.pipe(qString, v.picklist(['direct', 'indirect', 'either'], 'expected direct, indirect or either'))),
});

const FlagsOut = Object.fromEntries(RIGHTS.map((r) => [r, v.optional(v.boolean())]));
const StepOut = v.object({
  kind: v.picklist(['member', 'manages', 'monitors']),
  id: v.number(),
  // member: roleId, userEmail; manages: parentRoleId, childRoleId, the six flags; monitors: roleId, deviceId, monitorManagement, reads, edits
  roleId: v.optional(v.number()),
  userEmail: v.optional(v.string()),
  parentRoleId: v.optional(v.number()),
  childRoleId: v.optional(v.number()),
  ...FlagsOut,
  deviceId: v.optional(v.number()),
  monitorManagement: v.optional(v.boolean()),
  reads: v.optional(v.array(v.string())),
  edits: v.optional(v.array(v.string())),
});
const ExplainResponse = v.object({
  allowed: v.boolean(),
  grantedBy: v.optional(v.picklist(['selfRights', 'manages', 'monitorManagement', 'edits', 'reads', 'monitors'])),
  via: v.array(StepOut),
});

function toStep(step: Step): Record<string, unknown> {
  switch (step.kind) {
    case 'member': return { kind: 'member', ...toMember(step.row) };
    case 'manages': return { kind: 'manages', ...toManages(step.row) };
    case 'monitors': return { kind: 'monitors', ...toMonitors(step.row) };
  }
}

export function registerExplainRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'get', path: '/v1/access/explain', tag: 'access', summary: 'Explain a right of the caller',
    description: 'Either `deviceId` [`property`] [`action=read|edit`, default read] or `roleId` + `right` [`mode=direct|indirect|either`, '
      + 'default either]. Without a property, read asks whether the caller may read the device at all and edit whether it may '
      + 'edit every property (monitorManagement). Answers { allowed, grantedBy?, via }: via is the shortest chain of relations '
      + 'that grants the right, from the caller\'s member relation down to the target (`{ kind: "member", id, roleId, userEmail }`, '
      + '`{ kind: "manages", ...Manages }`, `{ kind: "monitors", ...Monitors }`), [] when not allowed; grantedBy says what '
      + 'grants it at the end of the chain (selfRights of the role, a manages flag, or the monitors relation\'s '
      + 'monitorManagement / edits / reads). A role or device the caller cannot see is 404.',
    auth: auth.requireActor, query: ExplainQuery,
    responses: { 200: { description: 'the verdict and its chain', schema: ExplainResponse } },
  }, async (c, { query }) => {
    const userId = c.var.actor.userId;
    const deviceAsk = query.deviceId !== undefined;
    const roleAsk = query.roleId !== undefined;
    if (deviceAsk === roleAsk) throw new ApiError('BAD_REQUEST', 'query: give either deviceId (with property, action) or roleId (with right, mode)');
    if (deviceAsk && (query.right !== undefined || query.mode !== undefined)) {
      throw new ApiError('BAD_REQUEST', `query.${query.right !== undefined ? 'right' : 'mode'}: only with roleId`);
    }
    if (roleAsk && (query.property !== undefined || query.action !== undefined)) {
      throw new ApiError('BAD_REQUEST', `query.${query.property !== undefined ? 'property' : 'action'}: only with deviceId`);
    }
    if (roleAsk && query.right === undefined) throw new ApiError('BAD_REQUEST', 'query.right: required with roleId');

    let explanation;
    if (roleAsk) {
      const roleId = query.roleId!;
      await requireVisibleRole(db, userId, roleId);
      explanation = await explainRoleRight(db, userId, roleId, query.right!, query.mode ?? 'either');
    } else {
      explanation = await explainDeviceAccess(db, userId, query.deviceId!, query.action ?? 'read', query.property);
      if (!explanation) throw new ApiError('NOT_FOUND', `device ${query.deviceId} not found`);
    }
    return c.json({
      allowed: explanation.allowed,
      ...(explanation.grantedBy ? { grantedBy: explanation.grantedBy } : {}),
      via: explanation.via.map(toStep),
    });
  });
}
