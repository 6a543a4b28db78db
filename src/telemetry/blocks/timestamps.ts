// A block's times: milliseconds as an integer sequence (integers.ts picks deltas of deltas for regular intervals, so
// points 10 s apart cost a few bits per 128 rows, and runs when the spacing never changes), then the sub-millisecond
// nanoseconds as a stream of their own: one byte when they are all zero, as they almost always are.
import type { ByteReader, ByteWriter } from './bits.ts';
import { decodeSafeInts, encodeInts } from './integers.ts';
import { BlockFormatError } from './errors.ts';

export interface Times {
  ms: Float64Array;
  sub: Int32Array;
}

export function encodeTimes(w: ByteWriter, ms: Float64Array, sub: Int32Array): void {
  if (sub.length !== ms.length) throw new RangeError(`${ms.length} ms but ${sub.length} sub-ms values`);
  encodeInts(w, ms);
  const any = sub.some((s) => s !== 0);
  w.byte(any ? 1 : 0);
  if (any) encodeInts(w, Float64Array.from(sub));
}

export function decodeTimes(r: ByteReader, n: number): Times {
  const ms = decodeSafeInts(r, n);
  const flag = r.byte();
  if (flag > 1) throw new BlockFormatError(`sub-ms flag ${flag}`);
  const sub = new Int32Array(n);
  if (flag === 1) {
    const v = decodeSafeInts(r, n);
    for (let i = 0; i < n; i++) {
      if (v[i] !== (v[i] | 0)) throw new BlockFormatError('sub-ms value out of range');
      sub[i] = v[i];
    }
  }
  return { ms, sub };
}
