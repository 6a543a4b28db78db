// Booleans, and the presence of a field at each row: a constant in one byte, else runs (lengths as an integer
// sequence) or one bit a value, whichever is smaller. A flag that changes a few times a day costs a few bytes.
import { ByteReader, ByteWriter } from './bits.ts';
import { decodeSafeInts, encodeInts } from './integers.ts';
import { BlockFormatError } from './errors.ts';

const ALL_ZERO = 0;
const ALL_ONE = 1;
const BITMAP = 2;
/** runs, starting with a run of zeros (RUNS) or of ones (RUNS + 1) */
const RUNS = 3;

/** Writes 0/1 values (any non-zero counts as 1). Nothing at all for none. */
export function encodeBools(w: ByteWriter, values: Uint8Array): void {
  const n = values.length;
  if (n === 0) return;
  const lengths: number[] = [];
  let start = 0;
  for (let i = 1; i <= n; i++) {
    if (i < n && (values[i] !== 0) === (values[start] !== 0)) continue;
    lengths.push(i - start - 1);
    start = i;
  }
  const first = values[0] !== 0 ? 1 : 0;
  if (lengths.length === 1) {
    w.byte(first ? ALL_ONE : ALL_ZERO);
    return;
  }
  const runs = new ByteWriter();
  runs.varint(lengths.length);
  encodeInts(runs, Float64Array.from(lengths));
  if (runs.length < Math.ceil(n / 8)) {
    w.byte(RUNS + first);
    w.bytes(runs.finish());
    return;
  }
  w.byte(BITMAP);
  for (let i = 0; i < n; i++) w.bits(values[i] !== 0 ? 1 : 0, 1);
  w.align();
}

export function decodeBools(r: ByteReader, n: number): Uint8Array {
  const out = new Uint8Array(n);
  if (n === 0) return out;
  const mode = r.byte();
  if (mode === ALL_ZERO) return out;
  if (mode === ALL_ONE) return out.fill(1);
  if (mode === BITMAP) {
    const bytes = r.take(Math.ceil(n / 8));
    for (let i = 0; i < n; i++) out[i] = (bytes[i >>> 3] >>> (i & 7)) & 1;
    return out;
  }
  if (mode !== RUNS && mode !== RUNS + 1) throw new BlockFormatError(`boolean mode ${mode}`);
  const count = r.count(n);
  const lengths = decodeSafeInts(r, count);
  let value = mode - RUNS;
  let at = 0;
  for (let j = 0; j < count; j++) {
    const length = lengths[j] + 1;
    if (!(length >= 1 && length <= n - at)) throw new BlockFormatError('runs overflow');
    if (value) out.fill(1, at, at + length);
    at += length;
    value ^= 1;
  }
  if (at !== n) throw new BlockFormatError('runs fall short');
  return out;
}
