// POST /v1/audit/query: "who changed this, and when". Members of the root role see every entry; any other user sees
// the entries about what it can read today — roles in its reach (a role's creation: the parent's), member relations of
// roles over which it holds userManagement (and its own memberships as they are today), devices it can read (only the properties it can read), licenses linked to a controller
// it can read, itself as a user — and its own actions. The rights engine (src/access) answers each of these.
import type { RouteContext } from '../context/route-context.ts';
import { isRootMember } from '../access/root.ts';
import { canReadProperty, memberRoles, allReadableDevices, rightsOverReach, type DeviceAccess } from '../access/rights.ts';
import { queryAuditEntries, type AuditRow, type AuditVisibility } from './audit.store.ts';
import { AuditQueryBody, AuditQueryResponse, DEFAULT_LIMIT, toAuditEntry } from './audit.schemas.ts';

export function registerAuditRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'post', path: '/v1/audit/query', tag: 'audit', summary: 'Query the audit log',
    description: 'Body { filter?: { actorId?, action?, targetKind?, targetId?, from?, to? }, limit? (1..1000, default 100), '
      + 'afterId? } (a missing body is {}). Answers { entries } newest first; the next page is afterId = the last entry\'s id. '
      + 'Root-role members see every entry. Other users see the entries about what they can read today (roles they reach, '
      + 'member relations of roles over which they hold userManagement and their own, devices they can read — with only the '
      + 'properties they can read —, licenses linked to a controller they can read, themselves) and their own actions. '
      + 'from is inclusive, to exclusive. An entry is { id, time, actor: { userId, email, token }, clientAddress, requestId, '
      + 'action, target: { kind, id }, changes }; a write on several ids records one entry per target.',
    auth: auth.requireActor, body: AuditQueryBody,
    responses: { 200: { description: 'the entries, newest first', schema: AuditQueryResponse } },
  }, async (c, { body }) => {
    const userId = c.var.actor.userId;
    const q = body ?? {};
    const page = { limit: q.limit ?? DEFAULT_LIMIT, afterId: q.afterId };
    const filter = { ...q.filter, targetId: q.filter?.targetId === undefined ? undefined : String(q.filter.targetId) };
    if (await isRootMember(db, userId)) {
      return c.json({ entries: (await queryAuditEntries(db, filter, page)).map((row) => toAuditEntry(row)) });
    }
    // what the caller can read today, as the rights engine says
    const rights = await rightsOverReach(db, userId);
    const devices = new Map((await allReadableDevices(db, userId)).map((d) => [d.deviceId, d]));
    const visibility: AuditVisibility = {
      userId,
      roles: [...rights.keys()],
      memberRoles: [...rights].filter(([, r]) => r.userManagement).map(([id]) => id),
      ownRoles: await memberRoles(db, userId),
      devices: [...devices.keys()],
    };
    const rows = await queryAuditEntries(db, filter, page, visibility);
    return c.json({ entries: rows.map((row) => toAuditEntry(row, readableChanges(row, devices.get(row.device_id ?? -1)))) });
  });
}

/**
 * The changes of an entry as the caller may see them: for a device, only the properties it can read today (its own
 * past changes to a device it can no longer read show none); everything else as recorded.
 */
function readableChanges(row: AuditRow, access: DeviceAccess | undefined): Record<string, unknown> {
  const changes = JSON.parse(row.changes) as Record<string, unknown>;
  if (row.target_kind !== 'device') return changes;
  if (!access) return {};
  if (access.monitorManagement) return changes;
  return Object.fromEntries(Object.entries(changes).filter(([property]) => canReadProperty(access, property)));
}
