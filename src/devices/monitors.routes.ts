// Monitors relations (docs/api.md#monitors): upsert on devices, update and delete by id, query (and its deprecated GET).
import type { Context } from 'hono';
import type { RouteContext } from '../context/route-context.ts';
import type { AppEnv } from '../http/env.ts';
import type { Db } from '../db/open.ts';
import { reach } from '../access/rights.ts';
import { requireVisibleRole } from '../access/guards.ts';
import { oneOrMany } from '../http/validate.ts';
import { markDeprecated } from '../http/deprecation.ts';
import { monitorsManagers, requireMonitorsChange, requireReadableDevices } from './authorize.ts';
import {
  DeletionInfo, MonitorsBody, MonitorsIdsParams, MonitorsListQuery, MonitorsListResponse, MonitorsQueryBody,
  MonitorsQueryParams, MonitorsResponse, MonitorsUpsertQuery, RoleParams,
} from './devices.schemas.ts';
import {
  deleteMonitorsRows, putMonitorsOnDevices, requireMonitorsOfRole, updateMonitorsRows, type DeletionInfo as Deletion,
} from './monitors.service.ts';
import { findMonitorsOf, queryMonitors, type MonitorsRow } from './monitors.store.ts';
import { diffFields, recordAudit, removed, type AuditEvent } from '../audit/record.ts';
import { toMonitors, type Monitors } from './serialize.ts';

/** A relation's fields for an audit entry (its id is the entry's target). */
function monitorsFields(m: Monitors | undefined): Record<string, unknown> {
  if (!m) return {};
  const { id: _id, ...fields } = m;
  return fields;
}

/** monitors.put: before and after of one relation (a new one has no before); readable by those who reach its role. */
function monitorsPut(before: MonitorsRow | undefined, after: Monitors): AuditEvent {
  return {
    action: 'monitors.put', target: { kind: 'monitors', id: after.id }, roleId: after.roleId, deviceId: after.deviceId,
    changes: diffFields(monitorsFields(before && toMonitors(before)), monitorsFields(after)),
  };
}

const TAG = 'monitors';
const RULE = 'Needs one member role with (a) direct or indirect deviceManagement over the role, or indirect roleManagement '
  + 'over it, and (b) monitorManagement on the device.';

