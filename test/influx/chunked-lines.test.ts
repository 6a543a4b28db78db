// The cutting of chunked answers (src/influx/chunked.ts) and the JSON walker under it (src/influx/raw-json.ts), as
// pure functions: against a model built with JSON.parse on random answers, on random and malformed text, and on the
// numbers JSON.parse would round. Compared with real InfluxDB in chunked.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { answerLines, chunkSizeOf, cutOf, DEFAULT_CHUNK_SIZE, goEscape, type Cut } from '../../src/influx/chunked.ts';
import { elements, indentJson, MalformedJson, valueEnd, wholeSpan } from '../../src/influx/raw-json.ts';
import { parseQuery } from '../../src/influxql/parser.ts';

const SEEDED = { seed: 39, numRuns: 300 } as const;

type Series = { name?: string; tags?: Record<string, string>; columns: string[]; values: unknown[][] };
type Result = { statement_id: number; series?: Series[]; error?: string };

const text = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '"', '\\', '\n', '<', '>', '&', '\u2028', 'é', '😀', '\u0001', '[', ']', '{', '}', ',', ':') });
const value = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), text, fc.boolean(), fc.constant(null));
const series: fc.Arbitrary<Series> = fc.record({
  name: fc.option(text, { nil: undefined }),
  tags: fc.option(fc.dictionary(text, text, { maxKeys: 4 }), { nil: undefined }),
  columns: fc.array(text, { minLength: 1, maxLength: 4 }),
  values: fc.array(fc.array(value, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 40 }),
}, { requiredKeys: ['columns', 'values'] });
const answer = fc.array(fc.oneof(
  fc.record({ series: fc.array(series, { minLength: 1, maxLength: 4 }) }),
  fc.record({ error: text }),
  fc.constant({}),
), { maxLength: 5 }).map((rs): Result[] => rs.map((r, i) => ({ statement_id: i, ...r })));
const cut: fc.Arbitrary<Cut> = fc.constantFrom('rows', 'series', 'whole');

