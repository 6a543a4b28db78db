import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';
import { QueryBodySchema, QuerySchema, WriteParamsSchema } from '../../src/telemetry/telemetry.schemas.ts';

const ns = { version: '1', database: 'db', retentionPolicy: 'autogen' };
const base = { select: ['power'], from: { measurement: 'm', namespace: ns } };

/** The first issue as `path: message`, or 'ok'. */
function check(schema: v.GenericSchema, input: unknown): string {
  const r = v.safeParse(schema, input, { abortPipeEarly: true });
  if (r.success) return 'ok';
  const issue = r.issues[0];
  const path = (issue.path ?? []).map((p) => String(p.key)).join('.');
  return `${path}: ${issue.message}`;
}

describe('query schema: happy', () => {
  it('accepts a full query and passes it through unchanged', () => {
    const query = {
      select: ['power', { field: 'energy', function: 'sum' }],
      from: { measurement: 'm', namespace: { version: '2', organization: 'o', bucket: 'b_one_m' } },
      where: {
        time: [{ operator: '>=', value: 1_700_000_000_000 }, { operator: '<', value: '2026-01-02T03:04:05.678+01:00' }],
        tags: { nodeId: 'n1', phase: 'L1' },
      },
      orderBy: 'DESC',
      limit: 10,
    };
    assert.deepEqual(v.parse(QuerySchema, query), query);
  });

  it('accepts the legacy from, IOx namespaces, arrays of 1 and 1000 queries', () => {
    assert.equal(check(QuerySchema, { select: ['p'], from: { measurement: 'm', database: 'd', retentionPolicy: 'r' } }), 'ok');
    assert.equal(check(QuerySchema, { ...base, from: { measurement: 'm', namespace: { version: 'IOx', value: 'x' } } }), 'ok');
    assert.equal(check(QueryBodySchema, [base]), 'ok');
    assert.equal(check(QueryBodySchema, Array.from({ length: 1000 }, () => base)), 'ok');
    assert.equal(check(QuerySchema, { ...base, select: Array.from({ length: 100 }, (_, i) => `f${i}`) }), 'ok');
    assert.equal(check(QuerySchema, { ...base, where: {} }), 'ok');
    assert.equal(check(QuerySchema, { ...base, where: { time: [] } }), 'ok');
  });

  it('accepts time values at the edges of the allowed span', () => {
    for (const value of [-62_167_219_200_000, 253_402_300_799_999, 0, '0000-01-01', '9999-12-31T23:59:59.999Z', '2024-02-29T12:00']) {
      assert.equal(check(QuerySchema, { ...base, where: { time: [{ operator: '=', value }] } }), 'ok', String(value));
    }
  });
});

