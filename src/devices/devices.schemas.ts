// Request and response schemas of the device and monitors routes: the same objects validate requests and feed
// /openapi.json.
import * as v from 'valibot';
import { idList, idListOrStar, jsonId, jsonObject, parseJsonBody, pathInt, qBool, qInt, qIntList, qString, qStringList } from '../http/validate.ts';
import { PUT_MODES } from './put-modes.ts';
import { MAX_PATCH_OPS } from './patch.ts';
import { PropertiesInput } from './well-known.ts';

const positiveInt = v.pipe(v.number(), v.safeInteger('expected an integer >= 1'), v.minValue(1, 'expected an integer >= 1'));
const propertyName = v.pipe(v.string(), v.maxLength(200, 'expected at most 200 characters'));
/** One value or a list of them; always a list after parsing. */
const oneOrMany = <S extends v.GenericSchema<unknown, unknown>>(item: S) =>
  v.pipe(v.union([item, v.array(item)]), v.transform((x) => (Array.isArray(x) ? x : [x]) as v.InferOutput<S>[]));
/** Filters this appliance has no data for (no views; roles are not device filters): 400 NOT_SUPPORTED. */
const unsupported = v.optional(v.unknown());

// ---------------------------------------------------------------- devices

export const CreateDeviceQuery = v.strictObject({
  roleId: qInt,
  validate: v.optional(qBool),
});
export const CreateDeviceBody = v.strictObject({ properties: PropertiesInput });

export const DeviceFilter = v.strictObject({
  id: v.optional(oneOrMany(jsonId)),
  nodeId: v.optional(oneOrMany(v.string())),
  nodeType: v.optional(oneOrMany(v.string())),
  isActive: v.optional(v.boolean()),
  viewId: unsupported,
  /** devices monitored, directly or through the roles they manage, by those companies */
  companyId: v.optional(oneOrMany(jsonId)),
  roleId: unsupported,
});

/** `{ prop: [v1, v2] }`: keeps devices whose readable property `prop` equals one of the values. */
const Conditions = v.pipe(
  v.intersect([jsonObject, v.record(v.string(), v.array(v.unknown()))]),
  v.description('Keeps devices whose readable property equals one of the listed values'),
);

export const DeviceQueryBody = v.optional(v.strictObject({
  skipHash: v.optional(v.pipe(v.string(), v.description('base64 SHA-256 of the selected lastUpdate values; equal -> 204'))),
  fields: v.optional(v.array(propertyName)),
  filter: v.optional(DeviceFilter),
  conditions: v.optional(Conditions),
  limit: v.optional(positiveInt),
  afterId: v.optional(jsonId),
  viewId: unsupported,
  companyId: v.optional(oneOrMany(jsonId)),
  roleId: unsupported,
}));

/** `?conditions={"prop":[...]}` on the deprecated GET: JSON text, parsed with the body parser's protections. */
const qConditions = v.pipe(
  qString,
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return parseJsonBody(dataset.value);
    } catch {
      addIssue({ message: 'expected a JSON object such as {"prop":["value"]}' });
      return NEVER;
    }
  }),
  Conditions,
);

export const DeviceListQuery = v.strictObject({
  id: v.optional(qIntList),
  nodeId: v.optional(qStringList),
  nodeType: v.optional(qStringList),
  isActive: v.optional(qBool),
  fields: v.optional(qStringList),
  conditions: v.optional(qConditions),
  skipHash: v.optional(qString),
  limit: v.optional(v.pipe(qInt, v.minValue(1, 'expected an integer >= 1'))),
  afterId: v.optional(qInt),
  viewId: v.optional(qString),
  companyId: v.optional(qIntList),
  roleId: v.optional(qString),
});

export const DeviceIdsParams = v.strictObject({ ids: idList });
export const ValidateQuery = v.strictObject({ validate: v.optional(qBool) });
export const PutDeviceQuery = v.strictObject({
  mode: v.optional(v.pipe(qString, v.picklist(PUT_MODES, 'expected legacy, merge or strict'))),
  validate: v.optional(qBool),
});
export const PutDeviceBody = v.strictObject({ properties: PropertiesInput });

/** Shape of each operation for the document and a first check; patch.ts checks pointers and semantics. */
export const PatchBody = v.pipe(
  v.array(v.strictObject({
    op: v.picklist(['add', 'remove', 'replace', 'move', 'copy', 'test']),
    path: v.pipe(v.string(), v.description('JSON pointer into properties, e.g. /info/currency')),
    from: v.optional(v.string()),
    value: v.optional(v.unknown()),
  })),
  v.maxLength(MAX_PATCH_OPS, `expected at most ${MAX_PATCH_OPS} operations`),
  v.description('RFC 6902 JSON Patch applied to the device properties'),
);

export const NodeTypeParams = v.strictObject({ nodeType: v.string() });

export const Device = v.object({
  id: v.number(),
  lastUpdate: v.pipe(v.string(), v.isoTimestamp()),
  properties: v.record(v.string(), v.unknown()),
  userRights: v.object({
    propertyEditabilities: v.record(v.string(), v.boolean()),
    monitorManagement: v.boolean(),
  }),
});
export const DeviceResponse = v.object({ device: v.union([Device, v.array(Device)]) });
export const DeviceListResponse = v.object({ device: v.array(Device) });
export const NodeTypesResponse = v.object({ nodeTypes: v.array(v.string()) });

// ---------------------------------------------------------------- monitors

const propertyNames = v.pipe(
  v.array(propertyName),
  v.maxLength(1000, 'expected at most 1000 property names'),
  v.transform((names) => [...new Set(names)]),
);

export const MonitorsBody = v.strictObject({
  monitorManagement: v.boolean(),
  reads: propertyNames,
  edits: propertyNames,
});

export const RoleParams = v.strictObject({ roleId: pathInt });
export const MonitorsUpsertQuery = v.strictObject({
  deviceId: v.pipe(qIntList, v.minLength(1, 'expected at least one device id')),
});
export const MonitorsIdsParams = v.strictObject({ roleId: pathInt, ids: idList });
export const MonitorsQueryParams = v.strictObject({ roleId: idListOrStar });

export const MonitorsFilter = v.strictObject({
  id: v.optional(oneOrMany(jsonId)),
  roleId: v.optional(oneOrMany(jsonId)),
  deviceId: v.optional(oneOrMany(jsonId)),
});
export const MonitorsQueryBody = v.optional(v.strictObject({ filter: v.optional(MonitorsFilter) }));
export const MonitorsListQuery = v.strictObject({
  id: v.optional(qIntList),
  roleId: v.optional(qIntList),
  deviceId: v.optional(qIntList),
});

export const Monitors = v.object({
  id: v.number(),
  roleId: v.number(),
  deviceId: v.number(),
  monitorManagement: v.boolean(),
  reads: v.array(v.string()),
  edits: v.array(v.string()),
});
export const MonitorsResponse = v.object({ monitors: v.union([Monitors, v.array(Monitors)]) });
export const MonitorsListResponse = v.object({ monitors: v.array(Monitors) });
export const CreateDeviceResponse = v.object({ monitors: Monitors, device: Device });
export const DeletionInfo = v.object({
  deletedNodeIds: v.array(v.number()),
  deletedRelationIds: v.array(v.number()),
});
