// The shard tables on PostgreSQL: the same windows, names and catalogue rows as on SQLite (telemetry_shards), the
// same row idea — one row per point keyed (series_id, t_ms, t_ns), field number n of the series' measurement in
// column n — but typed: PostgreSQL columns have one type, and measurements of a namespace share its shard tables
// with different types at the same field number. So field number n has three columns, c<n>f (double precision:
// floats), c<n>i (bigint: integers, unsigned integers up to 2^63 - 1, booleans as 0/1) and c<n>s (text); a value
// sits in the one of its field's type, the others stay NULL (a NULL costs one bit of the row's null bitmap).
import { sql, type RawBuilder } from 'kysely';
import type { FieldInfo, ShardInfo } from '../catalogue-types.ts';
import { FLOAT, INT64_MAX, INT64_MIN, STRING, type FieldKind } from '../line-scanner.ts';

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
export function arrayParam(values: ReadonlyArray<number | bigint | string | null>, type: ArrayElement): Buffer | string {
  return encodeArray(values, type, [values.length]);
}

/**
 * Equal-length columns of values as one two-dimensional array parameter of SQL type `type`[] (row k: column k), as
 * arrayParam writes one column; null when there are no columns (PostgreSQL has no empty two-dimensional array).
 */
export function matrixParam(columns: ReadonlyArray<ReadonlyArray<number | bigint | string | null>>, type: ArrayElement): Buffer | string | null {
  if (columns.length === 0) return null;
  return encodeArray(columns.flat(), type, [columns.length, columns[0].length]);
}

/** `values` (row-major) as an array of the dimensions `dims`, in the binary format where it holds them exactly. */
function encodeArray(values: ReadonlyArray<number | bigint | string | null>, type: ArrayElement, dims: readonly number[]): Buffer | string {
  if (type === 'text') return arrayLiteral(values, dims);
  const width = type === 'integer' ? 4 : 8;
  let present = 0;
  for (const v of values) {
    if (v === null) continue;
    if (typeof v === 'string' || (typeof v === 'bigint' && type === 'double precision')) return arrayLiteral(values, dims);
    if (type !== 'double precision' && !exactInteger(v, type)) return arrayLiteral(values, dims);
    present++;
  }
  const head = 12 + dims.length * 8;
  const out = Buffer.allocUnsafe(head + values.length * 4 + present * width);
  out.writeInt32BE(dims.length, 0); // dimensions
  out.writeInt32BE(present < values.length ? 1 : 0, 4); // has NULLs
  out.writeUInt32BE(ELEMENT_OIDS[type], 8);
  for (let d = 0; d < dims.length; d++) {
    out.writeInt32BE(dims[d], 12 + d * 8);
    out.writeInt32BE(1, 16 + d * 8); // lower bound
  }
  let at = head;
  for (const v of values) {
    if (v === null) {
      out.writeInt32BE(-1, at);
      at += 4;
      continue;
    }
    out.writeInt32BE(width, at);
    at += 4;
    if (type === 'double precision') out.writeDoubleBE(v as number, at);
    else if (type === 'integer') out.writeInt32BE(v as number, at);
    else if (typeof v === 'bigint') out.writeBigInt64BE(v, at);
    else {
      // a safe integer as two 32-bit halves (two's complement), without a BigInt per value
      const high = Math.floor((v as number) / 4294967296);
      out.writeInt32BE(high, at);
      out.writeUInt32BE((v as number) - high * 4294967296, at + 4);
    }
    at += width;
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
function arrayLiteral(values: ReadonlyArray<number | bigint | string | null>, dims: readonly number[]): string {
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
