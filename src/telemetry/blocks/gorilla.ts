// XOR coding of doubles (Gorilla, Pelkonen et al., VLDB 2015), the fallback for columns that are not short decimals:
// each value is XORed with the one before; an equal value costs one bit, a value whose XOR fits the previous window
// of meaningful bits costs two bits plus the window, any other 13 bits plus its meaningful bits. It works on the two
// 32-bit words of each double, so every bit pattern (-0, subnormals, NaN payloads) comes back exactly.
import { type ByteReader, type ByteWriter, HI, LO, wordsOf } from './bits.ts';
import { BlockFormatError } from './errors.ts';

const ctz32 = (x: number): number => 31 - Math.clz32(x & -x);

export function encodeXor(w: ByteWriter, values: Float64Array): void {
  const n = values.length;
  if (n === 0) return;
  const words = wordsOf(values);
  let ph = words[HI];
  let pl = words[LO];
  w.u32(pl);
  w.u32(ph);
  let lead = -1; // the window: leading and trailing zero bits of the last XOR written in full; -1 before the first
  let trail = 0;
  for (let i = 1; i < n; i++) {
    const h = words[2 * i + HI];
    const l = words[2 * i + LO];
    const xh = (h ^ ph) >>> 0;
    const xl = (l ^ pl) >>> 0;
    ph = h;
    pl = l;
    if (xh === 0 && xl === 0) {
      w.bits(0, 1);
      continue;
    }
    const lz = xh !== 0 ? Math.clz32(xh) : 32 + Math.clz32(xl);
    const tz = xl !== 0 ? ctz32(xl) : 32 + ctz32(xh);
    if (lead >= 0 && lz >= lead && tz >= trail) {
      w.bits(1, 2); // 1 then 0
      writeShifted(w, xh, xl, trail, 64 - lead - trail);
      continue;
    }
    lead = Math.min(lz, 31);
    trail = tz;
    const width = 64 - lead - trail;
    w.bits(3, 2);
    w.bits(lead, 5);
    w.bits(width - 1, 6);
    writeShifted(w, xh, xl, trail, width);
  }
  w.align();
}

/** Writes `width` bits of (xh:xl) >>> shift. */
function writeShifted(w: ByteWriter, xh: number, xl: number, shift: number, width: number): void {
  let sh = xh;
  let sl = xl;
  if (shift >= 32) {
    sl = xh >>> (shift - 32);
    sh = 0;
  } else if (shift > 0) {
    sl = ((xl >>> shift) | (xh << (32 - shift))) >>> 0;
    sh = xh >>> shift;
  }
  if (width <= 32) w.bits32(sl, width);
  else {
    w.bits32(sl, 32);
    w.bits32(sh, width - 32);
  }
}

export function decodeXor(r: ByteReader, n: number): Float64Array {
  const out = new Float64Array(n);
  if (n === 0) return out;
  const words = wordsOf(out);
  let pl = r.u32();
  let ph = r.u32();
  words[LO] = pl;
  words[HI] = ph;
  let lead = -1;
  let trail = 0;
  for (let i = 1; i < n; i++) {
    if (r.bits(1) === 1) {
      if (r.bits(1) === 1) {
        lead = r.bits(5);
        const width = r.bits(6) + 1;
        trail = 64 - lead - width;
        if (trail < 0) throw new BlockFormatError('XOR window beyond 64 bits');
      } else if (lead < 0) throw new BlockFormatError('XOR window used before it is set');
      const width = 64 - lead - trail;
      let sl: number;
      let sh = 0;
      if (width <= 32) sl = r.bits32(width);
      else {
        sl = r.bits32(32);
        sh = r.bits32(width - 32);
      }
      let xh: number;
      let xl: number;
      if (trail >= 32) {
        xh = sl << (trail - 32);
        xl = 0;
      } else if (trail > 0) {
        xh = (sh << trail) | (sl >>> (32 - trail));
        xl = sl << trail;
      } else {
        xh = sh;
        xl = sl;
      }
      ph = (ph ^ xh) >>> 0;
      pl = (pl ^ xl) >>> 0;
    }
    words[2 * i + LO] = pl;
    words[2 * i + HI] = ph;
  }
  r.align();
  return out;
}
