// Parsing at the edge: JSON text -> value (depth and forbidden-key checks), valibot issues -> one readable message
// naming the field path, and query-string helpers (repeated or comma-separated lists, integers, booleans).
import * as v from 'valibot';
import { ApiError } from './errors.ts';

export const MAX_JSON_DEPTH = 64;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const FORBIDDEN_KEYS_TEXT = [...FORBIDDEN_KEYS];

/** Parses a JSON request body. Refuses nesting deeper than 64 and the keys __proto__/constructor/prototype anywhere. */
export function parseJsonBody(text: string): unknown {
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH) throw new ApiError('BAD_REQUEST', `body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let forbidden: string | undefined;
  let value: unknown;
  try {
    // A reviver makes JSON.parse several times slower; a key can only be a forbidden one if its name is in the text
    // as written, or hidden behind a \u escape (its letters have no other escape): without either, no reviver.
    value = !text.includes('\\u') && !FORBIDDEN_KEYS_TEXT.some((word) => text.includes(word)) ? JSON.parse(text) : JSON.parse(text, function (key, val) {
      if (FORBIDDEN_KEYS.has(key) && !Array.isArray(this)) forbidden ??= key;
      return val;
    });
  } catch (err) {
    throw new ApiError('BAD_REQUEST', `body: malformed JSON (${(err as Error).message})`);
  }
  if (forbidden !== undefined) throw new ApiError('BAD_REQUEST', `body: the key "${forbidden}" is not allowed`);
  return value;
}

/**
 * docs/api.md#bodies: text no backend can store is refused, naming where: U+0000 (PostgreSQL text cannot hold it) and
 * an unpaired UTF-16 surrogate such as `"\ud800"` (PostgreSQL's JSON refuses it, UTF-8 cannot encode it), in any key or
 * string. Every backend then answers alike. Runs after the schema, so a field the schema refuses is named by the
 * schema's own message.
 */
export function refuseUnstorableText(value: unknown, path = ''): void {
  if (!hasUnstorable(value)) return;
  refuseAt(value, path);
}

/** Why a key or string cannot be stored, or undefined. */
function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return 'the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'an unpaired UTF-16 surrogate';
  return undefined;
}

/** Whether any key or string cannot be stored (no paths are made: the common case finds none). */
function hasUnstorable(value: unknown): boolean {
  if (typeof value === 'string') return unstorable(value) !== undefined;
  if (Array.isArray(value)) return value.some(hasUnstorable);
  if (typeof value === 'object' && value !== null) {
    for (const k in value) if (Object.hasOwn(value, k) && (unstorable(k) !== undefined || hasUnstorable((value as Record<string, unknown>)[k]))) return true;
  }
  return false;
}

function refuseAt(value: unknown, path: string): void {
  if (typeof value === 'string') {
    const why = unstorable(value);
    if (why !== undefined) throw new ApiError('BAD_REQUEST', `${path || 'body'}: text must not contain ${why}`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => refuseAt(v, `${path}[${i}]`));
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const why = unstorable(k);
      if (why !== undefined) throw new ApiError('BAD_REQUEST', `${path || 'body'}: a key must not contain ${why}`);
      refuseAt(v, path ? `${path}.${k}` : k);
    }
  }
}

/** Maximum bracket nesting outside strings: a linear scan, so deep input is refused before JSON.parse recurses. */
function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92 /* \ */) i++;
      else if (ch === 34 /* " */) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 || ch === 91) { if (++depth > max) max = depth; }
    else if (ch === 125 || ch === 93) depth--;
  }
  return max;
}

/** `filter.id[2]` from a valibot issue path. */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  let out = '';
  for (const item of issue.path ?? []) {
    const key = item.key as unknown;
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** One sentence for the first issue: `<where>.<path>: <what was expected>`. */
export function formatIssue(issue: v.BaseIssue<unknown>, where: string): string {
  const path = issuePath(issue);
  const at = path === '' ? where : where === 'body' ? path : `${where}.${path}`;
  if (issue.expected === 'never' && issue.kind === 'schema') return `${at}: unknown field`;
  if (issue.kind === 'schema' && issue.received === 'undefined' && issue.message.startsWith('Invalid key')) return `${at}: required`;
  if (issue.type === 'union' && issue.issues?.length) {
    // A union names its deepest branch failure: that is what the caller most likely meant. Valibot gives the branch
    // issues paths relative to the union, so they are joined to the union's own path.
    const outer = issue.path ?? [];
    const absolute = (inner: v.BaseIssue<unknown>) => {
      const p = inner.path ?? [];
      const startsWithOuter = outer.length > 0 && p.length >= outer.length && outer.every((item, i) => p[i]?.key === item.key);
      return startsWithOuter ? p : [...outer, ...p];
    };
    const deepest = [...issue.issues].sort((a, b) => absolute(b).length - absolute(a).length)[0];
    const path = absolute(deepest);
    if (path.length > outer.length) return formatIssue({ ...deepest, path: path as typeof deepest.path }, where);
  }
  return `${at}: ${issue.message}`;
}

const OBJECT_TYPES = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest', 'record']);
const WRAPPER_TYPES = new Set(['optional', 'nullable', 'nullish', 'exact_optional', 'undefinedable', 'non_optional', 'non_nullable', 'non_nullish']);

interface SchemaShape {
  type: string;
  wrapped?: SchemaShape;
  entries?: Record<string, SchemaShape>;
  item?: SchemaShape;
  options?: SchemaShape[];
}

/**
 * The path of the first JSON array given where the schema wants an object, or undefined. valibot accepts an array as
 * an object (arrays are objects) and reads the wanted keys off it: `[]` passes as `{}`, and `filter` finds
 * Array.prototype.filter. Followed through wrappers, object entries, array items, and unions whose options all agree.
 */
export function arrayForObject(schema: SchemaShape, input: unknown, path = ''): string | undefined {
  const found = misplacedArray(schema, input);
  if (found === undefined) return undefined;
  let out = path;
  for (let k = found.length - 1; k >= 0; k--) {
    const at = found[k];
    out += typeof at === 'number' ? `[${at}]` : out === '' ? at : `.${at}`;
  }
  return out;
}

/** arrayForObject's walk: the path's steps, innermost first (built only when an array is found: most bodies have none). */
function misplacedArray(schema: SchemaShape, input: unknown): Array<string | number> | undefined {
  while (WRAPPER_TYPES.has(schema.type) && schema.wrapped) schema = schema.wrapped;
  if (OBJECT_TYPES.has(schema.type)) {
    if (Array.isArray(input)) return [];
    if (input === null || typeof input !== 'object' || !schema.entries) return undefined;
    for (const key in schema.entries) {
      if (!Object.hasOwn(input, key)) continue;
      const found = misplacedArray(schema.entries[key], (input as Record<string, unknown>)[key]);
      if (found !== undefined) {
        found.push(key);
        return found;
      }
    }
  } else if (schema.type === 'array' && schema.item && Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) {
      const found = misplacedArray(schema.item, input[i]);
      if (found !== undefined) {
        found.push(i);
        return found;
      }
    }
  } else if (schema.type === 'union' && schema.options && Array.isArray(input)) {
    // an array is refused only when no option takes arrays
    if (schema.options.every((o) => misplacedArray(o, input) !== undefined)) return [];
  }
  return undefined;
}

export function parseWith<S extends v.GenericSchema>(schema: S, input: unknown, where: string): v.InferOutput<S> {
  const misplaced = arrayForObject(schema as unknown as SchemaShape, input);
  if (misplaced !== undefined) {
    const at = misplaced === '' ? where : where === 'body' ? misplaced : `${where}.${misplaced}`;
    throw new ApiError('BAD_REQUEST', `${at}: expected an object, received an array`);
  }
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (!result.success) throw new ApiError('BAD_REQUEST', formatIssue(result.issues[0], where));
  return result.output;
}

// ---- query-string schemas: values arrive as a string, or string[] when repeated ----

type QueryValue = string | string[];
const lastOf = (x: QueryValue) => (Array.isArray(x) ? x[x.length - 1] : x);

const INT = /^(0|[1-9]\d{0,15})$/;

/** An integer >= 0 (ids, limits). */
export const qInt = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform(lastOf),
  v.regex(INT, 'expected an integer >= 0'),
  v.transform(Number),
  v.safeInteger('expected an integer >= 0'),
);

export const qBool = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform(lastOf),
  v.picklist(['true', 'false'], 'expected true or false'),
  v.transform((s) => s === 'true'),
);

export const qString = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform(lastOf),
);

/** A list of strings: repeated (`?a=1&a=2`) or comma-separated (`?a=1,2`). */
export const qStringList = v.pipe(
  v.union([v.string(), v.array(v.string())]),
  v.transform((x) => (Array.isArray(x) ? x : [x]).flatMap((s) => s.split(',')).filter((s) => s !== '')),
);

/** A list of integer ids: repeated or comma-separated. */
export const qIntList = v.pipe(
  qStringList,
  v.check((list) => list.every((s) => INT.test(s)), 'expected integers >= 0'),
  v.transform((list) => list.map(Number)),
);

/** Ids from a path segment; `several` records whether the caller wrote a list (see oneOrMany). */
export type IdList = number[] & { readonly several: boolean };

/**
 * Path segment holding one id or a comma-separated list (`7` or `7,8,9`): the ids in request order, each once (`5,5`
 * acts on 5 once), with `several` set when the segment was written as a list (docs/api.md#id-lists).
 */
export const idList = v.pipe(
  v.string(),
  v.regex(/^(0|[1-9]\d{0,15})(,(0|[1-9]\d{0,15})){0,999}$/, 'expected an id or comma-separated ids'),
  v.transform((s): IdList => Object.assign([...new Set(s.split(',').map(Number))], { several: s.includes(',') })),
  v.check((ids) => ids.every(Number.isSafeInteger), 'expected ids >= 0'),
);

/**
 * The one answer-shape rule for id lists: ids written as a list (`7,8`, `5,5`, `?deviceId=1&deviceId=2`) answer with an
 * array in request order, a single id with the object itself.
 */
export function oneOrMany<T>(several: boolean, items: readonly T[]): T | readonly T[] {
  return several ? items : items[0];
}

/**
 * The relations named by an id list of a role's path (`/v1/role/R/member/7,8`), in request order, from the rows found
 * for those ids: 404 for an id that is not a relation of role R, whether it exists elsewhere or not.
 */
export function relationsOfRole<R extends { id: number }>(found: readonly R[], ids: readonly number[], roleId: number, roleOf: (row: R) => number, what: string): R[] {
  const byId = new Map(found.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = byId.get(id);
    if (!row || roleOf(row) !== roleId) throw new ApiError('NOT_FOUND', `${what} ${id} of role ${roleId} not found`);
    return row;
  });
}

/** Path segment: an id, comma-separated ids, or `*` (every role visible to the caller). */
export const idListOrStar = v.union([v.literal('*'), idList]);

export const pathInt = v.pipe(v.string(), v.regex(INT, 'expected an integer >= 0'), v.transform(Number), v.safeInteger());

// ---- JSON body building blocks ----

/** A free-form JSON object (valibot's own object schemas read keys off arrays too; a JSON object is never an array). */
export const jsonObject = v.custom<Record<string, unknown>>(
  (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
  (issue) => (Array.isArray(issue.input) ? 'expected an object, received an array' : 'expected an object'));

export const jsonId = v.pipe(v.number(), v.safeInteger('expected an integer >= 0'), v.minValue(0, 'expected an integer >= 0'));

/** uuids (licenses, customers, orders, companies): any letter case in, lower case out (as they are stored). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const uuid = v.pipe(v.string('expected a uuid'), v.regex(UUID_PATTERN, 'expected a uuid'), v.toLowerCase());
