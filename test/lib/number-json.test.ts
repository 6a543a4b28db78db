// numberJson (src/lib/number-json.ts) writes what String(n) writes, for every finite number: random doubles of every
// magnitude, and the edges (-0, subnormals, the largest and smallest doubles, integers around 2^53, short decimals).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { numberJson } from '../../src/lib/number-json.ts';

function randomDouble(): number {
  const bits = new DataView(new ArrayBuffer(8));
  for (;;) {
    bits.setUint32(0, (Math.random() * 2 ** 32) >>> 0);
    bits.setUint32(4, (Math.random() * 2 ** 32) >>> 0);
    const n = bits.getFloat64(0);
    if (Number.isFinite(n)) return n;
  }
}

describe('numberJson', () => {
  it('writes the digits String(n) writes, for random doubles and the edges', () => {
    const edges = [0, -0, 5e-324, -5e-324, 2.2250738585072014e-308, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53, 2 ** 53 + 2,
      -(2 ** 53), 2 ** 31, -(2 ** 31) - 1, 1234.5, 0.1, 0.1 + 0.2, 1e21, 1e-7, 123456789012345680000, 1.7e308];
    const decimals = Array.from({ length: 10_000 }, () => Math.round((Math.random() - 0.5) * 2e7) / 10);
    const randoms = Array.from({ length: 20_000 }, randomDouble);
    for (const n of [...edges, ...decimals, ...randoms]) {
      const text = numberJson(n);
      assert.equal(text, String(n), `${n}`);
      assert.ok(Object.is(JSON.parse(text), n === 0 ? 0 : n), `${text} reads back`);
    }
  });
});
