// The built-in registry of nodeType schemas (docs/api.md#node-types). Devices carry free-form properties, so every object is
// loose (unknown keys pass) and every key but `nodeType` is optional: a partially filled device validates, and a
// well-known key only fails when it is present with the wrong shape.
import * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';

// valibot's object and record schemas accept arrays (they read keys off any object); JSON's object types do not
const notArray = v.custom<Record<string, unknown>>((input) => !Array.isArray(input), 'Invalid type: Expected Object but received Array');
const jsonObject = <const E extends v.ObjectEntries>(entries: E) => v.pipe(notArray, v.looseObject(entries));
const stringRecord = v.pipe(notArray, v.record(v.string(), v.string()));

const nonNegative = (description: string) => v.pipe(v.number(), v.minValue(0), v.description(description));
const phases = v.pipe(v.picklist([1, 3]), v.description('Number of grid phases the device is connected to'));
const idList = (description: string) => v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), v.description(description));

const Info = jsonObject({
  manufacturer: v.optional(v.string()),
  model: v.optional(v.string()),
  serialNumber: v.optional(v.string()),
  firmwareVersion: v.optional(v.string()),
});

const InfluxSeries = jsonObject({
  measurement: v.pipe(v.string(), v.minLength(1)),
  database: v.optional(v.string()),
  retentionPolicy: v.optional(v.string()),
  tags: v.optional(stringRecord),
  fields: v.optional(v.array(v.string())),
});

/** The well-known properties every device may carry, with `nodeType` fixed to one literal. */
function commonEntries<T extends string>(nodeType: T) {
  return {
    nodeId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
    nodeType: v.literal(nodeType),
    isActive: v.optional(v.boolean()),
    name: v.optional(v.string()),
    info: v.optional(Info),
    nodeParentsIds: v.optional(idList('nodeIds of the parent devices')),
    nodeChildrenIds: v.optional(idList('nodeIds of the child devices')),
    nodeInfluxSeries: v.optional(v.array(InfluxSeries)),
  };
}

const SCHEMAS = new Map<string, v.GenericSchema>([
  ['smartgridController', jsonObject({
    ...commonEntries('smartgridController'),
    timezone: v.optional(v.pipe(v.string(), v.minLength(1), v.description('IANA time zone, e.g. Europe/Brussels'))),
    gridConnectionMaxPowerW: v.optional(nonNegative('Maximum power of the grid connection')),
    softwareVersion: v.optional(v.string()),
  })],
  ['powerMeter', jsonObject({
    ...commonEntries('powerMeter'),
    meterType: v.optional(v.picklist(['grid', 'production', 'consumption', 'submeter'])),
    phases: v.optional(phases),
    ctRatio: v.optional(v.pipe(v.number(), v.gtValue(0), v.description('Current transformer ratio'))),
  })],
  ['solarInverter', jsonObject({
    ...commonEntries('solarInverter'),
    nominalPowerW: v.optional(nonNegative('Nominal AC output power')),
    peakPowerWp: v.optional(nonNegative('Installed PV peak power')),
    mpptCount: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    phases: v.optional(phases),
  })],
  ['battery', jsonObject({
    ...commonEntries('battery'),
    capacityWh: v.optional(nonNegative('Usable energy capacity')),
    maxChargePowerW: v.optional(nonNegative('Maximum charge power')),
    maxDischargePowerW: v.optional(nonNegative('Maximum discharge power')),
    minSocPct: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
    maxSocPct: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
  })],
  ['evCharger', jsonObject({
    ...commonEntries('evCharger'),
    maxCurrentA: v.optional(nonNegative('Maximum charge current per phase')),
    minCurrentA: v.optional(nonNegative('Minimum charge current per phase')),
    phases: v.optional(phases),
    connectorType: v.optional(v.picklist(['type1', 'type2', 'ccs1', 'ccs2', 'chademo', 'gbt'])),
  })],
  ['hybridInverter', jsonObject({
    ...commonEntries('hybridInverter'),
    nominalPowerW: v.optional(nonNegative('Nominal AC output power')),
    batteryCapacityWh: v.optional(nonNegative('Usable capacity of the attached battery')),
    maxChargePowerW: v.optional(nonNegative('Maximum battery charge power')),
    maxDischargePowerW: v.optional(nonNegative('Maximum battery discharge power')),
    phases: v.optional(phases),
  })],
  ['heatPump', jsonObject({
    ...commonEntries('heatPump'),
    heatPumpType: v.optional(v.picklist(['airToWater', 'airToAir', 'groundToWater', 'waterToWater'])),
    thermalPowerW: v.optional(nonNegative('Nominal thermal output power')),
    electricalPowerW: v.optional(nonNegative('Nominal electrical input power')),
  })],
]);

export type PropertiesCheck = { ok: true } | { ok: false; path: string; message: string };

/** The nodeTypes that have a built-in schema, in registry order. */
export function nodeTypes(): string[] {
  return [...SCHEMAS.keys()];
}

/**
 * Validates properties against the schema of their own `nodeType`. A device whose nodeType is missing or has no
 * schema is free-form and passes. On failure, `path` is dotted (`info.serialNumber`, `nodeParentsIds[2]`) and
 * relative to `properties`; the caller prefixes it.
 */
export function validateProperties(properties: Record<string, unknown>): PropertiesCheck {
  const nodeType = Object.hasOwn(properties, 'nodeType') ? properties.nodeType : undefined;
  // a Map, not an object literal: nodeType "toString" or "__proto__" must not find an inherited member
  const schema = typeof nodeType === 'string' ? SCHEMAS.get(nodeType) : undefined;
  if (!schema) return { ok: true };
  const result = v.safeParse(schema, properties, { abortEarly: true });
  if (result.success) return { ok: true };
  const issue = result.issues[0];
  const segments = (issue.path ?? []).map((item) => item.key as string | number);
  return { ok: false, path: dottedPath(segments), message: issue.message };
}

/** The JSON Schema (draft 2020-12) of one nodeType, a fresh object per call; undefined for an unknown nodeType. */
export function nodeTypeJsonSchema(nodeType: string): Record<string, unknown> | undefined {
  const schema = SCHEMAS.get(nodeType);
  if (!schema) return undefined;
  // 'output' starts each pipeline at its last schema, skipping the notArray guard that JSON Schema's type already says
  const { $schema, ...rest } = toJsonSchema(schema, { target: 'draft-2020-12', typeMode: 'output' });
  return {
    $schema,
    $id: `urn:gridkeeper:node-type:${nodeType}`,
    title: nodeType,
    description: `Device properties for nodeType ${nodeType}. Unknown properties are allowed; only nodeType is required.`,
    ...rest,
  };
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Renders a path as `a.b[2]`; keys that are not identifiers are quoted (`info["serial no"]`) so paths stay unambiguous. */
export function dottedPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
