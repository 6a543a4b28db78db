// The shard tables on PostgreSQL: the same windows, names and catalogue rows as on SQLite (telemetry_shards), the
// same row idea — one row per point keyed (series_id, t_ms, t_ns), field number n of the series' measurement in
// column n — but typed: PostgreSQL columns have one type, and measurements of a namespace share its shard tables
// with different types at the same field number. So field number n has three columns, c<n>f (double precision:
// floats), c<n>i (bigint: integers, unsigned integers up to 2^63 - 1, booleans as 0/1) and c<n>s (text); a value
// sits in the one of its field's type, the others stay NULL (a NULL costs one bit of the row's null bitmap).
import { sql, type RawBuilder } from 'kysely';
import type { FieldInfo, ShardInfo } from '../catalogue-types.ts';
import { FLOAT, STRING, type FieldKind } from '../line-scanner.ts';

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

/**
 * A PostgreSQL array literal for a `$n::<type>[]` parameter, written here: pg's own quotes and escapes every element
 * (numbers need neither) and its toString() drops the sign of -0. Strings are quoted with \\ and \" escaped.
 */
export function arrayLiteral(values: ReadonlyArray<number | bigint | string | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null) out += 'NULL';
    else if (typeof v === 'string') out += `"${v.replace(/[\\"]/g, '\\$&')}"`;
    else out += typeof v === 'number' && Object.is(v, -0) ? '-0' : String(v);
  }
  return `${out}}`;
}
