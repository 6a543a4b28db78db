// Columns from rows as the query layer holds them (one value or null per row), and back.
import { BOOLEAN, FLOAT, INTEGER, STRING, UNSIGNED, type FieldKind } from '../line-protocol/line-scanner.ts';
import type { Column } from './column.ts';
import { numberJson } from '../../lib/number-json.ts';

export type RowValue = number | bigint | string | boolean | null;

const MAX_SAFE_BIG = BigInt(Number.MAX_SAFE_INTEGER);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** An integer as the exact int64 it stands for: a bigint, or an integral number (exact when within ±(2^53 - 1)). */
function int64Of(v: RowValue): bigint {
  const b = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : undefined;
  if (b === undefined) throw new TypeError(`not an integer: ${String(v)}`);
  if (b < INT64_MIN || b > INT64_MAX) throw new RangeError(`beyond 64-bit integers: ${b}`);
  return b;
}

/**
 * The column of `values` (values[i] is row i; null: missing); undefined when no row has a value. Integers may come as
 * number or bigint, booleans as boolean. Throws TypeError for a value not of the kind, RangeError beyond int64.
 */
export function columnFromValues(kind: FieldKind, values: ReadonlyArray<RowValue>): Column | undefined {
  const n = values.length;
  const present = new Uint8Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (values[i] !== null) {
      present[i] = 1;
      count++;
    }
  }
  if (count === 0) return undefined;
  const given = values.filter((v) => v !== null);
  const wrong = (v: RowValue) => new TypeError(`a ${typeof v} in a column of field kind ${kind}`);
  let out: Column['values'];
  if (kind === FLOAT) {
    out = Float64Array.from(given, (v) => {
      if (typeof v !== 'number') throw wrong(v);
      return v;
    });
  } else if (kind === INTEGER || kind === UNSIGNED) {
    const ints = given.map(int64Of);
    out = ints.every((b) => b <= MAX_SAFE_BIG && b >= -MAX_SAFE_BIG) ? Float64Array.from(ints, Number) : BigInt64Array.from(ints);
  } else if (kind === BOOLEAN) {
    out = Uint8Array.from(given, (v) => {
      if (typeof v !== 'boolean') throw wrong(v);
      return v ? 1 : 0;
    });
  } else if (kind === STRING) {
    out = given.map((v) => {
      if (typeof v !== 'string') throw wrong(v);
      return v;
    });
  } else throw new TypeError(`field kind ${kind}`);
  return { kind, present: count < n ? present : undefined, values: out };
}

/** A column's values by row (null where a row has none): integers as numbers when safe, else bigint. */
export function valuesOfColumn(column: Column, rows: number): RowValue[] {
  const cells = columnCells(column, rows);
  const out: RowValue[] = new Array(rows);
  for (let i = 0; i < rows; i++) out[i] = cells.value(i);
  return out;
}

/** A decoded column read row by row, without a value per row made up front. */
export interface ColumnCells {
  /** row i's value (integers beyond 2^53 as bigint), null when it has none */
  value(i: number): RowValue;
  /** row i's value as JSON (integers with every digit), undefined when it has none */
  json(i: number): string | undefined;
}

export function columnCells(column: Column, rows: number): ColumnCells {
  const { kind, present, values } = column;
  if ((present?.length ?? values.length) !== rows) throw new RangeError(`a column of ${present?.length ?? values.length} rows read as ${rows}`);
  // the values' index of each row (-1: no value), when some rows have none
  let index: Int32Array | undefined;
  if (present !== undefined) {
    index = new Int32Array(rows);
    let k = 0;
    for (let i = 0; i < rows; i++) index[i] = present[i] !== 0 ? k++ : -1;
    if (k !== values.length) throw new RangeError(`${values.length} values for the rows present`);
  }
  const at = (i: number) => (index === undefined ? i : index[i]);
  if (kind === BOOLEAN) {
    const v = values as Uint8Array;
    return {
      value: (i) => { const k = at(i); return k < 0 ? null : v[k] !== 0; },
      json: (i) => { const k = at(i); return k < 0 ? undefined : v[k] !== 0 ? 'true' : 'false'; },
    };
  }
  if (kind === STRING) {
    const v = values as string[];
    return {
      value: (i) => { const k = at(i); return k < 0 ? null : v[k]; },
      json: (i) => { const k = at(i); return k < 0 ? undefined : JSON.stringify(v[k]); },
    };
  }
  if (values instanceof BigInt64Array) {
    return {
      value: (i) => {
        const k = at(i);
        if (k < 0) return null;
        const b = values[k];
        return b <= MAX_SAFE_BIG && b >= -MAX_SAFE_BIG ? Number(b) : b;
      },
      json: (i) => { const k = at(i); return k < 0 ? undefined : String(values[k]); },
    };
  }
  const v = values as Float64Array;
  return {
    value: (i) => { const k = at(i); return k < 0 ? null : v[k]; },
    json: (i) => { const k = at(i); return k < 0 ? undefined : numberJson(v[k]); },
  };
}
