// A series' tag values spliced into raw rows of its fields (src/influxql/tag-columns.ts): for any values (strings
// holding commas, quotes, backslashes, brackets and any character JSON escapes or not), times as numbers or RFC3339
// text, and any order of field and tag columns, the row equals the one written whole from the same values.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RowBytes } from '../../src/telemetry/query/row-bytes.ts';
import { spliceColumns, withTagColumns } from '../../src/influxql/tag-columns.ts';

const tricky = fc.constantFrom(',', '"', '\\', '\\"', '",', '[', ']', '],[', '\\\\', '\u2028', '\n', 'é', '😀', '');
const text = fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 6 }), tricky), { maxLength: 5 }).map((xs) => xs.join(''));
const value = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null), text);
const time = fc.oneof(fc.integer({ min: 0 }), fc.date({ min: new Date(0), noInvalidDate: true }).map((d) => d.toISOString()));

describe('tag values spliced into rows of fields', () => {
  it('give the row written whole from the same columns', () => {
    fc.assert(fc.property(time, fc.array(fc.tuple(fc.boolean(), value, fc.option(text, { nil: undefined })), { minLength: 1, maxLength: 8 }),
      (t, cells) => {
        // each cell: [is a tag, the field's value, the tag's value (undefined: the series has no such tag)]
        const fieldsRow = JSON.stringify([t, ...cells.filter(([tag]) => !tag).map(([, v]) => v)]);
        const expected = JSON.stringify([t, ...cells.map(([tag, v, tagValue]) => (tag ? tagValue ?? null : v))]);
        const columns = cells.map(([tag, , tagValue]) => (tag ? (tagValue === undefined ? 'null' : JSON.stringify(tagValue)) : undefined));
        assert.equal(spliceColumns(fieldsRow, columns), expected);
      }), { seed: 39, numRuns: 2000 });
  });

  it('go into the sink given, which counts the rows', () => {
    const bytes = new RowBytes(1);
    const sink = withTagColumns(bytes, ['"node-1"', undefined, 'null', undefined]);
    sink.push('[1,2.5,"a,b"]');
    sink.push('["2026-11-29T00:00:00Z",null,"x\\"y"]');
    assert.equal(sink.length, 2);
    const out = new Uint8Array(bytes.size);
    bytes.copyTo(out, 0);
    assert.equal(new TextDecoder().decode(out), '["2026-11-29T00:00:00Z","node-1",null,null,"x\\"y"]');
  });
});
