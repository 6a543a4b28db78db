// The shard tables on PostgreSQL: the same windows, names and catalogue rows as on SQLite (telemetry_shards), the
// same row idea — one row per point keyed (series_id, t_ms, t_ns), field number n of the series' measurement in
// column n — but typed: PostgreSQL columns have one type, and measurements of a namespace share its shard tables
// with different types at the same field number. So field number n has three columns, c<n>f (double precision:
// floats), c<n>i (bigint: integers, unsigned integers up to 2^63 - 1, booleans as 0/1) and c<n>s (text); a value
// sits in the one of its field's type, the others stay NULL (a NULL costs one bit of the row's null bitmap).
import { sql, type RawBuilder } from 'kysely';
import type { FieldInfo, ShardInfo } from '../catalogue-types.ts';
import { BOOLEAN, FLOAT, INT64_MAX, INT64_MIN, STRING, type FieldKind } from '../line-protocol/line-scanner.ts';
import type { Column } from '../blocks/index.ts';

/** PostgreSQL allows 1600 columns per table; three hold the key, three go to each field number. */
export const PG_MAX_FIELDS_PER_MEASUREMENT = Math.floor((1600 - 3) / 3);

/** The storage class of a field kind: f (double precision), i (bigint) or s (text). */
export function storageOf(kind: FieldKind): 'f' | 'i' | 's' {
  return kind === FLOAT ? 'f' : kind === STRING ? 's' : 'i';
}

export const PG_TYPES = { f: 'double precision', i: 'bigint', s: 'text' } as const;

/** The column of field number `ordinal` holding values of `kind`. */
export function pgColumn(ordinal: number, kind: FieldKind): string {
  return `c${ordinal}${storageOf(kind)}`;
}

/** A field's column in a shard table, or undefined when the table predates the field (it was never widened for it). */
export function pgColumnIn(shard: ShardInfo, field: FieldInfo): string | undefined {
  return field.ordinal < shard.columns ? pgColumn(field.ordinal, field.kind) : undefined;
}

/** The column definitions of field numbers [from, to). */
export function columnDefinitions(from: number, to: number): string[] {
  const out: string[] = [];
  for (let n = from; n < to; n++) for (const s of ['f', 'i', 's'] as const) out.push(`c${n}${s} ${PG_TYPES[s]}`);
  return out;
}

/** CREATE TABLE of a shard table with `columns` field numbers (IF NOT EXISTS: another process may have made it). */
export function createShardTable(table: string, columns: number): RawBuilder<unknown> {
  const defs = ['series_id bigint NOT NULL', 't_ms bigint NOT NULL', 't_ns integer NOT NULL', ...columnDefinitions(0, columns),
    'PRIMARY KEY (series_id, t_ms, t_ns)'];
  return sql`CREATE TABLE IF NOT EXISTS ${sql.id(table)} (${sql.raw(defs.join(', '))})`;
}

/** ALTER TABLE adding field numbers [from, to) to a shard table. */
export function widenShardTable(table: string, from: number, to: number): RawBuilder<unknown> {
  return sql`ALTER TABLE ${sql.id(table)} ${sql.raw(columnDefinitions(from, to).map((d) => `ADD COLUMN IF NOT EXISTS ${d}`).join(', '))}`;
}

/** The element types of arrays given as parameters, and their OIDs in PostgreSQL's binary format. */
const ELEMENT_OIDS = { integer: 23, bigint: 20, 'double precision': 701 } as const;
export type ArrayElement = keyof typeof ELEMENT_OIDS | 'text';

/**
 * A column of values as one array parameter of SQL type `type`[]: numbers in PostgreSQL's binary array format (each
 * value 8 bytes or 4, NULL as a length of -1), text in the array's text form. The binary form spares writing every
 * number as decimal text here and parsing it again on the server (5,000 rows of 5 fields: ~28,000 numbers a
 * request); node-postgres sends a Buffer parameter as binary. Integers that a binary element cannot hold exactly (not
 * an integer, out of range) keep the text form, which the server then checks as before.
 */
export function arrayParam(values: ReadonlyArray<Value>, type: ArrayElement): Buffer | string {
  return encodeColumns([values], undefined, type, false);
}

/**
 * Columns of values as one two-dimensional array parameter of SQL type `type`[] (row k: column k), each column's values
 * at `rows` (its row numbers, in this order), in the format arrayParam writes one column in; null when there are no
 * columns (PostgreSQL has no empty two-dimensional array).
 */
export function matrixParam(columns: ReadonlyArray<ReadonlyArray<Value>>, rows: ReadonlyArray<number>, type: ArrayElement): Buffer | string | null {
  if (columns.length === 0) return null;
  return encodeColumns(columns, rows, type, true);
}

/** The values of one column at `rows`, as arrayParam writes them. */
export function rowsParam(column: ReadonlyArray<Value>, rows: ReadonlyArray<number>, type: ArrayElement): Buffer | string {
  return encodeColumns([column], rows, type, false);
}