export function registerMonitorRoutes({ api, deps, auth }: RouteContext): void {
  const { db } = deps;

  api.route({
    method: 'put', path: '/v1/role/:roleId/monitors', tag: TAG, summary: 'Create or update the monitors relations of a role with devices',
    description: `${RULE} Several deviceId values answer with an array. 409 LAST_MONITOR_MANAGEMENT when a device would be left without monitorManagement.`,
    auth: auth.requireActor, params: RoleParams, query: MonitorsUpsertQuery, body: MonitorsBody,
    responses: { 200: { description: 'the relation(s)', schema: MonitorsResponse } },
  }, async (c, { params, query, body }) => {
    const userId = c.var.actor.userId;
    const deviceIds = [...new Set(query.deviceId)];
    const monitors = await db.write(async (tx) => {
      await requireVisibleRole(tx, userId, params.roleId);
      await requireReadableDevices(tx, userId, deviceIds);
      const managers = await monitorsManagers(tx, userId, params.roleId);
      for (const deviceId of deviceIds) await requireMonitorsChange(tx, userId, params.roleId, deviceId, managers);
      const before: (MonitorsRow | undefined)[] = [];
      for (const deviceId of deviceIds) before.push(await findMonitorsOf(tx, params.roleId, deviceId));
      const after = await putMonitorsOnDevices(tx, params.roleId, deviceIds, body);
      const events = after.map((m, i) => monitorsPut(before[i], m)).filter((e) => Object.keys(e.changes!).length > 0);
      if (events.length > 0) await recordAudit(tx, c, deps, events);
      return after;
    });
    return c.json({ monitors: oneOrMany(query.deviceId.length > 1, monitors) });
  });

  api.route({
    method: 'put', path: '/v1/role/:roleId/monitors/:ids', tag: TAG, summary: 'Update monitors relations by id',
    description: `${RULE} 409 LAST_MONITOR_MANAGEMENT when a device would be left without monitorManagement.`,
    auth: auth.requireActor, params: MonitorsIdsParams, body: MonitorsBody,
    responses: { 200: { description: 'the relation(s)', schema: MonitorsResponse } },
  }, async (c, { params, body }) => {
    const monitors = await db.write(async (tx) => {
      const before = await requireChangeableMonitors(c, tx, params.roleId, params.ids);
      const after = await updateMonitorsRows(tx, before, body);
      const events = after.map((m, i) => monitorsPut(before[i], m)).filter((e) => Object.keys(e.changes!).length > 0);
      if (events.length > 0) await recordAudit(tx, c, deps, events);
      return after;
    });
    return c.json({ monitors: oneOrMany(params.ids.several, monitors) });
  });

  api.route({
    method: 'delete', path: '/v1/role/:roleId/monitors/:ids', tag: TAG, summary: 'Delete monitors relations',
    description: `${RULE} Deleting the last relation with monitorManagement of a device deletes the device, its other `
      + 'relations and its license links (deletedNodeIds lists such devices).',
    auth: auth.requireActor, params: MonitorsIdsParams,
    responses: { 200: { description: 'what was deleted', schema: DeletionInfo } },
  }, async (c, { params }) => {
    // one by one, in request order: each answer lists what its own deletion removed (a device whose last relation with
    // monitorManagement goes is deleted with it, taking its other relations — later ids among them answer empty lists)
    const infos = await db.write(async (tx) => {
      const out: Deletion[] = [];
      for (const row of await requireChangeableMonitors(c, tx, params.roleId, params.ids)) {
        const info = await deleteMonitorsRows(tx, [row]);
        // a relation that went with a device deleted for an earlier id is in that id's entry
        if (info.deletedRelationIds.includes(row.id)) {
          await recordAudit(tx, c, deps, {
            action: 'monitors.delete', target: { kind: 'monitors', id: row.id }, roleId: row.role_id, deviceId: row.device_id,
            changes: {
              ...removed(monitorsFields(toMonitors(row))),
              // the device went with its last relation with monitorManagement
              ...(info.deletedNodeIds.includes(row.device_id) ? { deviceDeleted: row.device_id } : {}),
            },
          } satisfies AuditEvent);
        }
        out.push(info);
      }
      return out;
    });
    return c.json(oneOrMany(params.ids.several, infos));
  });

  api.route({
    method: 'post', path: '/v1/role/:roleId/monitors/query', tag: TAG, summary: 'Query monitors relations of roles the caller reaches',
    description: 'roleId: one id, comma-separated ids, or * (every role the caller reaches).',
    auth: auth.requireActor, params: MonitorsQueryParams, body: MonitorsQueryBody,
    responses: { 200: { description: 'the relations, by id', schema: MonitorsListResponse } },
  }, async (c, { params, body }) => c.json({ monitors: await findVisibleMonitors(db, c.var.actor.userId, params.roleId, body?.filter ?? {}) }));

  api.route({
    method: 'get', path: '/v1/role/:roleId/monitors', tag: TAG, summary: 'Collect monitors relations (deprecated: use POST .../monitors/query)',
    deprecated: true, auth: auth.requireActor, params: MonitorsQueryParams, query: MonitorsListQuery,
    responses: { 200: { description: 'the relations, by id', schema: MonitorsListResponse } },
  }, async (c, { params, query }) => {
    markDeprecated(c, `/v1/role/${c.req.param('roleId')}/monitors/query`);
    return c.json({ monitors: await findVisibleMonitors(db, c.var.actor.userId, params.roleId, query) });
  });
}

/** The relations of role R with these ids (404 unless R is visible and each id is one of its relations), rule per device. */
async function requireChangeableMonitors(c: Context<AppEnv>, db: Db, roleId: number, ids: number[]): Promise<MonitorsRow[]> {
  const userId = c.var.actor.userId;
  await requireVisibleRole(db, userId, roleId);
  const rows = await requireMonitorsOfRole(db, roleId, ids);
  const managers = await monitorsManagers(db, userId, roleId);
  for (const row of rows) await requireMonitorsChange(db, userId, roleId, row.device_id, managers);
  return rows;
}

/** Relations whose role is in Reach(u) and in the path's set, matching every filter. */
async function findVisibleMonitors(db: Db, userId: number, roles: '*' | number[], filter: { id?: number[]; roleId?: number[]; deviceId?: number[] }): Promise<Monitors[]> {
  const reachable = await reach(db, userId);
  const wanted = roles === '*' ? undefined : new Set(roles);
  const roleIds = wanted ? reachable.filter((id) => wanted.has(id)) : reachable;
  return (await queryMonitors(db, roleIds, filter)).map(toMonitors);
}
