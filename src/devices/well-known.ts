// The well-known properties that are checked on EVERY write, validate flag or not: they are lookup keys (nodeId is
// unique and addresses controllers and telemetry; nodeType picks the schema and is a query filter; isActive is a
// query filter), so a wrong type would make them silently unfindable. Everything else about a device's properties is
// free-form unless the caller asks for `?validate=true` (node-types.ts).
import * as v from 'valibot';
import { dottedPath } from './node-types.ts';
import { jsonObject } from '../http/validate.ts';

const MAX_KEY_VALUE = 200;

const WELL_KNOWN = {
  nodeId: v.optional(v.pipe(v.string('expected a string'), v.minLength(1, 'expected a non-empty string'),
    v.maxLength(MAX_KEY_VALUE, `expected at most ${MAX_KEY_VALUE} characters`), v.description('Unique among devices'))),
  nodeType: v.optional(v.pipe(v.string('expected a string'), v.minLength(1, 'expected a non-empty string'),
    v.maxLength(MAX_KEY_VALUE, `expected at most ${MAX_KEY_VALUE} characters`), v.description('Selects the validation schema'))),
  isActive: v.optional(v.boolean('expected a boolean')),
};
const WELL_KNOWN_KEYS = Object.keys(WELL_KNOWN);


/** Device properties in a request body: a free-form JSON object whose well-known keys have their types. */
export const PropertiesInput = v.pipe(
  v.intersect([jsonObject, v.looseObject(WELL_KNOWN)]),
  v.description('Free-form device properties; nodeId (unique), nodeType (string) and isActive (boolean) are typed'),
);

const WellKnownObject = v.looseObject(WELL_KNOWN);

/**
 * The first well-known property among `keys` (all when omitted) with a wrong type, as a dotted path relative to
 * properties and a message. Only the given keys are looked at so a caller is never told about properties it did
 * not touch (and may not be able to read).
 */
export function wellKnownProblem(properties: Record<string, unknown>, keys?: Iterable<string>): { path: string; message: string } | undefined {
  const subset: Record<string, unknown> = {};
  const chosen = keys ? new Set(keys) : undefined;
  for (const key of WELL_KNOWN_KEYS) {
    if ((chosen === undefined || chosen.has(key)) && Object.hasOwn(properties, key)) subset[key] = properties[key];
  }
  const result = v.safeParse(WellKnownObject, subset, { abortEarly: true });
  if (result.success) return undefined;
  const issue = result.issues[0];
  return { path: dottedPath((issue.path ?? []).map((item) => item.key as string | number)), message: issue.message };
}