type Value = number | bigint | string | null;

/**
 * The values of `columns` at `rows` (every value when undefined), one column after the other: a one-dimensional array
 * of one column, or a two-dimensional one (`matrix`). Binary where every value fits the element type exactly, written
 * through a DataView (big-endian, as the format wants) without an intermediate array; the text form otherwise.
 */
function encodeColumns(columns: ReadonlyArray<ReadonlyArray<Value>>, rows: ReadonlyArray<number> | undefined, type: ArrayElement, matrix: boolean): Buffer | string {
  const n = rows === undefined ? columns[0].length : rows.length;
  const dims = matrix ? [columns.length, n] : [n];
  let present = type === 'text' ? -1 : 0;
  scan: for (const column of present < 0 ? [] : columns) {
    for (let k = 0; k < n; k++) {
      const v = column[rows === undefined ? k : rows[k]];
      if (v === null) continue;
      if (typeof v === 'string' || (typeof v === 'bigint' && type === 'double precision')
        || (type !== 'double precision' && !exactInteger(v, type as 'integer' | 'bigint'))) {
        present = -1;
        break scan;
      }
      present++;
    }
  }
  if (present < 0) {
    const values: Value[] = [];
    for (const column of columns) for (let k = 0; k < n; k++) values.push(column[rows === undefined ? k : rows[k]]);
    return arrayLiteral(values, dims);
  }
  const width = type === 'integer' ? 4 : 8;
  const total = columns.length * n;
  const head = 12 + dims.length * 8;
  const out = Buffer.allocUnsafe(head + total * 4 + present * width);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setInt32(0, dims.length); // dimensions
  view.setInt32(4, present < total ? 1 : 0); // has NULLs
  view.setUint32(8, ELEMENT_OIDS[type as keyof typeof ELEMENT_OIDS]);
  for (let d = 0; d < dims.length; d++) {
    view.setInt32(12 + d * 8, dims[d]);
    view.setInt32(16 + d * 8, 1); // lower bound
  }
  let at = head;
  for (const column of columns) {
    for (let k = 0; k < n; k++) {
      const v = column[rows === undefined ? k : rows[k]];
      if (v === null) {
        view.setInt32(at, -1);
        at += 4;
        continue;
      }
      view.setInt32(at, width);
      at += 4;
      if (type === 'double precision') view.setFloat64(at, v as number);
      else if (type === 'integer') view.setInt32(at, v as number);
      else if (typeof v === 'bigint') view.setBigInt64(at, v);
      else {
        // a safe integer as two 32-bit halves (two's complement), without a BigInt per value
        const high = Math.floor((v as number) / 4294967296);
        view.setInt32(at, high);
        view.setUint32(at + 4, (v as number) - high * 4294967296);
      }
      at += width;
    }
  }
  return out;
}

function exactInteger(v: number | bigint, type: 'integer' | 'bigint'): boolean {
  if (typeof v === 'bigint') return type === 'bigint' && v >= INT64_MIN && v <= INT64_MAX;
  if (type === 'integer') return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647;
  return Number.isSafeInteger(v);
}

/**
 * A PostgreSQL array literal for a `$n::<type>[]` parameter, written here: pg's own quotes and escapes every element
 * (numbers need neither) and its toString() drops the sign of -0. Strings are quoted with \\ and \" escaped. Two
 * dimensions: one brace group per row.
 */
function arrayLiteral(values: ReadonlyArray<Value>, dims: readonly number[]): string {
  const rowLength = dims.length === 2 ? dims[1] : values.length;
  let out = dims.length === 2 ? '{{' : '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += i % rowLength === 0 ? '},{' : ',';
    const v = values[i];
    if (v === null) out += 'NULL';
    else if (typeof v === 'string') out += `"${v.replace(/[\\"]/g, '\\$&')}"`;
    else out += typeof v === 'number' && Object.is(v, -0) ? '-0' : String(v);
  }
  return dims.length === 2 ? `${out}}}` : `${out}}`;
}

/** How decodeArray gives an element: a number (float8, int4, an int8 time), int8 as decimal text, or text. */
export type ElementAs = 'number' | 'decimal' | 'text';

/**
 * The elements of a one-dimensional array in PostgreSQL's binary format (what `array_send` returns, as a bytea), in
 * order; NULL elements as null, a NULL array as no elements. The reverse of arrayParam: reading a column of a series'
 * points as one value instead of a row per point spares the driver a row object and a string per value. Elements: float8 and int4 as numbers; int8 as numbers (`number`: times, exact below 2^53) or as decimal
 * text (`decimal`: field values, every digit); text as strings.
 */
