// RFC 6902 JSON Patch applied to a device's `properties` (PATCH /v1/device/{deviceId}, docs/api.md#device-patch).
// fast-json-patch does the mutations, but it resolves paths with `obj[key]`, so inherited members (`/toString`) look
// like existing values, and the nested steps of its move/copy run unvalidated (a missing target parent throws a plain
// TypeError). Every operation is therefore checked first against own properties only, and any error still raised is
// turned into a failure of that operation: user input never escapes as an exception.
import jsonpatch from 'fast-json-patch';
import { dottedPath } from './node-types.ts';

export type PatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; path: string; from: string };

export type ParsedPatch = { ok: true; ops: PatchOp[] } | { ok: false; message: string };
export type PatchResult =
  | { ok: true; properties: Record<string, unknown> }
  | { ok: false; index: number; op: string; path: string; message: string; reason: string };

export const MAX_PATCH_OPS = 1000;
const OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;
const MEMBERS = new Set(['op', 'path', 'value', 'from']);
const NEEDS_VALUE = new Set(['add', 'replace', 'test']);
const NEEDS_FROM = new Set(['move', 'copy']);
// refused anywhere (docs/api.md#bodies): assigning them can rewrite a prototype instead of storing data
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Checks the shape of a PATCH body; messages name the operation index (`[2].from: required for move`). */
export function parsePatchOps(body: unknown): ParsedPatch {
  if (!Array.isArray(body)) return { ok: false, message: 'expected an array of JSON Patch operations' };
  if (body.length > MAX_PATCH_OPS) return { ok: false, message: `at most ${MAX_PATCH_OPS} operations are allowed, got ${body.length}` };
  const ops: PatchOp[] = [];
  for (let i = 0; i < body.length; i++) {
    const checked = checkOp(body[i], i);
    if (typeof checked === 'string') return { ok: false, message: checked };
    ops.push(checked);
  }
  return { ok: true, ops };
}

/** The top-level properties the operations write (`edits`) and only read (`reads`), for the rights check. */
export function touchedProperties(ops: readonly PatchOp[]): { edits: Set<string>; reads: Set<string> } {
  const edits = new Set<string>();
  const reads = new Set<string>();
  for (const op of ops) {
    (op.op === 'test' ? reads : edits).add(topLevelKey(op.path));
    if (op.op === 'move') edits.add(topLevelKey(op.from)); // a move removes its source
    if (op.op === 'copy') reads.add(topLevelKey(op.from));
  }
  return { edits, reads };
}

/**
 * Applies the operations to a deep copy of `properties`, all or nothing. The first failing operation is reported
 * with the message of docs/api.md#device-patch. `properties` must be a plain object (a programmer error otherwise).
 */
export function applyPatch(properties: object, ops: readonly PatchOp[], deviceId: number): PatchResult {
  if (!isPlainObject(properties)) throw new TypeError('properties must be a plain object');
  const doc = cloneJson(properties) as Record<string, unknown>;
  for (let i = 0; i < ops.length; i++) {
    const raw: unknown = ops[i];
    const fail = (reason: string): PatchResult => {
      const op = isPlainObject(raw) ? String(raw.op) : String(raw);
      const path = isPlainObject(raw) && typeof raw.path === 'string' ? raw.path : '';
      return { ok: false, index: i, op, path, message: `Operation ${i} (${op}) failed for device ${deviceId} at path ${JSON.stringify(path)}`, reason };
    };
    // re-checked here too: this function is the last line before storage and must hold for any caller
    const op = checkOp(raw, i);
    if (typeof op === 'string') return fail(op);
    try {
      const reason = applyOne(doc, op, i);
      if (reason) return fail(reason);
    } catch (error) {
      return fail(error instanceof jsonpatch.JsonPatchError ? error.message : 'operation could not be applied');
    }
  }
  return { ok: true, properties: doc };
}

/** One operation on the working copy; returns why it failed, or undefined. The copy is discarded on failure. */
function applyOne(doc: Record<string, unknown>, op: PatchOp, index: number): string | undefined {
  const run = (operation: Parameters<typeof jsonpatch.applyOperation>[1]) => {
    jsonpatch.applyOperation(doc, operation, true, true, true, index);
  };
  switch (op.op) {
    case 'add': {
      const why = checkAddTarget(doc, op.path);
      if (why) return why;
      run({ op: 'add', path: op.path, value: cloneJson(op.value) }); // cloned: later ops must not alter the caller's value
      return undefined;
    }
    case 'remove':
    case 'replace': {
      if (!resolve(doc, op.path).found) return 'path does not exist';
      run(op.op === 'remove' ? { op: 'remove', path: op.path } : { op: 'replace', path: op.path, value: cloneJson(op.value) });
      return undefined;
    }
    case 'test': {
      const target = resolve(doc, op.path);
      if (!target.found) return 'path does not exist';
      return jsonEqual(target.value, op.value) ? undefined : 'test failed: values differ';
    }
    case 'copy':
    case 'move': {
      const source = resolve(doc, op.from);
      if (!source.found) return 'from does not exist';
      if (op.op === 'move' && op.path.startsWith(`${op.from}/`)) return 'cannot move a value into itself';
      // done as remove + add so the target is checked against the document as it is after the removal
      if (op.op === 'move') run({ op: 'remove', path: op.from });
      const why = checkAddTarget(doc, op.path);
      if (why) return why;
      run({ op: 'add', path: op.path, value: op.op === 'copy' ? cloneJson(source.value) : source.value });
      return undefined;
    }
  }
}

