// Devices (docs/api.md#devices): create, query (and its deprecated GET), PATCH (RFC 6902), PUT, nodeType schemas.
// Monitors relations live in monitors.routes.ts and are mounted from here.
import type { Context } from 'hono';
import type { RouteContext } from '../context/route-context.ts';
import type { AppEnv } from '../http/env.ts';
import { ApiError, badRequest } from '../http/errors.ts';
import { oneOrMany } from '../http/validate.ts';
import { markDeprecated } from '../http/deprecation.ts';
import { nodeResponse } from '../http/route.ts';
import type { Db } from '../db/open.ts';
import { requireDeviceCreation, requireMonitorManagement, requirePropertyRights, requireReadableDevices } from './authorize.ts';
import { devicesJson, selectionHash, type DeviceQuery } from './device-query.ts';
import { createDevice, patchDevices, putDevices } from './devices.service.ts';
import {
  CreateDeviceBody, CreateDeviceQuery, CreateDeviceResponse, DeviceIdsParams, DeviceListQuery, DeviceListResponse,
  DeviceQueryBody, DeviceResponse, NodeTypeParams, NodeTypesResponse, PatchBody, PutDeviceBody, PutDeviceQuery, ValidateQuery,
} from './devices.schemas.ts';
import { nodeTypeJsonSchema, nodeTypes } from './node-types.ts';
import { parsePatchOps, touchedProperties } from './patch.ts';
import { parseUnmodifiedSince } from './unmodified-since.ts';
import { registerMonitorRoutes } from './monitors.routes.ts';
import { created as createdFields, diffFields, recordAudit } from '../audit/record.ts';

const TAG = 'devices';
const UNMODIFIED_SINCE = 'Header If-Unmodified-Since (ISO 8601 date-time with zone, or HTTP-date): when any targeted device '
  + 'was updated later, 412 DEVICE_MODIFIED and nothing is written. Several comma-separated ids are one all-or-nothing '
  + 'transaction answered with an array in request order.';