export function decodeArray(bytes: Buffer | null, as: ElementAs): Array<number | string | null> {
  const out: Array<number | string | null> = [];
  eachElement(bytes, (view, oid, at, length) => {
    if (length < 0) out.push(null);
    else if (oid === ELEMENT_OIDS['double precision']) out.push(view.getFloat64(at));
    else if (oid === ELEMENT_OIDS.integer) out.push(view.getInt32(at));
    else if (oid === ELEMENT_OIDS.bigint) {
      const high = view.getInt32(at);
      const value = high * 4294967296 + view.getUint32(at + 4);
      // exact while |high| < 2^21 (the value below 2^53); beyond it, the digits through a BigInt
      out.push(as === 'decimal' ? (high >= -0x200000 && high < 0x200000 ? String(value) : view.getBigInt64(at).toString()) : value);
    } else out.push(bytes!.toString('utf8', at, at + length));
  });
  return out;
}

/**
 * The column (blocks/column.ts) of a field of `kind` from its values as a binary array (decodeArray), one element a
 * row, NULL where a row has none: typed from the bytes, without a value boxed per row. Integers and booleans are the
 * int8 a shard table stores (booleans 1 for true); undefined when no row has a value.
 */
export function columnOfArray(bytes: Buffer | null, kind: FieldKind, rows: number): Column | undefined {
  const present = new Uint8Array(rows);
  const numbers = kind === BOOLEAN ? new Uint8Array(rows) : new Float64Array(rows);
  const strings: string[] = [];
  let wide: BigInt64Array | undefined;
  let k = 0;
  let r = 0;
  eachElement(bytes, (view, oid, at, length) => {
    const row = r++;
    if (length < 0) return;
    present[row] = 1;
    if (kind === STRING) strings.push(bytes!.toString('utf8', at, at + length));
    else if (oid === ELEMENT_OIDS['double precision']) numbers[k] = view.getFloat64(at);
    else {
      const high = view.getInt32(at);
      if (kind === BOOLEAN) numbers[k] = high === 0 && view.getUint32(at + 4) === 1 ? 1 : 0;
      else if (wide === undefined && high >= -0x200000 && high < 0x200000 && !(high === -0x200000 && view.getUint32(at + 4) === 0)) {
        numbers[k] = high * 4294967296 + view.getUint32(at + 4);
      } else {
        // beyond ±(2^53 - 1): the whole column as int64
        wide ??= BigInt64Array.from((numbers as Float64Array).subarray(0, k), (v) => BigInt(v));
        if (wide.length < rows) wide = growTo(wide, rows);
        wide[k] = view.getBigInt64(at);
      }
    }
    k++;
  });
  if (r !== rows) throw new RangeError(`a column of ${r} values for ${rows} rows`);
  if (k === 0) return undefined;
  const values = kind === STRING ? strings : wide !== undefined ? wide.slice(0, k) : numbers.slice(0, k);
  return { kind, present: k < rows ? present : undefined, values };
}

function growTo(a: BigInt64Array, n: number): BigInt64Array {
  const out = new BigInt64Array(n);
  out.set(a);
  return out;
}

/** Calls `element` for each element of a one-dimensional binary array (length -1: NULL); nothing for a NULL array. */
function eachElement(bytes: Buffer | null, element: (view: DataView, oid: number, at: number, length: number) => void): void {
  if (bytes === null || bytes.length < 12) return;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dims = view.getInt32(0);
  if (dims === 0) return;
  if (dims !== 1) throw new TypeError(`decodeArray: ${dims} dimensions`);
  const oid = view.getUint32(8);
  eachArrayElement(bytes, (v, at, length) => element(v, oid, at, length));
}

/** The elements of a binary array (array_send) of one or two dimensions, all of them (0 for a NULL or empty array). */
export function arrayLength(bytes: Buffer | null): number {
  if (bytes === null || bytes.length < 12) return 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dims = view.getInt32(0);
  if (dims < 0 || dims > 2 || bytes.length < 12 + dims * 8) throw new TypeError(`a binary array of ${dims} dimensions`);
  let n = dims === 0 ? 0 : 1;
  for (let d = 0; d < dims; d++) n *= view.getInt32(12 + d * 8);
  return n;
}

/**
 * Calls `element` for each element of a binary array of one or two dimensions (array_send), in storage order (a
 * matrix row after row), with its index; length -1: NULL. Nothing for a NULL array. Throws where the bytes end early.
 */
export function eachArrayElement(bytes: Buffer | null, element: (view: DataView, at: number, length: number, index: number) => void): void {
  const n = arrayLength(bytes);
  if (n === 0) return;
  const view = new DataView(bytes!.buffer, bytes!.byteOffset, bytes!.byteLength);
  let at = 12 + view.getInt32(0) * 8;
  for (let k = 0; k < n; k++) {
    if (at + 4 > bytes!.length) throw new RangeError('a binary array cut short');
    const length = view.getInt32(at);
    at += 4;
    if (length > 0 && at + length > bytes!.length) throw new RangeError('a binary array cut short');
    element(view, at, length, k);
    if (length > 0) at += length;
  }
}
