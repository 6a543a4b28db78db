// Plain-field queries: a series' points as JSON rows, read from its shard tables page by page.
import type { Catalogue, FieldInfo, ShardInfo } from './catalogue.ts';
import { flat } from '../../lib/flat-string.ts';
import { BOOLEAN, FLOAT } from '../line-protocol/line-scanner.ts';
import { type Column } from '../query/columns.ts';
import { columnIn, LITERAL_LIMITS, statement } from './statements.ts';
import { blockMs, MAX_BLOCK_ROWS, type RowBlock } from './block-stats.ts';
import type { PlannedQuery } from '../query/types.ts';
import { isoTimeJson } from '../query/result.ts';
import { blockAlone, windowPoints } from './blocks.ts';
import { appendBlockRowsJson, appendRowsJson, firstAtOrAfter } from '../query/sealed.ts';
import type { RowSink } from '../query/row-bytes.ts';

/** Rows per statement call: a page of rows comes back as one string (see rawRows), so pages bound its size. */
const PAGE_ROWS = 10_000;
/**
 * Up to this many rows, a query's rows are read from the table as rows (`t_ms, t_ns, [v,...]` each, the same
 * json_array text) with the limit written into the statement (LITERAL_LIMITS), instead of whole blocks (below): the
 * latest point of a field, asked for a thousand series in one request, is the common case, and reading its block whole
 * would cost an hour of rows for one.
 */
const FEW_ROWS = LITERAL_LIMITS;

/**
 * A column's value as a JSON value inside json_array(): booleans (stored 0/1) as true/false; integral floats below
 * 2^53 as integers (`2`, like InfluxDB and JavaScript, not SQLite's `2.0`); the rest as stored.
 */
export function jsonColumn(col: string | undefined, field: FieldInfo): string {
  if (col === undefined) return 'NULL';
  if (field.kind === BOOLEAN) return `CASE ${col} WHEN 1 THEN json('true') WHEN 0 THEN json('false') END`;
  if (field.kind === FLOAT) return `CASE WHEN ${col} = CAST(${col} AS INTEGER) AND abs(${col}) < 9007199254740992.0 THEN CAST(${col} AS INTEGER) ELSE ${col} END`;
  return col;
}

/** The series' points as JSON rows `["time",v,...]` (ISO times, docs/api.md), comma-separated; '' when there are none. */
export function rawRows(catalogue: Catalogue, q: PlannedQuery, seriesId: number, columns: Column[]): string {
  return jsonRows(catalogue, q.shards, seriesId, columns.map((c) => c.field), q.fromMs, q.toMs, q.query.orderBy === 'DESC', q.query.limit ?? Infinity, isoTimeJson, []).join(',');
}

/**
 * A series' rows of `fields` in [fromMs, toMs), at most `limit`, in time order (`desc`: newest first), skipping rows
 * where none of the fields is set: each `[<time>,v,...]` with the time as `timeJson` writes it.
 *
 * SQLite writes each page of rows as one text, `t_ms,t_ns,[v,...]` per line, formatting the values itself (json_array
 * writes floats in their shortest round-trip form and integers with every digit): handing every value to JavaScript
 * one by one costs more than reading the rows; the time text is
 * written here, where a day's prefix is computed once (SQLite's strftime per row costs more than the rest of the row).
 * Formatting is still most of a read, so a block's
 * rows, once read whole, are kept until a write of the block (block-stats.ts) and later queries cut them by time.
 * Pages after the first continue after the last row returned (keyset), so a page never re-reads rows.
 * group_concat() keeps the order of the ordered, limited subquery it reads (SQLite cannot flatten it), but the
 * documentation only promises that with an ORDER BY inside the aggregate, which costs a sort: the order is checked
 * while the page is read, and a page out of order is read again with that ORDER BY.
 */
