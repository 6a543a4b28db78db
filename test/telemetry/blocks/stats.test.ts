// Statistics of a block's fields: against values computed from the rows in the test, and back from their bytes
// exactly (floats to the bit, integer sums beyond int64).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { columnStats, decodeStats, encodeStats, type FieldStats } from '../../../src/telemetry/blocks/index.ts';
import { valuesOfColumn } from '../../../src/telemetry/blocks/values.ts';
import { BOOLEAN, FLOAT, STRING } from '../../../src/telemetry/line-scanner.ts';
import { SEEDED, blocks, isBlockFormatError } from './arbitraries.ts';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const asNumberWhenSafe = (v: bigint) => (v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : v);

/** The statistics by their definition, from the rows */
function expected(ms: Float64Array, sub: Int32Array, kind: number, rows: Array<number | bigint | string | boolean | null>): FieldStats {
  const at = rows.flatMap((v, i) => (v === null ? [] : [i]));
  const first = at[0];
  const last = at[at.length - 1];
  const base = { count: at.length, first: rows[first]!, last: rows[last]!, firstMs: ms[first], firstSub: sub[first], lastMs: ms[last], lastSub: sub[last] };
  if (kind === STRING || kind === BOOLEAN) return base;
  if (kind === FLOAT) {
    const v = at.map((i) => rows[i] as number);
    let sum = 0;
    for (const x of v) sum += x;
    return { ...base, sum, min: v.reduce((a, b) => (b < a ? b : a)), max: v.reduce((a, b) => (b > a ? b : a)) };
  }
  const v = at.map((i) => BigInt(rows[i] as number | bigint));
  return {
    ...base,
    sum: v.reduce((a, b) => a + b, 0n),
    min: asNumberWhenSafe(v.reduce((a, b) => (b < a ? b : a))),
    max: asNumberWhenSafe(v.reduce((a, b) => (b > a ? b : a))),
  };
}

describe('statistics', () => {
  it('of every column of random blocks match their definition, and come back from their bytes', () => {
    fc.assert(fc.property(blocks, (block) => {
      const stats = block.columns.map((c) => (c ? columnStats(block.ms, block.sub, c) : undefined));
      block.columns.forEach((c, k) => {
        if (!c) return;
        assert.deepEqual(stats[k], expected(block.ms, block.sub, c.kind, valuesOfColumn(c, block.ms.length)));
      });
      assert.deepEqual(decodeStats(encodeStats(stats)), stats);
    }), { ...SEEDED, numRuns: 300 });
  });

  it('keep -0, NaN-free extremes and integer sums beyond int64 exactly', () => {
    const times = { firstMs: -(2 ** 53) + 1, firstSub: 0, lastMs: 2 ** 53 - 1, lastSub: 999_999 };
    const stats: Array<FieldStats | undefined> = [
      { count: 3, sum: -0, min: -0, max: Number.MAX_VALUE, first: Number.MIN_VALUE, last: 0.1 + 0.2, ...times },
      undefined,
      { count: 2 ** 20, sum: -(2n ** 83n), min: -(2n ** 63n), max: 2n ** 63n - 1n, first: 2 ** 53 - 1, last: -5, ...times },
      { count: 1, first: '', last: '\uD800', ...times, lastMs: times.firstMs },
      { count: 2, first: true, last: false, firstMs: 0, firstSub: 0, lastMs: 0, lastSub: 1 },
    ];
    const back = decodeStats(encodeStats(stats));
    assert.deepEqual(back, stats);
    assert.ok(Object.is(back[0]!.sum, -0));
  });

  it('are compact: a float field of short decimals in 29 bytes (72 as raw doubles)', () => {
    const stats: FieldStats = { count: 8640, sum: 12_345_678.9, min: -3.5, max: 4521.7, first: 12.1, last: 0, firstMs: 1_767_225_600_000, firstSub: 0, lastMs: 1_767_311_990_000, lastSub: 0 };
    const bytes = encodeStats([stats]);
    // flags 1, count 2, times 6 + 4, then each number a tag and a zig-zag varint of its decimal digits: 5 + 2 + 4 + 3 + 2
    assert.equal(bytes.length, 2 + 29);
  });

  it('fail on corrupt bytes with BlockFormatError only', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
      if (bytes.length > 0) bytes[0] = 1;
      try {
        decodeStats(bytes);
      } catch (err) {
        assert.ok(isBlockFormatError(err), String(err));
      }
    }), { ...SEEDED, numRuns: 5000 });
  });
});
