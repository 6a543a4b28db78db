// Property edits as RFC 6902 operations on top-level properties (the unit of rights, docs/api.md#device-rights).
export interface PatchOp { op: 'add' | 'replace' | 'remove'; path: string; value?: unknown }

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}

const pointer = (key: string) => '/' + key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The operations that turn `base` into `draft`, one per changed top-level property. */
export function diffProperties(base: Record<string, unknown>, draft: Record<string, unknown>): PatchOp[] {
  const ops: PatchOp[] = [];
  for (const key of Object.keys(draft)) {
    if (!(key in base)) ops.push({ op: 'add', path: pointer(key), value: draft[key] });
    else if (!sameJson(base[key], draft[key])) ops.push({ op: 'replace', path: pointer(key), value: draft[key] });
  }
  for (const key of Object.keys(base)) if (!(key in draft)) ops.push({ op: 'remove', path: pointer(key) });
  return ops;
}

export const keyOf = (op: PatchOp) => op.path.slice(1).replace(/~1/g, '/').replace(/~0/g, '~');

/** Applies my operations to another version of the properties (reapplying after a 412). */
export function applyOps(props: Record<string, unknown>, ops: PatchOp[]): Record<string, unknown> {
  const out = { ...props };
  for (const op of ops) {
    if (op.op === 'remove') delete out[keyOf(op)];
    else out[keyOf(op)] = op.value;
  }
  return out;
}

/** Reapplied on a newer version, `replace` of a property deleted meanwhile must become `add` (and a `remove` of one gone is dropped). */
export function rebaseOps(props: Record<string, unknown>, ops: PatchOp[]): PatchOp[] {
  return ops.flatMap((op): PatchOp[] => {
    const present = keyOf(op) in props;
    if (op.op === 'remove') return present ? [op] : [];
    return [{ op: present ? 'replace' : 'add', path: op.path, value: op.value }];
  });
}
