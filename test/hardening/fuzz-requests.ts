// Generators of hostile requests for every declared route (the route registry is the list of targets, so a new route
// is fuzzed without anyone remembering to add it). Seeded fast-check arbitraries: a failure is reproducible.
import fc from 'fast-check';
import type { AnyRouteSpec } from '../../src/http/route.ts';
import { fromSchema, incompressible, mutateOne } from './schema-arbitrary.ts';

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** which token to send */
  as: 'admin' | 'user' | 'none' | 'garbage';
  route: string;
}

const NASTY_STRINGS = [
  '', ' ', '0', '-1', '1.5', '1e309', '-0', 'NaN', 'Infinity', '9007199254740993', '99999999999999999999999',
  '*', ',', '1,,2', '1,2,', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty',
  "1' OR '1'='1", '1; DROP TABLE users; --', '") OR 1=1 --', '%', '_', '\\', '\u0000', '\ud800', '🙂', 'é',
  '../../etc/passwd', '<script>alert(1)</script>', '${7*7}', 'a'.repeat(300), 'true', 'null', '[]', '{}', 'x\udfff', '\udc00\ud800',
  '2026-13-45T99:99:99Z', '1970-01-01T00:00:00Z', 'Sun, 06 Nov 1994 08:49:37 GMT', 'GK-AAAAA', 'admin@localhost',
];

/** Percent-encodes the UTF-8 bytes of s (lone surrogates become U+FFFD), never throwing like encodeURIComponent. */
function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const nastyString = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

const nastyNumber = fc.oneof(
  fc.constantFrom(0, -1, 1, 2, 3, 1.5, -0, 1e308, -1e308, 2 ** 53, 2 ** 63, 2 ** 64, Number.MAX_SAFE_INTEGER + 2, 1e-300),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const pathValue = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('1', '2', '3', '4', '1,2', '*', '0') },
  { weight: 3, arbitrary: nastyString.map(pct) },
  { weight: 1, arbitrary: fc.constantFrom('%ZZ', '%C3%28', '%00', '%', '%E2%82', '1%2C2', '%2A') },
  { weight: 1, arbitrary: fc.array(fc.nat(1e6), { minLength: 1, maxLength: 1100 }).map((a) => a.join(',')) },
);

/** JSON values with hostile leaves and keys. */
const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString, nastyNumber, fc.boolean(), fc.constant(null),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.dictionary(fc.oneof(nastyString, fc.constantFrom('filter', 'id', 'name', 'properties', 'select', 'from', 'where', 'op', 'path', 'value', 'key', 'nodeId')), tie('value'), { maxKeys: 6 }),
  ),
})).value;

