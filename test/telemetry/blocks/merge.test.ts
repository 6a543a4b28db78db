// Merging a block with later points (blocks/rows.ts mergeBlocks): points that all come after the block's last are
// appended column by column; that must give exactly what the merge row by row gives, and a block split in two and
// merged again must come back as it was, on random and adversarial blocks (every field kind, missing values, integers
// beyond 2^53 in one half only, columns present in one half only).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeBlock, encodeBlock, type BlockData } from '../../../src/telemetry/blocks/index.ts';
import { mergeBlocks, mergeBlocksByRow } from '../../../src/telemetry/blocks/rows.ts';
import { columnFromValues, valuesOfColumn } from '../../../src/telemetry/blocks/values.ts';
import { SEEDED, blocks } from './arbitraries.ts';

/** Rows [from, to) of a block, as a block of its own. */
function slice(block: BlockData, from: number, to: number): BlockData {
  const n = block.ms.length;
  return {
    ms: block.ms.slice(from, to),
    sub: block.sub.slice(from, to),
    columns: block.columns.map((c) => (c === undefined ? undefined : columnFromValues(c.kind, valuesOfColumn(c, n).slice(from, to)))),
  };
}

/** The same rows and values, whatever arrays hold them. */
const same = (a: BlockData, b: BlockData) => assert.deepEqual(decodeBlock(encodeBlock(a)), decodeBlock(encodeBlock(b)));

/** A block whose times all come after `block`'s last. */
function after(block: BlockData, later: BlockData): BlockData {
  const n = block.ms.length;
  if (n === 0 || later.ms.length === 0) return later;
  const shift = block.ms[n - 1] - later.ms[0] + 1;
  return { ...later, ms: later.ms.map((t) => t + shift) };
}

describe('blocks: merging later points', () => {
  it('a block split anywhere and merged again is the block', () => {
    fc.assert(fc.property(blocks, fc.nat(), (block, at) => {
      const k = block.ms.length === 0 ? 0 : at % (block.ms.length + 1);
      const merged = mergeBlocks(slice(block, 0, k), slice(block, k, block.ms.length));
      same(merged, block);
      same(merged, mergeBlocksByRow(slice(block, 0, k), slice(block, k, block.ms.length)));
    }), SEEDED);
  });

  it('appending gives what the merge row by row gives, for any two blocks one after the other', () => {
    fc.assert(fc.property(blocks, blocks, (a, b) => {
      // a field has one kind: blocks of a series never disagree on it
      fc.pre(a.columns.every((c, i) => c === undefined || b.columns[i] === undefined || b.columns[i]!.kind === c.kind));
      const later = after(a, b);
      same(mergeBlocks(a, later), mergeBlocksByRow(a, later));
    }), { ...SEEDED, numRuns: 600 });
  });

  it('blocks whose times interleave or coincide merge as row by row, for any shift of one against the other', () => {
    fc.assert(fc.property(blocks, blocks, fc.integer({ min: -400, max: 400 }), (a, b, at) => {
      fc.pre(a.columns.every((c, i) => c === undefined || b.columns[i] === undefined || b.columns[i]!.kind === c.kind));
      // b moved so its first row lands on (or next to) one of a's rows: times interleave, some coincide
      const n = a.ms.length;
      const anchor = n === 0 ? 0 : a.ms[((at % n) + n) % n];
      const later = b.ms.length === 0 ? b : { ...b, ms: b.ms.map((t) => t - b.ms[0] + anchor + (at % 3 === 0 ? 1 : 0)) };
      same(mergeBlocks(a, later), mergeBlocksByRow(a, later));
    }), { ...SEEDED, numRuns: 600 });
  });

  it('overlapping points still merge field by field, the later write winning', () => {
    fc.assert(fc.property(blocks, (block) => {
      const n = block.ms.length;
      // the second half written again over the first's last row: not an append
      const later = slice(block, Math.max(0, Math.floor(n / 2) - 1), n);
      same(mergeBlocks(slice(block, 0, Math.floor(n / 2)), later), block);
    }), SEEDED);
  });
});