export function jsonRows<S extends RowSink>(catalogue: Catalogue, shards: readonly ShardInfo[], seriesId: number, fields: readonly FieldInfo[], fromMs: number, toMs: number,
  desc: boolean, limit: number, timeJson: (ms: number, ns: number) => string, rows: S): S {
  const fieldsKey = fields.map((f) => `${f.ordinal}:${f.kind}`).join(',');
  for (let i = 0; i < shards.length && rows.length < limit; i++) {
    const shard = shards[desc ? shards.length - 1 - i : i];
    const from = Math.max(fromMs, shard.startMs);
    const to = Math.min(toMs, shard.endMs);
    if (from >= to) continue;
    if (shard.sealed) {
      const alone = blockAlone(catalogue, shard, seriesId, fields);
      if (alone === undefined) appendRowsJson(windowPoints(catalogue, shard, seriesId, fields, from, to), fields, desc, limit, rows, timeJson);
      else if (alone !== null) appendBlockRowsJson(alone, fields, from, to, desc, limit, rows, timeJson);
      continue;
    }
    const cols = fields.map((f) => columnIn(shard, f));
    if (cols.every((c) => c === undefined)) continue;
    const reader = shardRows(catalogue, shard, seriesId, fields, cols, `${shard.columns}/${fieldsKey}`, timeJson);
    if (limit - rows.length <= FEW_ROWS) {
      reader.few(from, to, desc, limit - rows.length, rows);
      continue;
    }
    // Block by block, from the block's kept rows (read whole once, kept until a write of the block: block-stats.ts);
    // a block of more rows than are kept is read from the table, page by page.
    const size = blockMs(shard);
    const first = Math.floor((from - shard.startMs) / size);
    const last = Math.ceil((to - shard.startMs) / size) - 1;
    for (let k = 0; k <= last - first && rows.length < limit; k++) {
      const block = desc ? last - k : first + k;
      const start = shard.startMs + block * size;
      const lo = Math.max(from, start);
      const hi = Math.min(to, start + size);
      const kept = reader.block(block, start, start + size);
      if (kept === undefined) reader.range(lo, hi, desc, limit, rows);
      else appendKept(kept, lo, hi, desc, limit, rows);
    }
  }
  return rows;
}

/** Appends the rows of a kept block timed in [lo, hi), in the query's order, up to the limit. */
function appendKept(kept: RowBlock, lo: number, hi: number, desc: boolean, limit: number, rows: RowSink): void {
  const { ms, rows: all } = kept;
  const begin = firstAtOrAfter(ms, lo);
  const end = firstAtOrAfter(ms, hi);
  if (desc) for (let r = end - 1; r >= begin && rows.length < limit; r--) rows.push(all[r]);
  else for (let r = begin; r < end && rows.length < limit; r++) rows.push(all[r]);
}

/** A number per time format, for the keys of kept blocks (their rows carry the time text). */
const timeFormats = new Map<(ms: number, ns: number) => string, number>();
function timeFormatId(timeJson: (ms: number, ns: number) => string): number {
  let id = timeFormats.get(timeJson);
  if (id === undefined) timeFormats.set(timeJson, id = timeFormats.size);
  return id;
}

interface ShardRows {
  /** up to `take` rows of [from, to) in the query's order, read as rows */
  few(from: number, to: number, desc: boolean, take: number, rows: RowSink): void;
  /** rows of [from, to) in the query's order until the limit, read page by page */
  range(from: number, to: number, desc: boolean, limit: number, rows: RowSink): void;
  /** the kept rows of a block (in `timeJson`'s format), read whole and kept when not yet kept; undefined when the block holds too many rows */
  block(block: number, start: number, end: number): RowBlock | undefined;
}

/**
 * The statements reading one series' rows of `fields` from one shard (`cols`: their columns there; `shape`: their key),
 * rows written with `timeJson`.
 */
