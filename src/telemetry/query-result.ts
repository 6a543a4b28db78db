// The Influx-style answer of a query (contract §7.3) and its JSON text. Integers are bigint so int64 values survive
// exactly: the serializer writes them as JSON numbers with every digit (as InfluxDB does), which JSON.stringify cannot.

/** A value in a result row: time (ISO string) or a field value; bigint for integers. */
export type Cell = number | bigint | string | boolean | null;

export interface SeriesResult {
  name: string;
  tags: Record<string, string>;
  columns: string[];
  values: Cell[][];
}

export type StatementResult =
  | { statement_id: number; series?: SeriesResult[] }
  | { statement_id: number; error: string };

/** The response body: one object for a single query, else an array in request order. */
export function resultsJson(results: readonly StatementResult[], single: boolean): string {
  const parts = results.map(statementJson);
  return single ? parts[0] : `[${parts.join(',')}]`;
}

function statementJson(r: StatementResult): string {
  if ('error' in r) return `{"statement_id":${r.statement_id},"error":${JSON.stringify(r.error)}}`;
  if (r.series === undefined) return `{"statement_id":${r.statement_id}}`;
  return `{"statement_id":${r.statement_id},"series":[${r.series.map(seriesJson).join(',')}]}`;
}

function seriesJson(s: SeriesResult): string {
  const rows = s.values.map((row) => {
    let out = '[';
    for (let i = 0; i < row.length; i++) {
      if (i > 0) out += ',';
      out += cellJson(row[i]);
    }
    return `${out}]`;
  });
  return `{"name":${JSON.stringify(s.name)},"tags":${JSON.stringify(s.tags)},"columns":${JSON.stringify(s.columns)},"values":[${rows.join(',')}]}`;
}

function cellJson(v: Cell): string {
  switch (typeof v) {
    case 'bigint': return v.toString();
    case 'number': return Number.isFinite(v) ? String(v) : 'null';
    case 'string': return JSON.stringify(v);
    case 'boolean': return v ? 'true' : 'false';
    default: return 'null';
  }
}