function deep(depth: number, array: boolean): string {
  return array ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** Bodies: plausible-shaped objects with hostile values, structural attacks, and broken encodings. */
const hostileBody: fc.Arbitrary<{ text: string | Uint8Array; type?: string }> = fc.oneof(
  { weight: 6, arbitrary: hostileJson.map((v) => ({ text: JSON.stringify(v) ?? 'null' })) },
  { weight: 1, arbitrary: fc.constantFrom(
    { text: deep(65, false) }, { text: deep(2000, true) }, { text: deep(100_000, true) },
    { text: '{"__proto__":{"admin":true}}' }, { text: '{"constructor":{"prototype":{"x":1}}}' },
    { text: '[{"op":"add","path":"/__proto__/x","value":1}]' }, { text: '[{"op":"move","from":"/a","path":"/a/b"}]' },
    { text: '[{"op":"copy","from":"","path":"/x"}]' }, { text: '[{"op":"add","path":"","value":[]}]' },
    { text: JSON.stringify({ filter: { id: Array.from({ length: 50_000 }, (_, i) => i) } }) },
    { text: JSON.stringify(Array.from({ length: 1001 }, () => ({ select: ['a'], from: { measurement: 'm', database: 'd', retentionPolicy: 'r' } }))) },
    { text: JSON.stringify({ select: ['x'], from: { measurement: 'm', database: 'd', retentionPolicy: 'r' }, limit: 1e300 }) },
    { text: JSON.stringify({ count: 1e9, type: 'residential', duration: 1 }) },
    { text: '{"a":1' }, { text: '{"a":1}}' }, { text: '\u0000' }, { text: 'null' }, { text: '' },
    { text: Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
    { text: Uint8Array.from([0xc3, 0x28, 0xa0, 0xa1]) },
    { text: '{"a":1}', type: 'text/plain' }, { text: '{"a":1}', type: 'application/json; charset=latin1' },
    { text: '{"a":1}', type: 'application/xml' }, { text: 'x'.repeat(1024 * 1024 + 10) },
  ) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((s) => ({ text: s })) },
);

/** Line protocol for the telemetry write endpoint: valid-looking lines with hostile parts, and garbage. */
const lineProtocol = fc.oneof(
  fc.array(fc.tuple(nastyString, nastyString, nastyString, fc.oneof(nastyNumber.map(String), nastyString)), { maxLength: 5 })
    .map((lines) => lines.map(([m, k, v, f]) => `${m},nodeId=${k} ${v}=${f}`).join('\n')),
  fc.constantFrom('m,nodeId=x f=1i 1', 'm f=1', 'm,nodeId=a f="unterminated', 'm,nodeId=a f=1 99999999999999999999999',
    'm,nodeId=a\\ b f=t,g=F,h=-1.5e10,s="a,b=c d"', '\n\n#comment\n', 'm,nodeId=a f=1u', 'm,nodeId=a,nodeId=b f=1'),
  // names and series keys around InfluxDB's 65,535-byte limit, which no database index entry holds whole
  fc.constantFrom(
    `${incompressible(70_000)},nodeId=a f=1`, `${incompressible(60_000)},nodeId=a f=1`,
    `w,${Array.from({ length: 10_000 }, (_, i) => `t${i}=${incompressible(3, i)}`).join(',')},nodeId=a f=1`,
    `w,${Array.from({ length: 3_000 }, (_, i) => `t${i}=${incompressible(3, i)}`).join(',')},nodeId=a f=1`,
    `m,nodeId=a,big=${incompressible(60_000)} f=1`, `m,nodeId=a ${incompressible(60_000)}=1`, `m,nodeId=a ${incompressible(66_000)}=1`,
    `m,nodeId=${incompressible(60_000)} f=1`, `m,nodeId=a s="${incompressible(100_000)}"`,
  ),
  fc.string({ maxLength: 300 }),
);

const extraQueryKey = fc.constantFrom('x', 'verbose', 'limit', '__proto__', 'id', 'filter[id]', 'userRights.roleManagement');

/** `bodySchema`: the route's request-body JSON Schema from /openapi.json, for valid-then-mutated bodies. */
export function requestFor(spec: AnyRouteSpec, bodySchema?: Record<string, unknown>, querySchemas: Record<string, Record<string, unknown>> = {}): fc.Arbitrary<FuzzRequest> {
  const params = [...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
  const queryKeys = Object.keys((spec.query as unknown as { entries?: Record<string, unknown> } | undefined)?.entries ?? {});
  const plausible = fc.constantFrom('1', '2', '3', '1,2', 'true', 'false', 'legacy', 'merge', 'strict', 'free', 'premium',
    'admin@localhost', 'new-user@test', 'roleManagement', 'deviceManagement', 'nodeA', 'a', 'read', 'edit', 'ns', 'db', 'autogen');
  const valueFor = (key: string) => {
    const schema = querySchemas[key];
    const enumValues = (schema?.enum ?? (schema?.anyOf as Record<string, unknown>[] | undefined)?.flatMap((s) => (s.enum as unknown[]) ?? (s.const !== undefined ? [s.const] : []))) as unknown[] | undefined;
    const typed = enumValues?.length ? fc.constantFrom(...enumValues.map(String))
      : /(^id$|Id$|limit|count)/.test(key) ? fc.constantFrom('1', '2', '3', '4', '1,2')
        : /email/i.test(key) ? fc.constantFrom('admin@localhost', 'new-user@test', 'fuzz-user@test')
          : /validate|dryRun|^userRights\./.test(key) ? fc.constantFrom('true', 'false') : plausible;
    return fc.oneof(
      { weight: 3, arbitrary: typed },
      { weight: 1, arbitrary: nastyString },
    );
  };
  const pair = fc.oneof(
    { weight: 12, arbitrary: queryKeys.length ? fc.constantFrom(...queryKeys).chain((k) => fc.tuple(fc.constant(k), valueFor(k))) : fc.tuple(extraQueryKey, nastyString) },
    { weight: 1, arbitrary: fc.tuple(extraQueryKey, nastyString) },
  );
  // Routes without query parameters get one (unknown, so 400) only now and then: most requests should reach the handler.
  const query = queryKeys.length ? fc.uniqueArray(pair, { minLength: 1, maxLength: 3, selector: ([k]) => k })
    : fc.oneof({ weight: 9, arbitrary: fc.constant([] as [string, string][]) }, { weight: 1, arbitrary: fc.array(pair, { maxLength: 1 }) });
  const telemetryWrite = spec.rawBody !== undefined;
  // most writes name a namespace, so that their lines reach the catalogue and the store instead of a 400 on the query
  const writeQuery = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<[string, string][]>([['db', 'fuzz']], [['db', 'fuzz'], ['rp', 'autogen']], [['db', 'fuzz'], ['precision', 's']]) },
    { weight: 1, arbitrary: query },
  );
  return fc.record({
    pathValues: fc.tuple(...params.map(() => pathValue)),
    query: telemetryWrite ? writeQuery : query,
    body: telemetryWrite ? lineProtocol.map((t) => ({ text: t as string | Uint8Array, type: 'text/plain' as string | undefined }))
      : bodySchema ? fc.oneof(
        { weight: 2, arbitrary: hostileBody },
        // valid by the route's own schema: reaches the handler (rights, state, SQL)
        { weight: 2, arbitrary: fromSchema(bodySchema).map((v) => ({ text: JSON.stringify(v) ?? 'null' as string | Uint8Array, type: undefined as string | undefined })) },
        // valid but for one hostile value somewhere inside
        { weight: 2, arbitrary: fc.tuple(fromSchema(bodySchema), fc.nat(), fc.nat()).map(([v, a, b]) => ({ text: JSON.stringify(mutateOne(v, a, b)) ?? 'null' as string | Uint8Array, type: undefined as string | undefined })) },
      ) : hostileBody,
    sendBody: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    as: fc.constantFrom('admin', 'admin', 'admin', 'user', 'user', 'none', 'garbage') as fc.Arbitrary<FuzzRequest['as']>,
    gzip: fc.boolean(),
  }).map(({ pathValues, query: q, body, sendBody, as }): FuzzRequest => {
    let i = 0;
    const path = spec.path.replace(/:(\w+)/g, () => pathValues[i++] ?? '1');
    const search = q.length ? '?' + q.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&') : '';
    const withBody = sendBody && spec.method !== 'get';
    return {
      method: spec.method.toUpperCase(),
      path: path + search,
      headers: withBody ? { 'content-type': body.type ?? 'application/json' } as Record<string, string> : {},
      ...(withBody ? { body: body.text } : {}),
      as,
      route: `${spec.method.toUpperCase()} ${spec.path}`,
    };
  });
}
