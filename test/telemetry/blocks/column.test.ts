// Columns: rows with missing values to a column and back, through the codec of each kind, exactly.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteWriter } from '../../../src/telemetry/blocks/bits.ts';
import { decodeColumn, encodeColumn, type Column } from '../../../src/telemetry/blocks/column.ts';
import { columnCells, columnFromValues, valuesOfColumn } from '../../../src/telemetry/blocks/values.ts';
import { BOOLEAN, FLOAT, INTEGER, STRING, UNSIGNED } from '../../../src/telemetry/line-protocol/line-scanner.ts';
import { MAX_SAFE, SEEDED, rowValues } from './arbitraries.ts';
import { failsOnlyWithFormatErrors, roundTrip as check } from './codec-checks.ts';

const KINDS = [FLOAT, INTEGER, UNSIGNED, STRING, BOOLEAN] as const;

/** Row values as they come back: integers as numbers when safe, -0 kept apart from 0 */
const expected = (v: number | bigint | string | boolean | null) => (typeof v === 'bigint' && v <= BigInt(MAX_SAFE) && v >= -BigInt(MAX_SAFE) ? Number(v) : v);

function roundTrip(column: Column, n: number): Column {
  return check((w) => encodeColumn(w, column, n), (r) => decodeColumn(r, n)).back;
}

describe('columns', () => {
  for (const kind of KINDS) {
    it(`of kind ${kind}: rows to a column, bytes and back to the same rows`, () => {
      fc.assert(fc.property(rowValues(kind), (rows) => {
        const column = columnFromValues(kind, rows);
        if (!rows.some((v) => v !== null)) {
          assert.equal(column, undefined);
          return;
        }
        assert.ok(column);
        assert.equal(column.present === undefined, rows.every((v) => v !== null));
        const back = roundTrip(column, rows.length);
        assert.deepEqual(back, column);
        const again = valuesOfColumn(back, rows.length);
        assert.equal(again.length, rows.length);
        rows.forEach((v, i) => assert.ok(Object.is(again[i], expected(v)) || (typeof v === 'number' && Number.isNaN(v)), `row ${i}: ${String(again[i])} for ${String(v)}`));
      }), SEEDED);
    });
  }

  for (const kind of KINDS) {
    it(`of kind ${kind}: read row by row, each row's value and its JSON as the whole column's`, () => {
      fc.assert(fc.property(rowValues(kind), (rows) => {
        const column = columnFromValues(kind, rows);
        if (column === undefined) return;
        const whole = valuesOfColumn(column, rows.length);
        const cells = columnCells(column, rows.length);
        whole.forEach((v, i) => {
          assert.ok(Object.is(cells.value(i), v), `row ${i}: ${String(cells.value(i))} for ${String(v)}`);
          const json = cells.json(i);
          if (v === null) assert.equal(json, undefined, `row ${i}`);
          else if (typeof v === 'bigint' || typeof v === 'number') assert.equal(json, String(v), `row ${i}`);
          else assert.deepEqual(JSON.parse(json!), v, `row ${i}`);
        });
      }), SEEDED);
    });
  }

  it('read row by row: a column whose presence and values disagree is refused', () => {
    assert.throws(() => columnCells({ kind: FLOAT, present: Uint8Array.of(1, 0, 1), values: Float64Array.of(1) }, 3), RangeError);
    assert.throws(() => columnCells({ kind: FLOAT, present: undefined, values: Float64Array.of(1) }, 2), RangeError);
  });

  it('integers: numbers when every value is safe, else bigints', () => {
    assert.ok(columnFromValues(INTEGER, [1, 2n, null, -(2 ** 53) + 1])!.values instanceof Float64Array);
    const wide = columnFromValues(INTEGER, [1, 2n ** 53n, null])!;
    assert.deepEqual(wide.values, BigInt64Array.of(1n, 2n ** 53n));
    assert.deepEqual(valuesOfColumn(wide, 3), [1, 2n ** 53n, null]);
    assert.throws(() => columnFromValues(UNSIGNED, [2n ** 63n]), RangeError);
    assert.throws(() => columnFromValues(INTEGER, [1.5]), TypeError);
    assert.throws(() => columnFromValues(FLOAT, ['1']), TypeError);
    assert.throws(() => columnFromValues(BOOLEAN, [1]), TypeError);
  });

  it('a presence of all ones reads back as none', () => {
    const back = roundTrip({ kind: FLOAT, present: Uint8Array.of(1, 1), values: Float64Array.of(1, 2) }, 2);
    assert.equal(back.present, undefined);
  });

  it('refuse a column that does not hold together', () => {
    const w = new ByteWriter();
    assert.throws(() => encodeColumn(w, { kind: FLOAT, present: Uint8Array.of(1, 0), values: Float64Array.of(1, 2) }, 2), RangeError);
    assert.throws(() => encodeColumn(w, { kind: FLOAT, present: undefined, values: Float64Array.of(1) }, 2), RangeError);
    assert.throws(() => encodeColumn(w, { kind: STRING, present: undefined, values: Float64Array.of(1) }, 1), TypeError);
    assert.throws(() => valuesOfColumn({ kind: FLOAT, present: undefined, values: Float64Array.of(1) }, 2), RangeError);
  });

  it('fail on corrupt bytes with BlockFormatError only', () => {
    failsOnlyWithFormatErrors(decodeColumn, 3000, 3000);
  });
});
