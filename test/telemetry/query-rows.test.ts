// The text pieces of query answers: page lines to JSON rows (with the order check that guards group_concat's order),
// ISO times, stored values as JSON.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { appendRows } from '../../src/telemetry/execute.ts';
import { isoTimeJson, rfc3339NanoJson, valueJson } from '../../src/telemetry/query/result.ts';
import { BOOLEAN, FLOAT, INTEGER, STRING } from '../../src/telemetry/line-protocol/line-scanner.ts';

describe('query answers: text', () => {
  it('turns page lines into JSON rows and reports the last time', () => {
    const rows: string[] = [];
    assert.deepEqual(appendRows('1000,0,[1.5,"a,b",null]\n2000,5,[2,true,7]', false, rows), [2000, 5]);
    assert.deepEqual(rows, ['["1970-01-01T00:00:01.000Z",1.5,"a,b",null]', '["1970-01-01T00:00:02.000000005Z",2,true,7]']);
    assert.deepEqual(JSON.parse(`[${rows.join(',')}]`)[1], ['1970-01-01T00:00:02.000000005Z', 2, true, 7]);
  });

  it('refuses a page out of the query order, so it can be read again in order', () => {
    assert.equal(appendRows('2000,0,[1]\n1000,0,[2]', false, []), undefined);
    assert.equal(appendRows('1000,0,[1]\n1000,0,[2]', false, []), undefined);
    assert.equal(appendRows('1000,1,[1]\n1000,0,[2]', false, []), undefined);
    assert.deepEqual(appendRows('2000,0,[1]\n1000,3,[2]\n1000,2,[3]', true, []), [1000, 2]);
    assert.equal(appendRows('1000,0,[1]\n2000,0,[2]', true, []), undefined);
    assert.deepEqual(appendRows('-5,999999,[1]', true, []), [-5, 999999]);
  });

  it('writes ISO times like Date#toISOString, with nanoseconds when there are some', () => {
    fc.assert(fc.property(fc.integer({ min: -9_223_372_036_854, max: 9_223_372_036_854 }), fc.integer({ min: 0, max: 999_999 }), (ms, ns) => {
      const iso = new Date(ms).toISOString();
      assert.equal(isoTimeJson(ms, 0), `"${iso}"`);
      if (ns > 0) assert.equal(isoTimeJson(ms, ns), `"${iso.slice(0, -1)}${String(ns).padStart(6, '0')}Z"`);
    }), { numRuns: 5000 });
  });

  it('writes stored values as JSON of their field type', () => {
    assert.equal(valueJson(FLOAT, 0.1 + 0.2), '0.30000000000000004');
    assert.equal(valueJson(INTEGER, 9223372036854775807n), '9223372036854775807');
    assert.equal(valueJson(INTEGER, '-9223372036854775808'), '-9223372036854775808');
    assert.equal(valueJson(BOOLEAN, 1), 'true');
    assert.equal(valueJson(BOOLEAN, 0), 'false');
    assert.equal(valueJson(STRING, 'say "hi"'), '"say \\"hi\\""');
    assert.equal(valueJson(FLOAT, null), 'null');
  });
});

describe('time texts of answers', () => {
  it('isoTimeJson and InfluxDB\'s RFC3339 (rfc3339NanoJson) agree with Date.toISOString on 2,000 random times', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const ms = Math.floor(next() * 4e12) * (i % 10 === 0 ? 1000 : 1) % 4e12;
      const ns = i % 3 === 0 ? Math.floor(next() * 1e6) : i % 3 === 1 ? Math.floor(next() * 1000) * 1000 : 0;
      const iso = new Date(ms).toISOString();
      const full = ns === 0 ? iso : `${iso.slice(0, -1)}${String(ns).padStart(6, '0')}Z`;
      assert.equal(isoTimeJson(ms, ns), `"${full}"`);
      assert.equal(rfc3339NanoJson(ms, ns), `"${full.replace(/\.?0+Z$/, 'Z')}"`, `${ms} ${ns}`);
    }
    assert.equal(rfc3339NanoJson(1_000, 0), '"1970-01-01T00:00:01Z"');
    assert.equal(rfc3339NanoJson(1_500, 0), '"1970-01-01T00:00:01.5Z"');
    assert.equal(rfc3339NanoJson(1_000, 500_000), '"1970-01-01T00:00:01.0005Z"');
  });
});