function shardRows(catalogue: Catalogue, shard: ShardInfo, seriesId: number, fields: readonly FieldInfo[], cols: Array<string | undefined>, shape: string,
  timeJson: (ms: number, ns: number) => string): ShardRows {
  // the statements' texts, built only when a statement is not prepared yet
  const parts = (desc: boolean) => {
    const present = [...new Set(cols.filter((c) => c !== undefined))];
    return {
      present, dir: desc ? 'DESC' : 'ASC', values: `json_array(${cols.map((c, k) => jsonColumn(c, fields[k])).join(', ')})`,
      where: `WHERE series_id = ? AND t_ms >= ? AND t_ms < ? AND (${present.map((c) => `${c} IS NOT NULL`).join(' OR ')})`,
    };
  };
  const pageSql = (desc: boolean, after: boolean, ordered: boolean) => {
    const { present, dir, values, where } = parts(desc);
    return `SELECT count(*), group_concat(t_ms || ',' || t_ns || ',' || ${values}, char(10)${ordered ? ` ORDER BY t_ms ${dir}, t_ns ${dir}` : ''})
      FROM (SELECT t_ms, t_ns, ${present.join(', ')} FROM "${shard.table}" ${where}
        ${after ? `AND (t_ms, t_ns) ${desc ? '<' : '>'} (?, ?)` : ''}
        ORDER BY t_ms ${dir}, t_ns ${dir} LIMIT ?)`;
  };
  const page = (from: number, to: number, desc: boolean, after: [number, number] | undefined, size: number, ordered: boolean): [number, string | null] => {
    const key = `${shard.table}/${shape}/r${desc ? 'd' : 'a'}${after === undefined ? '' : '+'}${ordered ? 'o' : ''}`;
    const stmt = statement(catalogue, key, () => pageSql(desc, after !== undefined, ordered));
    return (after === undefined ? stmt.get(seriesId, from, to, size) : stmt.get(seriesId, from, to, after[0], after[1], size)) as [number, string | null];
  };
  return {
    few(from, to, desc, take, rows) {
      const limit = Math.trunc(take);
      const stmt = statement(catalogue, `${shard.table}/${shape}/f${desc ? 'd' : 'a'}${limit}`, () => {
        const { dir, values, where } = parts(desc);
        return `SELECT t_ms, t_ns, ${values} FROM "${shard.table}" ${where} ORDER BY t_ms ${dir}, t_ns ${dir} LIMIT ${limit}`;
      });
      for (const [ms, ns, values] of stmt.all(seriesId, from, to) as Array<[number, number, string]>) rows.push(flat(`[${timeJson(ms, ns)},${values.slice(1)}`));
    },
    range(from, to, desc, limit, rows) {
      let last: [number, number] | undefined;
      while (rows.length < limit) {
        const size = Math.min(limit - rows.length, PAGE_ROWS);
        let [count, text] = page(from, to, desc, last, size, false);
        if (count === 0 || text === null) break;
        // a page out of order is read again, ordered: its rows are appended once the page is known to be in order
        const pageRows: string[] = [];
        let end = appendRows(text, desc, pageRows, timeJson);
        if (end === undefined) {
          pageRows.length = 0;
          [count, text] = page(from, to, desc, last, size, true);
          end = appendRows(text!, desc, pageRows, timeJson)!;
        }
        for (const row of pageRows) rows.push(row);
        last = end;
        if (count < size) break;
      }
    },
    block(block, start, end) {
      const stats = catalogue.blockStats;
      const key = `${shape}/t${timeFormatId(timeJson)}`;
      const kept = stats.keptRows(shard, seriesId, key, block);
      if (kept !== undefined) return kept === 'oversized' ? undefined : kept;
      let [count, text] = page(start, end, false, undefined, MAX_BLOCK_ROWS + 1, false);
      if (count > MAX_BLOCK_ROWS) {
        stats.keep(shard, seriesId, key, block, 'oversized');
        return undefined;
      }
      const ms = new Float64Array(count);
      const read: RowBlock = { ms, rows: [], size: 0 };
      const timed = (t: number, sub: number) => {
        ms[read.rows.length] = t;
        return timeJson(t, sub);
      };
      if (text !== null && appendRows(text, false, read.rows, timed) === undefined) {
        read.rows.length = 0;
        [count, text] = page(start, end, false, undefined, MAX_BLOCK_ROWS + 1, true);
        appendRows(text!, false, read.rows, timed);
      }
      read.size = read.rows.length;
      stats.keep(shard, seriesId, key, block, read);
      return read;
    },
  };
}

/**
 * Appends the `t_ms,t_ns,[v,...]` lines of a page to `rows` as JSON rows; returns the time of the last one, or
 * undefined when the lines are not in the query's order.
 */
export function appendRows(text: string, desc: boolean, rows: string[], timeJson = isoTimeJson): [number, number] | undefined {
  let pos = 0;
  let ms = Number.NaN;
  let ns = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    const a = text.indexOf(',', pos);
    const b = text.indexOf(',', a + 1);
    const nextMs = Number(text.slice(pos, a));
    const nextNs = Number(text.slice(a + 1, b));
    if (!Number.isNaN(ms)) {
      const step = nextMs - ms || nextNs - ns;
      if (desc ? step >= 0 : step <= 0) return undefined;
    }
    ms = nextMs;
    ns = nextNs;
    rows.push(flat(`[${timeJson(ms, ns)},${text.slice(b + 2, nl)}`));
    pos = nl + 1;
  }
  return [ms, ns];
}