/** RFC 6902 add: the parent must exist; in an array the last segment is `-` or an index no greater than its length. */
function checkAddTarget(doc: unknown, path: string): string | undefined {
  const segments = splitPointer(path);
  const last = segments.pop() as string;
  const parent = resolveSegments(doc, segments);
  if (!parent.found || typeof parent.value !== 'object' || parent.value === null) return 'parent of path does not exist';
  if (Array.isArray(parent.value) && last !== '-' && !(isArrayIndex(last) && Number(last) <= parent.value.length)) {
    return 'array index out of range';
  }
  return undefined;
}

function resolve(doc: unknown, pointer: string): { found: boolean; value?: unknown } {
  return resolveSegments(doc, splitPointer(pointer));
}

/** Walks own properties only, so `/toString` is missing, not a function. */
function resolveSegments(doc: unknown, segments: readonly string[]): { found: boolean; value?: unknown } {
  let current = doc;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (!isArrayIndex(segment) || Number(segment) >= current.length) return { found: false };
      current = current[Number(segment)];
    } else if (isPlainObject(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

/** Validates one operation; returns a normalised copy (only the members its op uses) or the error message. */
function checkOp(raw: unknown, i: number): PatchOp | string {
  if (!isPlainObject(raw)) return `[${i}]: expected an operation object`;
  for (const key of Object.keys(raw)) {
    if (FORBIDDEN_KEYS.has(key)) return `${dottedPath([i, key])}: key "${key}" is refused (prototype pollution)`;
    if (!MEMBERS.has(key)) return `${dottedPath([i, key])}: unknown field`;
  }
  const { op, path, from } = raw;
  if (typeof op !== 'string' || !(OPS as readonly string[]).includes(op)) return `[${i}].op: expected one of ${OPS.join(', ')}`;
  const pathError = checkPointer(path);
  if (pathError) return `[${i}].path: ${pathError}`;
  // RFC 6902 ignores members an op does not use, but a present `from` or `value` is still checked: they are body input
  if (from !== undefined || NEEDS_FROM.has(op)) {
    if (from === undefined) return `[${i}].from: required for ${op}`;
    const fromError = checkPointer(from);
    if (fromError) return `[${i}].from: ${fromError}`;
  }
  if (!Object.hasOwn(raw, 'value') || raw.value === undefined) {
    if (NEEDS_VALUE.has(op)) return `[${i}].value: required for ${op}`;
  } else {
    const problem = findJsonProblem(raw.value);
    if (problem) return `${dottedPath([i, 'value', ...problem.path])}: ${problem.message}`;
  }
  if (op === 'remove') return { op, path: path as string };
  if (op === 'move' || op === 'copy') return { op, path: path as string, from: from as string };
  return { op: op as 'add' | 'replace' | 'test', path: path as string, value: raw.value };
}

function checkPointer(pointer: unknown): string | undefined {
  if (typeof pointer !== 'string') return 'expected a JSON pointer string';
  if (pointer === '') return 'the whole document cannot be targeted; name a property (e.g. "/name")';
  if (!pointer.startsWith('/')) return 'a JSON pointer must start with "/"';
  if (/~(?![01])/.test(pointer)) return '"~" must be escaped as "~0" ("~1" stands for "/")';
  for (const segment of splitPointer(pointer)) {
    if (FORBIDDEN_KEYS.has(segment)) return `segment "${segment}" is refused (prototype pollution)`;
  }
  return undefined;
}

/** Splits a non-empty pointer into unescaped segments; `~1` before `~0` as RFC 6901 requires. */
function splitPointer(pointer: string): string[] {
  return pointer.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function topLevelKey(pointer: string): string {
  return splitPointer(pointer)[0];
}

/**
 * The first place where a value is not plain JSON or carries a refused key, as path segments relative to the value.
 * Iterative, so a deeply nested value cannot overflow the stack.
 */
export function findJsonProblem(value: unknown): { path: (string | number)[]; message: string } | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (current === null || typeof current === 'string' || typeof current === 'boolean') continue;
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) return { path, message: 'expected a finite number' };
      continue;
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: [...path, i] });
      continue;
    }
    if (!isPlainObject(current)) return { path, message: 'expected a JSON value' };
    const keys = Object.keys(current);
    for (const key of keys) {
      if (FORBIDDEN_KEYS.has(key)) return { path: [...path, key], message: `key "${key}" is refused (prototype pollution)` };
    }
    for (let k = keys.length - 1; k >= 0; k--) stack.push({ value: current[keys[k]], path: [...path, keys[k]] });
  }
  return undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isArrayIndex(segment: string): boolean {
  return /^(0|[1-9][0-9]*)$/.test(segment); // RFC 6901: no leading zeros, no sign, no "-"
}

function cloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** RFC 6902 test equality over own keys (fast-json-patch's compares via `b.hasOwnProperty`, which a key can shadow). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((k) => Object.hasOwn(right, k) && jsonEqual(left[k], right[k]));
}
