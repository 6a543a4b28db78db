// Strings: a dictionary of the distinct values in order of first appearance, then each row's index into it (an
// integer sequence: runs when a value holds, a few bits each otherwise). The dictionary is one UTF-8 text with the
// lengths of its entries in UTF-16 units; a dictionary with lone surrogates (which UTF-8 cannot hold) is stored as
// raw UTF-16 instead, so every JavaScript string comes back exactly.
import { ByteReader, ByteWriter } from './bits.ts';
import { decodeSafeInts, encodeInts } from './integers.ts';
import { BlockFormatError } from './errors.ts';

const UTF8 = 0;
const UTF16 = 1;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Nothing at all for no values. */
export function encodeStrings(w: ByteWriter, values: readonly string[]): void {
  const n = values.length;
  if (n === 0) return;
  const index = new Map<string, number>();
  const at = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let k = index.get(values[i]);
    if (k === undefined) index.set(values[i], (k = index.size));
    at[i] = k;
  }
  const entries = [...index.keys()];
  const text = entries.join('');
  w.varint(entries.length);
  encodeInts(w, Float64Array.from(entries, (s) => s.length));
  if (LONE_SURROGATE.test(text)) {
    w.byte(UTF16);
    const units = new Uint8Array(text.length * 2);
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      units[2 * i] = c & 255;
      units[2 * i + 1] = c >>> 8;
    }
    w.bytes(units);
  } else {
    w.byte(UTF8);
    const bytes = encoder.encode(text);
    w.varint(bytes.length);
    w.bytes(bytes);
  }
  if (entries.length > 1) encodeInts(w, at);
}

export function decodeStrings(r: ByteReader, n: number): string[] {
  if (n === 0) return [];
  const size = r.count(n);
  if (size === 0) throw new BlockFormatError('empty dictionary');
  const lengths = decodeSafeInts(r, size);
  let total = 0;
  for (let k = 0; k < size; k++) {
    if (!(lengths[k] >= 0)) throw new BlockFormatError('string length');
    total += lengths[k];
  }
  const form = r.byte();
  let text: string;
  if (form === UTF16) {
    if (total > r.left / 2) throw new BlockFormatError('truncated');
    const units = r.take(total * 2);
    const parts: string[] = [];
    for (let i = 0; i < total; i += 4096) {
      const codes: number[] = [];
      for (let j = i; j < Math.min(total, i + 4096); j++) codes.push(units[2 * j] | (units[2 * j + 1] << 8));
      parts.push(String.fromCharCode(...codes));
    }
    text = parts.join('');
  } else if (form === UTF8) {
    const bytes = r.take(r.count(r.left));
    try {
      text = decoder.decode(bytes);
    } catch {
      throw new BlockFormatError('invalid UTF-8');
    }
    if (text.length !== total) throw new BlockFormatError('string lengths do not match the text');
  } else throw new BlockFormatError(`string form ${form}`);
  const entries: string[] = new Array(size);
  let from = 0;
  for (let k = 0; k < size; k++) {
    entries[k] = text.slice(from, from + lengths[k]);
    from += lengths[k];
  }
  const out: string[] = new Array(n);
  if (size === 1) return out.fill(entries[0]);
  const at = decodeSafeInts(r, n);
  for (let i = 0; i < n; i++) {
    const s = entries[at[i]];
    if (s === undefined) throw new BlockFormatError('dictionary index out of range');
    out[i] = s;
  }
  return out;
}
