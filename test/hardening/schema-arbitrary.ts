// A fast-check arbitrary of values that satisfy a JSON Schema (the subset our route schemas produce), so the fuzzer
// gets past validation and into the handlers; `mutateOne` then plants one hostile value at a random depth.
import fc from 'fast-check';

type Schema = Record<string, any>;

const SAMPLE_STRINGS = ['a', 'b', 'x', 'nodeA', 'name', 'power', 'residential', 'smartgridController', '1', '*', '__proto__', "'; --", '2026-01-01T00:00:00Z'];

export function fromSchema(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alts = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alts) && alts.length) return fc.oneof(...alts.map((s: Schema) => fromSchema(s, depth + 1)));
  if (Array.isArray(schema.allOf) && schema.allOf.length) return fromSchema(Object.assign({}, ...schema.allOf), depth);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const props: Record<string, Schema> = schema.properties ?? {};
      const required = new Set<string>(schema.required ?? []);
      const entries = Object.entries(props);
      if (entries.length === 0) {
        return fc.dictionary(fc.constantFrom(...SAMPLE_STRINGS), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean()), { maxKeys: 3 });
      }
      return fc.record(Object.fromEntries(entries.map(([k, s]) => [k, fromSchema(s, depth + 1)])),
        { requiredKeys: entries.map(([k]) => k).filter((k) => required.has(k)) });
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const max = Math.min(schema.maxItems ?? min + 3, min + 3);
      return fc.array(fromSchema(schema.items, depth + 1), { minLength: min, maxLength: Math.max(min, max) });
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 5, (schema.minimum ?? 0) + 5) });
    case 'number':
      return fc.double({ min: schema.minimum ?? 0, max: schema.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'string': {
      const min = schema.minLength ?? 0;
      if (schema.format === 'date-time') return fc.constantFrom('2026-01-01T00:00:00.000Z', '2025-06-30T12:00:00+02:00');
      if (schema.format === 'email') return fc.constantFrom('admin@localhost', 'x@y.z');
      return fc.constantFrom(...SAMPLE_STRINGS).map((s) => s.padEnd(min, 'x').slice(0, schema.maxLength ?? 1000));
    }
    default:
      return fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null));
  }
}

const HOSTILE: unknown[] = [
  null, -1, 1e308, 2 ** 63, -0, 1.5, '', '__proto__', "1' OR 1=1 --", '\u0000', 'a'.repeat(5000), [], {}, [[[[[]]]]],
  { __proto__x: 1 }, true, 'NaN', Number.MAX_SAFE_INTEGER + 2, Array.from({ length: 2000 }, (_, i) => i),
  // text one backend would take and another refuse: unpaired surrogates, and long text no index entry holds
  '\ud800', 'x\udfff', { '\udc00': 1 }, incompressible(3000), '\u{1F50B}'.repeat(700),
];

/** Letters and digits that do not compress (a database compresses long repeats into a short index entry). */
export function incompressible(n: number, seed = 1): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out += 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[(x >>> 16) % 62];
  }
  return out;
}

/** Replaces one node of a JSON value (chosen by `pick`) with a hostile value. */
export function mutateOne(value: unknown, pick: number, hostile: number): unknown {
  const nodes: { parent: any; key: string | number }[] = [];
  (function walk(v: unknown) {
    if (Array.isArray(v)) v.forEach((x, i) => { nodes.push({ parent: v, key: i }); walk(x); });
    else if (v && typeof v === 'object') for (const k of Object.keys(v)) { nodes.push({ parent: v, key: k }); walk((v as any)[k]); }
  })(value);
  const replacement = HOSTILE[hostile % HOSTILE.length];
  if (nodes.length === 0) return replacement;
  const { parent, key } = nodes[pick % nodes.length];
  parent[key] = replacement;
  return value;
}
