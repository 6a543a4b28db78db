// Raw rows of one series with its tags among the columns (`SELECT *`, `SELECT f, nodeId`): the telemetry layer writes
// the rows of the fields (`[<time>,v1,v2,...]`), and the series' tag values, the same on every row, are spliced in
// at their columns here, so such a select takes the same path as one of fields alone instead of reading the points
// into arrays first.
import type { RowSink } from '../telemetry/query/row-bytes.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

/**
 * `into`, with each row it is given rewritten from the fields' values to the columns': `columns` holds, per column
 * after the time, the JSON text of a tag value, or undefined for the next field's value.
 */
export function withTagColumns(into: RowSink, columns: ReadonlyArray<string | undefined>): RowSink {
  return {
    get length() {
      return into.length;
    },
    push: (row: string) => into.push(spliceColumns(row, columns)),
  };
}

/** The row `[<time>,v1,v2,...]` of JSON values with the constant texts of `columns` put in (see withTagColumns). */
export function spliceColumns(row: string, columns: ReadonlyArray<string | undefined>): string {
  let at = nextComma(row, 1);
  let out = row.slice(0, at);
  for (const text of columns) {
    if (text !== undefined) {
      out += `,${text}`;
      continue;
    }
    const next = nextComma(row, at + 1);
    out += row.slice(at, next);
    at = next;
  }
  return `${out}]`;
}

/** The index of the first comma between values at or after `from`, outside strings; the closing bracket's when none. */
function nextComma(row: string, from: number): number {
  const end = row.length - 1;
  for (let i = from; i < end; i++) {
    const c = row.charCodeAt(i);
    if (c === COMMA) return i;
    if (c === QUOTE) {
      for (i++; i < end && row.charCodeAt(i) !== QUOTE; i++) if (row.charCodeAt(i) === BACKSLASH) i++;
    }
  }
  return end;
}
