// The block: one series' rows of one time window, times and a column per field.
//
//   version byte (1) | varint rows | varint slots | varint bytes of the times | varint bytes of each slot's column
//   (0: no column) | the times | the columns
//
// The directory lets a reader find any column without decoding the others. A later format takes a new version byte
// and is read beside this one.
import { ByteReader, ByteWriter } from './bits.ts';
import { decodeColumn, encodeColumn, type Column } from './column.ts';
import { decodeTimes, encodeTimes } from './timestamps.ts';
import { BlockFormatError } from './errors.ts';

export const BLOCK_VERSION = 1;
/** Rows a block may hold: bounds what decoding a corrupt block can allocate (~12 MB of times, 8 MB a column). */
export const MAX_BLOCK_ROWS = 1 << 20;

export interface BlockData {
  /** length n */
  ms: Float64Array;
  /** length n */
  sub: Int32Array;
  /** by field ordinal (the measurement's field number); undefined: the field has no value in this block */
  columns: Array<Column | undefined>;
}

/** Throws RangeError or TypeError when the block does not hold together (see encodeColumn). */
export function encodeBlock(block: BlockData): Uint8Array {
  const n = block.ms.length;
  if (n > MAX_BLOCK_ROWS) throw new RangeError(`${n} rows in a block, at most ${MAX_BLOCK_ROWS}`);
  let slots = block.columns.length;
  while (slots > 0 && block.columns[slots - 1] === undefined) slots--;
  const times = new ByteWriter(64);
  encodeTimes(times, block.ms, block.sub);
  const parts = [times.finish()];
  for (let k = 0; k < slots; k++) {
    const column = block.columns[k];
    if (!column) {
      parts.push(new Uint8Array(0));
      continue;
    }
    const w = new ByteWriter(n + 16);
    encodeColumn(w, column, n);
    parts.push(w.finish());
  }
  const out = new ByteWriter(16 + 4 * slots + parts.reduce((sum, p) => sum + p.length, 0));
  out.byte(BLOCK_VERSION);
  out.varint(n);
  out.varint(slots);
  for (const p of parts) out.varint(p.length);
  for (const p of parts) out.bytes(p);
  return out.finish();
}

interface Directory {
  rows: number;
  /** [offset, length] of the times, then of each slot */
  spans: Array<[number, number]>;
}

function readDirectory(bytes: Uint8Array): Directory {
  const r = new ByteReader(bytes);
  const version = r.byte();
  if (version !== BLOCK_VERSION) throw new BlockFormatError(`version ${version}`);
  const rows = r.count(MAX_BLOCK_ROWS);
  const slots = r.count(r.left);
  const lengths: number[] = [];
  for (let k = 0; k <= slots; k++) lengths.push(r.count(r.left));
  let at = r.pos;
  const spans = lengths.map((length): [number, number] => [(at += length) - length, length]);
  if (at !== bytes.length) throw new BlockFormatError(`directory of ${at} bytes in a block of ${bytes.length}`);
  return { rows, spans };
}

/** rows in the block, without decoding anything (from the header) */
export function blockRowCount(bytes: Uint8Array): number {
  const r = new ByteReader(bytes);
  const version = r.byte();
  if (version !== BLOCK_VERSION) throw new BlockFormatError(`version ${version}`);
  return r.count(MAX_BLOCK_ROWS);
}

/**
 * `ordinals`: decode only these columns (the others come back undefined, without being decoded); all when omitted.
 * Times are always decoded. Throws BlockFormatError on a corrupt or truncated block.
 */
/**
 * `block` (decoded from `bytes` before, with some columns, or undefined) with the columns of `ordinals` decoded as
 * well; the times are decoded once. `block` itself is left as it is (caches weigh it as it was kept): when a column
 * is added, the answer is a new BlockData sharing its times and columns; else `block`.
 */
export function withColumns(bytes: Uint8Array, block: BlockData | undefined, ordinals: readonly number[]): BlockData {
  if (block === undefined) return decodeBlock(bytes, ordinals);
  const { rows, spans } = readDirectory(bytes);
  let out = block;
  for (const k of ordinals) {
    if (!(Number.isInteger(k) && k >= 0 && k < spans.length - 1) || spans[k + 1][1] === 0 || out.columns[k]) continue;
    const [offset, length] = spans[k + 1];
    const c = new ByteReader(bytes, offset, offset + length);
    if (out === block) out = { ...block, columns: [...block.columns] };
    out.columns[k] = decodeColumn(c, rows);
    c.done();
  }
  return out;
}

export function decodeBlock(bytes: Uint8Array, ordinals?: readonly number[]): BlockData {
  const { rows, spans } = readDirectory(bytes);
  const part = ([offset, length]: [number, number]) => new ByteReader(bytes, offset, offset + length);
  const r = part(spans[0]);
  const { ms, sub } = decodeTimes(r, rows);
  r.done();
  const columns: Array<Column | undefined> = new Array(spans.length - 1).fill(undefined);
  const wanted = ordinals ?? columns.map((_, k) => k);
  for (const k of wanted) {
    if (!(Number.isInteger(k) && k >= 0 && k < columns.length) || spans[k + 1][1] === 0 || columns[k]) continue;
    const c = part(spans[k + 1]);
    columns[k] = decodeColumn(c, rows);
    c.done();
  }
  return { ms, sub, columns };
}