describe('query schema: validation', () => {
  it('refuses unknown fields at every level', () => {
    assert.equal(check(QuerySchema, { ...base, extra: 1 }), 'extra: Invalid key: Expected never but received "extra"');
    assert.equal(check(QuerySchema, { ...base, from: { ...base.from, extra: 1 } }), 'from: expected { measurement, namespace: { version, ... } } or the legacy { measurement, database, retentionPolicy }');
    assert.match(check(QuerySchema, { ...base, from: { measurement: 'm', namespace: { ...ns, extra: 1 } } }), /^from/);
    assert.equal(check(QuerySchema, { ...base, where: { extra: 1 } }), 'where.extra: Invalid key: Expected never but received "extra"');
    assert.equal(check(QuerySchema, { ...base, where: { time: [{ operator: '=', value: 1, extra: 1 }] } }), 'where.time.0.extra: Invalid key: Expected never but received "extra"');
    assert.equal(check(QuerySchema, { ...base, select: [{ field: 'f', function: 'sum', extra: 1 }] }), 'select.0: expected a field name or { field, function: sum|min|max|mean }');
  });

  it('refuses select outside 1..100 items and unknown functions', () => {
    assert.equal(check(QuerySchema, { ...base, select: [] }), 'select: expected at least 1 item');
    assert.equal(check(QuerySchema, { ...base, select: Array.from({ length: 101 }, () => 'f') }), 'select: expected at most 100 items');
    assert.equal(check(QuerySchema, { ...base, select: [{ field: 'f', function: 'median' }] }), 'select.0: expected a field name or { field, function: sum|min|max|mean }');
    assert.match(check(QuerySchema, { ...base, select: [''] }), /^select\.0/);
  });

  it('refuses more than 2 time conditions, bad operators and bad values', () => {
    const t = (time: unknown) => check(QuerySchema, { ...base, where: { time } });
    assert.equal(t([{ operator: '>', value: 1 }, { operator: '<', value: 2 }, { operator: '=', value: 3 }]), 'where.time: expected at most 2 time conditions');
    assert.match(t([{ operator: '!=', value: 1 }]), /^where\.time\.0\.operator: /);
    assert.equal(t([{ operator: '=', value: 1.5 }]), 'where.time.0.value: expected integer unix milliseconds');
    assert.equal(t([{ operator: '=', value: 253_402_300_800_000 }]), 'where.time.0.value: expected unix milliseconds within the years 0000-9999');
    assert.equal(t([{ operator: '=', value: true }]), 'where.time.0.value: expected unix milliseconds or an ISO 8601 string');
    assert.match(t([{ operator: '=' }]), /^where\.time\.0\.value: /);
  });

  it('refuses invalid ISO strings with a clear message', () => {
    for (const value of ['yesterday', '2026-02-30', '2026-01-15T25:00:00Z', '2026-01-15 12:00:00Z', '2026-01-15T12:00:00+0100']) {
      const issues = v.safeParse(QuerySchema, { ...base, where: { time: [{ operator: '=', value }] } }).issues ?? [];
      assert.ok(issues.length > 0, value);
      const messages = JSON.stringify(issues.flatMap((i) => [i.message, ...(i.issues ?? []).map((j) => j.message)]));
      assert.match(messages, /expected an ISO 8601 time like 2026-01-02T03:04:05\.678Z/, value);
    }
  });

  it('refuses a bad limit, orderBy, tags, measurement and namespace', () => {
    assert.equal(check(QuerySchema, { ...base, limit: 0 }), 'limit: expected an integer >= 1');
    assert.equal(check(QuerySchema, { ...base, limit: 1.5 }), 'limit: expected an integer >= 1');
    assert.match(check(QuerySchema, { ...base, orderBy: 'asc' }), /^orderBy: /);
    assert.match(check(QuerySchema, { ...base, where: { tags: { nodeId: 5 } } }), /^where\.tags\.nodeId: /);
    assert.match(check(QuerySchema, { ...base, from: { measurement: '', namespace: ns } }), /^from/);
    assert.match(check(QuerySchema, { ...base, from: { measurement: 'm', namespace: { version: '3', value: 'x' } } }), /^from/);
    assert.equal(check(QuerySchema, { ...base, from: { measurement: 'm', namespace: { version: '1', database: 'd' } } }), 'from: expected { measurement, namespace: { version, ... } } or the legacy { measurement, database, retentionPolicy }');
    assert.match(check(QuerySchema, { select: ['p'] }), /^from: /);
  });

  it('refuses an empty array or more than 1000 queries, and non-queries', () => {
    assert.equal(check(QueryBodySchema, []), ': expected at least 1 query');
    assert.equal(check(QueryBodySchema, Array.from({ length: 1001 }, () => base)), ': expected at most 1000 queries');
    assert.match(check(QueryBodySchema, 'select *'), /^: Invalid type/);
    assert.match(check(QueryBodySchema, [base, { ...base, limit: 0 }]), /^1\.limit: /);
  });

  it('converts to JSON Schema for the OpenAPI document (the calendar check is the one action left out)', () => {
    const json = toJsonSchema(QueryBodySchema, { target: 'draft-2020-12', ignoreActions: ['check'] }) as Record<string, unknown>;
    const text = JSON.stringify(json);
    assert.match(text, /"additionalProperties":false/);
    assert.match(text, /"maxItems":1000/);
    assert.match(text, /"pattern":"\^\(\[0-9\]\{4\}\)/);
  });
});

describe('write parameters schema', () => {
  it('keeps the parameters we use, defaults precision to ns, and drops ignored InfluxDB parameters', () => {
    assert.deepEqual(v.parse(WriteParamsSchema, { db: 'd', rp: 'r', u: 'user', p: 'secret', consistency: 'one' }),
      { db: 'd', rp: 'r', org: undefined, bucket: undefined, namespace: undefined, precision: 'ns' });
    assert.deepEqual(v.parse(WriteParamsSchema, { org: 'o', bucket: 'b', orgID: 'x', precision: 's' }),
      { db: undefined, rp: undefined, org: 'o', bucket: 'b', namespace: undefined, precision: 's' });
    assert.deepEqual(v.parse(WriteParamsSchema, { namespace: ['a', 'b'], precision: ['ms', 'us'] }),
      { db: undefined, rp: undefined, org: undefined, bucket: undefined, namespace: 'b', precision: 'us' });
  });

  it('refuses an unknown precision and unknown parameters', () => {
    assert.equal(check(WriteParamsSchema, { db: 'd', precision: 'h' }), 'precision: expected ns, us, ms or s');
    assert.equal(check(WriteParamsSchema, { dbb: 'd' }), 'dbb: Invalid key: Expected never but received "dbb"');
  });
});
