// The three PUT /v1/device/{deviceId} modes (docs/api.md#device-put): how a body's `properties` combine with the stored ones.
// Results are built with own-property definitions only, and refused keys are reported rather than thrown, so no body
// can reach a prototype whatever mode it uses.
import { dottedPath } from './node-types.ts';
import { findJsonProblem, isPlainObject } from './patch.ts';

export const PUT_MODES = ['legacy', 'merge', 'strict'] as const;
export type PutMode = (typeof PUT_MODES)[number];
export type PutResult = { ok: true; properties: Record<string, unknown> } | { ok: false; path: string; message: string };

/**
 * legacy: the given top-level properties replace the stored ones, the others stay;
 * merge: objects merge recursively, arrays and scalars are replaced, `null` stores null (it does not delete);
 * strict: the body becomes the whole of properties.
 * On failure `path` is dotted and relative to `properties` (the caller prefixes it). Inputs are never mutated.
 */
export function applyPut(current: Record<string, unknown>, incoming: Record<string, unknown>, mode: PutMode): PutResult {
  if (!isPlainObject(incoming)) return { ok: false, path: '', message: 'expected an object' };
  const problem = findJsonProblem(incoming);
  if (problem) return { ok: false, path: dottedPath(problem.path), message: problem.message };
  if (mode === 'strict') return { ok: true, properties: cloneJson(incoming) };
  const result = cloneJson(current);
  if (mode === 'merge') mergeInto(result, incoming);
  else for (const key of Object.keys(incoming)) setOwn(result, key, cloneJson(incoming[key]));
  return { ok: true, properties: result };
}

/** The top-level properties a PUT writes, for the rights check: strict rewrites (and may delete) every key of both. */
export function putTouchedProperties(current: Record<string, unknown>, incoming: Record<string, unknown>, mode: PutMode): Set<string> {
  const keys = new Set(Object.keys(incoming));
  if (mode === 'strict') for (const key of Object.keys(current)) keys.add(key);
  return keys;
}

/** `target` is already a private copy, so nested objects may be merged in place. */
function mergeInto(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const key of Object.keys(patch)) {
    const next = patch[key];
    const previous = Object.hasOwn(target, key) ? target[key] : undefined;
    if (isPlainObject(next) && isPlainObject(previous)) mergeInto(previous, next);
    else setOwn(target, key, cloneJson(next));
  }
}

// defineProperty never invokes the `__proto__` setter, unlike `target[key] = value`
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

function cloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