export function registerDeviceRoutes(ctx: RouteContext): void {
  const { api, deps, auth } = ctx;
  const { db } = deps;

  api.route({
    method: 'post', path: '/v1/device', tag: TAG, summary: 'Create a device and its monitors relation with the role',
    description: 'Needs direct or indirect deviceManagement over the role, or indirect roleManagement over it. '
      + 'nodeId must be unique (409 NODE_ID_TAKEN); validate=true checks the nodeType schema (422 SCHEMA_VIOLATION).',
    auth: auth.requireActor, query: CreateDeviceQuery, body: CreateDeviceBody,
    responses: { 200: { description: 'the device and its monitors relation', schema: CreateDeviceResponse } },
  }, async (c, { query, body }) => {
    const userId = c.var.actor.userId;
    const created = await db.write(async (tx) => {
      await requireDeviceCreation(tx, userId, query.roleId);
      const properties = body.properties as Record<string, unknown>;
      const result = await createDevice(tx, userId, query.roleId, properties, { now: deps.now(), validate: query.validate ?? false });
      await recordAudit(tx, c, deps, { action: 'device.create', target: { kind: 'device', id: result.device.id }, changes: createdFields(properties) });
      return result;
    });
    return c.json(created);
  });

  api.route({
    method: 'post', path: '/v1/device/query', tag: TAG, summary: 'Query the devices the caller may read',
    description: 'Sorted by id. Filters and conditions only match properties the caller may read. skipHash equal to the '
      + 'base64 SHA-256 of the selected lastUpdate values (joined with \\n) -> 204. companyId (top level or in filter; an id or '
      + 'a list) keeps devices monitored by those companies directly or through the roles they manage (a company the caller '
      + 'cannot see matches nothing). viewId/roleId -> 400 NOT_SUPPORTED.',
    auth: auth.requireActor, body: DeviceQueryBody,
    responses: { 200: { description: 'the devices', schema: DeviceListResponse }, 204: { description: 'unchanged since skipHash' } },
  }, async (c, { body }) => {
    const q = body ?? {};
    refuseUnsupported({ ...q, ...q.filter });
    // visibility is the rights engine's readable set, inside selectionHash and devicesJson
    return answerQuery(c, db, {
      filter: q.filter, conditions: q.conditions, fields: q.fields, limit: q.limit, afterId: q.afterId, companyId: q.companyId,
    }, q.skipHash);
  });

  api.route({
    method: 'get', path: '/v1/device', tag: TAG, summary: 'Collect devices (deprecated: use POST /v1/device/query)',
    description: 'The query body as query parameters; conditions as JSON text (conditions={"prop":["value"]}); companyId as in '
      + 'the query.',
    deprecated: true, auth: auth.requireActor, query: DeviceListQuery,
    responses: { 200: { description: 'the devices', schema: DeviceListResponse }, 204: { description: 'unchanged since skipHash' } },
  }, async (c, { query: q }) => {
    refuseUnsupported(q);
    markDeprecated(c, '/v1/device/query');
    const filter = { id: q.id, nodeId: q.nodeId, nodeType: q.nodeType, isActive: q.isActive, companyId: q.companyId };
    return answerQuery(c, db, { filter, conditions: q.conditions as Record<string, unknown[]> | undefined, fields: q.fields, limit: q.limit, afterId: q.afterId }, q.skipHash);
  });

  api.route({
    method: 'patch', path: '/v1/device/:ids', tag: TAG, summary: 'Apply an RFC 6902 JSON Patch to device properties',
    description: `Allowed with monitorManagement, or when every written property is editable and every tested or copied one readable. ${UNMODIFIED_SINCE}`,
    auth: auth.requireActor, params: DeviceIdsParams, query: ValidateQuery, body: PatchBody,
    responses: { 200: { description: 'the patched device(s)', schema: DeviceResponse } },
  }, async (c, { params, query, body }) => {
    const parsed = parsePatchOps(body);
    if (!parsed.ok) throw badRequest(parsed.message);
    const unmodifiedSince = unmodifiedSinceHeader(c, deps.now());
    const userId = c.var.actor.userId;
    const touched = touchedProperties(parsed.ops);
    const devices = await db.write(async (tx) => {
      const targets = await requireReadableDevices(tx, userId, params.ids);
      for (const access of targets) requirePropertyRights(access, touched.edits, touched.reads);
      return patchDevices(tx, targets, parsed.ops, touched.edits, {
        now: deps.now(), validate: query.validate ?? false, unmodifiedSince,
        onChange: (id, before, after) => recordAudit(tx, c, deps, { action: 'device.patch', target: { kind: 'device', id }, changes: diffFields(before, after) }),
      });
    });
    return c.json({ device: oneOrMany(params.ids.several, devices) });
  });

  api.route({
    method: 'put', path: '/v1/device/:ids', tag: TAG, summary: 'Replace or merge device properties',
    description: `mode=legacy (default) replaces the given top-level properties, merge merges objects recursively, strict replaces all `
      + `properties and needs monitorManagement. ${UNMODIFIED_SINCE}`,
    auth: auth.requireActor, params: DeviceIdsParams, query: PutDeviceQuery, body: PutDeviceBody,
    responses: { 200: { description: 'the updated device(s)', schema: DeviceResponse } },
  }, async (c, { params, query, body }) => {
    const unmodifiedSince = unmodifiedSinceHeader(c, deps.now());
    const userId = c.var.actor.userId;
    const mode = query.mode ?? 'legacy';
    const properties = body.properties as Record<string, unknown>;
    const devices = await db.write(async (tx) => {
      const targets = await requireReadableDevices(tx, userId, params.ids);
      for (const access of targets) {
        if (mode === 'strict') requireMonitorManagement(access, 'PUT with mode=strict');
        else requirePropertyRights(access, Object.keys(properties));
      }
      return putDevices(tx, targets, properties, mode, {
        now: deps.now(), validate: query.validate ?? false, unmodifiedSince,
        onChange: (id, before, after) => recordAudit(tx, c, deps, { action: 'device.put', target: { kind: 'device', id }, changes: diffFields(before, after) }),
      });
    });
    return c.json({ device: oneOrMany(params.ids.several, devices) });
  });

  api.route({
    method: 'get', path: '/v1/device/schema', tag: TAG, summary: 'The nodeTypes that have a built-in schema',
    auth: auth.requireActor, responses: { 200: { description: 'nodeTypes', schema: NodeTypesResponse } },
  }, (c) => c.json({ nodeTypes: nodeTypes() }));

  api.route({
    method: 'get', path: '/v1/device/schema/:nodeType', tag: TAG, summary: 'The JSON Schema of one nodeType',
    auth: auth.requireActor, params: NodeTypeParams,
    responses: { 200: { description: 'JSON Schema (draft 2020-12) of the properties' } },
  }, (c, { params }) => {
    const schema = nodeTypeJsonSchema(params.nodeType);
    if (!schema) throw new ApiError('NOT_FOUND', `no schema for nodeType ${JSON.stringify(params.nodeType)}`);
    return c.json(schema);
  });

  registerMonitorRoutes(ctx);
}

/** Selection and serialization in one read snapshot: no write comes between them (a selected device is still there). */
async function answerQuery(c: Context<AppEnv>, db: Db, query: DeviceQuery, skipHash: string | undefined): Promise<Response> {
  const userId = c.var.actor.userId;
  const json = await db.read(async (tx) => {
    if (skipHash !== undefined && skipHash === await selectionHash(tx, userId, query)) return undefined;
    return devicesJson(tx, userId, query);
  });
  if (json === undefined) return c.body(null, 204);
  // chunk by chunk, with its length: a listing of megabytes is never copied into one buffer (see Utf8Chunks)
  const parts = json.parts();
  if (parts.length === 1) {
    const small = new Uint8Array(parts[0]!); // a copy
    json.release();
    return c.body(small, 200, { 'Content-Type': 'application/json' });
  }
  // the chunks go back to their pool when the server is done with the answer (written, or its connection gone); a
  // request handed to the app without a socket leaves them to the garbage collector
  nodeResponse(c)?.once('close', () => json.release());
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = parts.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
  return c.body(body, 200, { 'Content-Type': 'application/json', 'Content-Length': String(json.length) });
}

/** Views and role filters do not exist for devices here; say so instead of ignoring the filter. */
function refuseUnsupported(filters: { viewId?: unknown; roleId?: unknown }): void {
  for (const key of ['viewId', 'roleId'] as const) {
    if (filters[key] !== undefined) throw new ApiError('NOT_SUPPORTED', `${key} filters are not supported by this appliance`);
  }
}

function unmodifiedSinceHeader(c: Context<AppEnv>, now: number): number | undefined {
  const header = c.req.header('if-unmodified-since');
  if (header === undefined) return undefined;
  const at = parseUnmodifiedSince(header, now);
  if (at === undefined) throw badRequest('If-Unmodified-Since: expected an ISO 8601 date-time with a zone or an HTTP-date');
  return at;
}
