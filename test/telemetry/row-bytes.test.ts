// Raw rows written as bytes (src/telemetry/query/row-bytes.ts): the bytes are the rows' UTF-8 joined by commas, the
// skipped rows left out, for any text (astral and lone surrogates, rows longer than a chunk, empty rows), and a sink's
// chunks, given back, serve the next sink without its bytes showing through.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RowBytes } from '../../src/telemetry/query/row-bytes.ts';

const decoder = new TextDecoder();

function bytesOf(sink: RowBytes, offset = 0): string {
  const out = new Uint8Array(sink.size + offset + 3).fill(0x7e);
  const end = sink.copyTo(out, offset);
  assert.equal(end, offset + sink.size, 'copyTo returns the offset after the bytes');
  assert.deepEqual([...out.subarray(0, offset)], Array(offset).fill(0x7e), 'nothing written before the offset');
  assert.deepEqual([...out.subarray(end)], [0x7e, 0x7e, 0x7e], 'nothing written after the bytes');
  return decoder.decode(out.subarray(offset, end));
}

/** rows as the readers make them, with the texts that stress UTF-8 (what TextEncoder makes of lone surrogates included) */
const row = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.integer(), fc.double({ noNaN: true })).map(([t, v]) => `[${t},${v}]`) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => `[1,${JSON.stringify(s)}]`) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constant('') },
  // longer than a chunk (64 KiB), written in one of its own
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', 'é', '😀'), fc.integer({ min: 20_000, max: 70_000 })).map(([c, n]) => `["${c.repeat(n)}"]`) },
);

describe('raw rows as bytes', () => {
  it('are the rows joined by commas, as UTF-8, the skipped ones left out; length counts every row appended', () => {
    fc.assert(fc.property(fc.array(row, { maxLength: 300 }), fc.nat(20), fc.nat(5), (rows, skip, offset) => {
      const sink = new RowBytes(skip);
      for (const r of rows) sink.push(r);
      assert.equal(sink.length, rows.length);
      assert.equal(sink.rows, Math.max(0, rows.length - skip));
      const expected = new TextEncoder().encode(rows.slice(skip).join(','));
      assert.equal(sink.size, expected.length);
      assert.equal(bytesOf(sink, offset), decoder.decode(expected));
      sink.release();
      assert.equal(sink.size, 0);
    }), { seed: 38, numRuns: 150 });
  });

  it('chunks given back serve the next sinks, which hold only their own rows', () => {
    const first = new RowBytes();
    for (let i = 0; i < 20_000; i++) first.push(`[${i},"first ${i}"]`);
    const firstText = bytesOf(first);
    first.release();
    const second = new RowBytes();
    const third = new RowBytes(1);
    for (let i = 0; i < 15_000; i++) {
      second.push(`[${i}]`);
      third.push(`[${-i}]`);
    }
    assert.equal(bytesOf(second), Array.from({ length: 15_000 }, (_, i) => `[${i}]`).join(','));
    assert.equal(bytesOf(third), Array.from({ length: 14_999 }, (_, i) => `[${-(i + 1)}]`).join(','));
    assert.match(firstText, /^\[0,"first 0"\],\[1,"first 1"\].*\[19999,"first 19999"\]$/);
  });
});
