// One field's values in a block: which rows have a value (booleans.ts; nothing when all do), then the values of those
// rows with the codec of the field's kind.
import { BOOLEAN, FLOAT, INTEGER, STRING, UNSIGNED, type FieldKind } from '../line-scanner.ts';
import type { ByteReader, ByteWriter } from './bits.ts';
import { decodeBools, encodeBools } from './booleans.ts';
import { decodeFloats, encodeFloats } from './floats.ts';
import { decodeInts, encodeInts } from './integers.ts';
import { decodeStrings, encodeStrings } from './strings.ts';
import { BlockFormatError } from './errors.ts';

/** One field's values in a block. `present`: undefined when every row has a value, else one byte per row (1/0). */
export interface Column {
  kind: FieldKind;
  present: Uint8Array | undefined;
  /** values of the present rows only, in row order:
   *  float -> Float64Array; integer/unsigned -> Float64Array when every value is within ±(2^53-1), else BigInt64Array;
   *  boolean -> Uint8Array (0/1); string -> string[] */
  values: Float64Array | BigInt64Array | Uint8Array | string[];
}

const HAS_PRESENCE = 8;

/** The number of rows with a value. */
export function presentCount(present: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < present.length; i++) if (present[i] !== 0) count++;
  return count;
}

/**
 * Writes a column of n rows. A presence of all ones is written as none (it reads back undefined). Throws RangeError
 * or TypeError when the column does not hold together (lengths, the array type of its kind).
 */
export function encodeColumn(w: ByteWriter, column: Column, n: number): void {
  const { kind, present, values } = column;
  if (present && present.length !== n) throw new RangeError(`presence of ${present.length} rows in a block of ${n}`);
  const count = present ? presentCount(present) : n;
  if (values.length !== count) throw new RangeError(`${values.length} values for ${count} rows with a value`);
  const partial = present !== undefined && count < n;
  w.byte(kind | (partial ? HAS_PRESENCE : 0));
  if (partial) encodeBools(w, present);
  if (kind === FLOAT && values instanceof Float64Array) encodeFloats(w, values);
  else if ((kind === INTEGER || kind === UNSIGNED) && (values instanceof Float64Array || values instanceof BigInt64Array)) encodeInts(w, values);
  else if (kind === BOOLEAN && values instanceof Uint8Array) encodeBools(w, values);
  else if (kind === STRING && Array.isArray(values)) encodeStrings(w, values);
  else throw new TypeError(`values of field kind ${kind} as ${values.constructor.name}`);
}

export function decodeColumn(r: ByteReader, n: number): Column {
  const head = r.byte();
  const kind = head & 7;
  if (kind > BOOLEAN || head & ~(7 | HAS_PRESENCE)) throw new BlockFormatError(`column head ${head}`);
  let present: Uint8Array | undefined;
  let count = n;
  if (head & HAS_PRESENCE) {
    present = decodeBools(r, n);
    count = presentCount(present);
  }
  let values: Column['values'];
  if (kind === FLOAT) values = decodeFloats(r, count);
  else if (kind === BOOLEAN) values = decodeBools(r, count);
  else if (kind === STRING) values = decodeStrings(r, count);
  else values = decodeInts(r, count);
  return { kind: kind as FieldKind, present, values };
}
