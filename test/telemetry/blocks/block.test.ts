// The block container: random blocks (every kind, missing values, sub-ms times) back exactly, columns decoded on their
// own, and a decoder that meets random, truncated and damaged bytes with BlockFormatError only, never anything else.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BLOCK_VERSION, MAX_BLOCK_ROWS, blockRowCount, decodeBlock, encodeBlock, withColumns, type BlockData } from '../../../src/telemetry/blocks/index.ts';
import { ByteWriter } from '../../../src/telemetry/blocks/bits.ts';
import { SEEDED, blocks, isBlockFormatError } from './arbitraries.ts';

/** What decodeBlock gives for a block: trailing absent slots dropped */
function normal(block: BlockData): BlockData {
  const columns = [...block.columns];
  while (columns.length > 0 && columns[columns.length - 1] === undefined) columns.pop();
  return { ...block, columns };
}

describe('blocks', () => {
  it('give back every block exactly', () => {
    fc.assert(fc.property(blocks, (block) => {
      const bytes = encodeBlock(block);
      assert.equal(bytes[0], BLOCK_VERSION);
      assert.equal(blockRowCount(bytes), block.ms.length);
      assert.deepEqual(decodeBlock(bytes), normal(block));
    }), { ...SEEDED, numRuns: 200 });
  });

  it('decode only the columns asked for', () => {
    fc.assert(fc.property(blocks, fc.array(fc.integer({ min: -1, max: 9 }), { maxLength: 4 }), (block, ordinals) => {
      const want = normal(block);
      const got = decodeBlock(encodeBlock(block), ordinals);
      assert.deepEqual(got.ms, want.ms);
      assert.deepEqual(got.sub, want.sub);
      assert.equal(got.columns.length, want.columns.length);
      want.columns.forEach((c, k) => assert.deepEqual(got.columns[k], ordinals.includes(k) ? c : undefined));
    }), { ...SEEDED, numRuns: 100 });
  });

  it('decode more columns later, as asked (the times once)', () => {
    fc.assert(fc.property(blocks, fc.array(fc.array(fc.integer({ min: -1, max: 9 }), { maxLength: 3 }), { minLength: 1, maxLength: 4 }), (block, asks) => {
      const want = normal(block);
      const bytes = encodeBlock(block);
      let got: BlockData | undefined;
      const asked = new Set<number>();
      for (const ordinals of asks) {
        const before = got;
        const beforeColumns = before?.columns.map((c) => c !== undefined);
        got = withColumns(bytes, got, ordinals);
        if (before !== undefined) assert.equal(got.ms, before.ms, 'the times decoded once');
        if (before !== undefined) assert.deepEqual(before.columns.map((c) => c !== undefined), beforeColumns, 'the block given is left as it was');
        for (const k of ordinals) asked.add(k);
        assert.deepEqual(got.ms, want.ms);
        assert.deepEqual(got.sub, want.sub);
        want.columns.forEach((c, k) => assert.deepEqual(got!.columns[k], asked.has(k) ? c : undefined, `column ${k}`));
      }
    }), { ...SEEDED, numRuns: 100 });
  });

  it('refuse what does not hold together', () => {
    const ms = Float64Array.of(1, 2);
    const sub = new Int32Array(2);
    assert.throws(() => encodeBlock({ ms, sub: new Int32Array(1), columns: [] }), RangeError);
    assert.throws(() => encodeBlock({ ms: Float64Array.of(1, 2.5), sub, columns: [] }), RangeError);
    assert.throws(() => encodeBlock({ ms, sub, columns: [{ kind: 0, present: undefined, values: Float64Array.of(1) }] }), RangeError);
    assert.throws(() => encodeBlock({ ms: new Float64Array(MAX_BLOCK_ROWS + 1), sub: new Int32Array(MAX_BLOCK_ROWS + 1), columns: [] }), RangeError);
  });
});

describe('blocks: corrupt bytes', () => {
  const check = (bytes: Uint8Array, ordinals?: number[]) => {
    try {
      const block = decodeBlock(bytes, ordinals);
      assert.ok(block.ms.length <= MAX_BLOCK_ROWS);
    } catch (err) {
      assert.ok(isBlockFormatError(err), String(err));
    }
  };
  const rss = process.memoryUsage.rss();
  const boundedMemory = () => assert.ok(process.memoryUsage.rss() - rss < 512 * 2 ** 20, `RSS grew by ${(process.memoryUsage.rss() - rss) / 2 ** 20} MB`);

  it('random bytes, with a valid version byte or not', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), fc.boolean(), (bytes, versioned) => {
      if (versioned && bytes.length > 0) bytes[0] = BLOCK_VERSION;
      check(bytes);
      boundedMemory();
    }), { ...SEEDED, numRuns: 5000 });
  });

  it('truncated blocks', () => {
    fc.assert(fc.property(blocks, fc.nat(), (block, cut) => {
      const bytes = encodeBlock(block);
      assert.throws(() => decodeBlock(bytes.subarray(0, cut % bytes.length)), isBlockFormatError);
      assert.throws(() => decodeBlock(Uint8Array.of(...bytes, 0)), isBlockFormatError);
    }), { ...SEEDED, numRuns: 200 });
  });

  it('damaged blocks: bytes changed anywhere, columns asked for or not', () => {
    fc.assert(fc.property(blocks, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), fc.option(fc.array(fc.nat({ max: 6 }))), (block, changes, ordinals) => {
      const bytes = encodeBlock(block);
      for (const [at, v] of changes) bytes[at % bytes.length] = v;
      check(bytes, ordinals ?? undefined);
      boundedMemory();
    }), { ...SEEDED, numRuns: 1000 });
  });

  it('a header claiming more rows than a block may hold is refused before anything is allocated', () => {
    for (const rows of [MAX_BLOCK_ROWS + 1, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      const w = new ByteWriter();
      w.byte(BLOCK_VERSION);
      w.varint(rows);
      w.varint(0);
      w.varint(2);
      w.bytes(Uint8Array.of(4, 0));
      assert.throws(() => decodeBlock(w.finish()), isBlockFormatError);
      assert.throws(() => blockRowCount(w.finish()), isBlockFormatError);
    }
  });
});