/** What InfluxDB's emitter and handler make of the results, written with JSON.stringify. */
function model(results: Result[], cuts: Cut[], size: number): string[] {
  const out: string[] = [];
  const j = JSON.stringify;
  const line = (id: number, series: string[] | undefined, partial: boolean, error?: string) => `${goEscape(`{"results":[{"statement_id":${id}`
    + `${series ? `,"series":[${series.join(',')}]` : ''}${partial ? ',"partial":true' : ''}${error ? `,"error":${j(error)}` : ''}}]}`)}\n`;
  // Go's maps are written with their keys sorted (a JS object would put "0" before "")
  const row = (s: Series, values: unknown[][], partial: boolean) => {
    const tags = Object.entries(s.tags ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${[
      ...(s.name ? [`"name":${j(s.name)}`] : []),
      ...(tags.length > 0 ? [`"tags":{${tags.map(([k, v]) => `${j(k)}:${j(v)}`).join(',')}}`] : []),
      `"columns":${j(s.columns)}`, `"values":${j(values)}`, ...(partial ? ['"partial":true'] : []),
    ].join(',')}}`;
  };
  for (const r of results) {
    const id = r.statement_id;
    if (r.error !== undefined || r.series === undefined || cuts[id] === 'whole') {
      out.push(line(id, r.series?.map((s) => row(s, s.values, false)), false, r.error));
    } else if (cuts[id] === 'series') {
      for (const s of r.series) out.push(line(id, [row(s, s.values, false)], false));
    } else {
      r.series.forEach((s, k) => {
        for (let i = 0; i < s.values.length; i += size) {
          const lastChunk = i + size >= s.values.length;
          out.push(line(id, [row(s, s.values.slice(i, i + size), !lastChunk)], !(lastChunk && k === r.series!.length - 1)));
        }
      });
    }
  }
  return out;
}

describe('chunked answers: cutting', () => {
  it('cut as the model cuts them, for every cut and size', () => {
    fc.assert(fc.property(answer, fc.array(cut, { minLength: 5, maxLength: 5 }), fc.integer({ min: 1, max: 12 }), (results, cuts, size) => {
      const body = JSON.stringify({ results });
      assert.deepEqual([...iterate(answerLines(body, cuts, size))], model(results, cuts, size));
    }), SEEDED);
  });

  it('are made one at a time, as they are asked for', () => {
    const values = Array.from({ length: 1000 }, (_, i) => [i, i * 2]);
    const lines = answerLines(JSON.stringify({ results: [{ statement_id: 0, series: [{ name: 'm', columns: ['time', 'v'], values }] }] }), ['rows'], 1);
    assert.equal(lines.next().value, '{"results":[{"statement_id":0,"series":[{"name":"m","columns":["time","v"],"values":[[0,0]],"partial":true}],"partial":true}]}\n');
    assert.equal(lines.next().value, '{"results":[{"statement_id":0,"series":[{"name":"m","columns":["time","v"],"values":[[1,2]],"partial":true}],"partial":true}]}\n');
    let rest = 0;
    for (let r = lines.next(); !r.done; r = lines.next()) rest++;
    assert.equal(rest, 998);
  });

  it('keep every digit of numbers JSON.parse would round (epoch=ns)', () => {
    const body = '{"results":[{"statement_id":0,"series":[{"name":"m","columns":["time","v"],"values":[[1795870800000000001,0.1],[1795870800000000003,1e-7]]}]}]}';
    assert.deepEqual([...iterate(answerLines(body, ['rows'], 1))], [
      '{"results":[{"statement_id":0,"series":[{"name":"m","columns":["time","v"],"values":[[1795870800000000001,0.1]],"partial":true}],"partial":true}]}\n',
      '{"results":[{"statement_id":0,"series":[{"name":"m","columns":["time","v"],"values":[[1795870800000000003,1e-7]]}]}]}\n',
    ]);
    assert.equal([...iterate(answerLines(body, ['rows'], 5, true))].join(''), `${indentJson(body)}\n`);
    assert.match(indentJson(body), /1795870800000000003,\n/);
  });

  it('refuse malformed text with MalformedJson, at the line it would spoil', () => {
    for (const bad of ['', '{', '{"results":[{"statement_id":0]}', '{"results":[1 2]}', '{"results":[}', '{"results":"x', '[1,]', '{"results":[]} x', '{"results":[{"a":1,}]}']) {
      assert.throws(() => [...iterate(answerLines(bad, [], 1))], MalformedJson, bad);
    }
    const late = answerLines('{"results":[{"statement_id":0},{"statement_id":1,"series":[{"columns":["a"],"values":[[1],[2] [3]]}]}]}', ['rows', 'rows'], 1);
    assert.equal(late.next().value, '{"results":[{"statement_id":0}]}\n');
    // statement 1's first line waits for the next (only then is it known not to be the last), which is spoilt
    assert.throws(() => late.next(), MalformedJson);
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', ',', ':', '1', 'a', '\\', ' ', 'null') }), (t) => {
      try {
        [...iterate(answerLines(t, ['rows', 'series'], 2))];
      } catch (err) {
        // JSON.parse reads keys and tags only, which the walker delimited already
        if (!(err instanceof MalformedJson) && !(err instanceof SyntaxError)) throw err;
      }
    }), { ...SEEDED, numRuns: 2000 });
  });
});

describe('chunked answers: the JSON walker', () => {
  it('delimits every JSON value and its elements', () => {
    fc.assert(fc.property(fc.json(), (t) => {
      assert.equal(valueEnd(t, 0), t.length);
      assert.deepEqual(wholeSpan(` ${t}\n`), { start: 1, end: t.length + 1 });
      const parsed = JSON.parse(t) as unknown;
      if (Array.isArray(parsed)) {
        assert.deepEqual([...elements(t, { start: 0, end: t.length })].map((s) => JSON.parse(t.slice(s.start, s.end)) as unknown), parsed);
      }
    }), SEEDED);
  });

  it('indents as Go\'s MarshalIndent (as JSON.stringify with 4 spaces)', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      const t = JSON.stringify(v);
      assert.equal(indentJson(t), JSON.stringify(v, null, 4));
    }), SEEDED);
    assert.equal(indentJson('{"a":[],"b":{},"c":[1,{"d":null}]}'), '{\n    "a": [],\n    "b": {},\n    "c": [\n        1,\n        {\n            "d": null\n        }\n    ]\n}');
  });

  it('escapes <, >, & and U+2028/9 as Go does, inside strings only', () => {
    assert.equal(goEscape('{"a<":"x>&\u2028\u2029\\\\<"}'), '{"a\\u003c":"x\\u003e\\u0026\\u2028\\u2029\\\\\\u003c"}');
    fc.assert(fc.property(fc.jsonValue(), (v) => { assert.deepEqual(JSON.parse(goEscape(JSON.stringify(v))), JSON.parse(JSON.stringify(v))); }), SEEDED);
  });
});

describe('chunked answers: parameters', () => {
  it('chunk_size as InfluxDB reads it: a positive base-10 int64, the default otherwise', () => {
    const cases: Array<[string | null, number]> = [
      [null, DEFAULT_CHUNK_SIZE], ['', DEFAULT_CHUNK_SIZE], ['5', 5], ['+5', 5], ['007', 7], ['0', DEFAULT_CHUNK_SIZE], ['-3', DEFAULT_CHUNK_SIZE],
      ['abc', DEFAULT_CHUNK_SIZE], [' 5', DEFAULT_CHUNK_SIZE], ['5.0', DEFAULT_CHUNK_SIZE], ['1e3', DEFAULT_CHUNK_SIZE], ['0x10', DEFAULT_CHUNK_SIZE],
      ['9223372036854775807', 9223372036854775807], ['9223372036854775808', DEFAULT_CHUNK_SIZE],
    ];
    for (const [v, n] of cases) assert.equal(chunkSizeOf(v), n, String(v));
    assert.equal(DEFAULT_CHUNK_SIZE, 10_000);
  });

  it('statements are cut as InfluxDB 1.6 cuts them', () => {
    const q = 'SELECT v FROM m; SHOW FIELD KEYS; SHOW SERIES; SHOW TAG KEYS; SHOW TAG VALUES WITH KEY = "a"; SHOW MEASUREMENTS; SHOW DATABASES; SHOW RETENTION POLICIES; CREATE DATABASE x';
    assert.deepEqual(parseQuery(q, {}).map(cutOf), ['rows', 'rows', 'rows', 'series', 'series', 'whole', 'whole', 'whole', 'whole']);
    assert.equal(cutOf(undefined), 'whole');
  });
});

function* iterate<T>(it: Iterator<T>): Generator<T> {
  for (let r = it.next(); !r.done; r = it.next()) yield r.value;
}
