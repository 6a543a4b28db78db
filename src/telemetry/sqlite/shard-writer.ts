// Buffers the points of one write request per (shard table, measurement) and stores them at the end of the request,
// sorted by key, with multi-row upserts. Runs inside the request's transaction, synchronously, in its exclusive
// sections (add() while the body is scanned, flush() after the rights check). One statement call per 64 rows instead of
// one per row removes most of the per-call overhead, and inserting in key order (series by series instead of the
// time-major order devices send) touches each B-tree leaf once instead of once per timestamp (bench/telemetry/layout.mjs).
//
// Row layout (decided by bench/telemetry/layout.mjs): one row per point, (series_id, t_ms, t_ns, c0, c1, ...) in a
// WITHOUT ROWID table keyed (series_id, t_ms, t_ns), c<n> = field number n of the series' measurement. A field a line
// does not carry is bound as NULL and `coalesce` keeps the stored value: re-writing a (series, time) overwrites
// exactly the given fields (InfluxDB semantics); within a request the sort is stable, so the last line wins.
// Integers and booleans are bound as numbers (or bigint beyond 2^53) and CAST to INTEGER in SQL, so they are stored
// as compact exact integers.
import type { Catalogue, FieldInfo, MeasurementInfo, NamespaceInfo, SeriesInfo, ShardInfo } from './catalogue.ts';
import { BOOLEAN, FLOAT, INTEGER, STRING, UNSIGNED, type FieldKind, type LineScanner } from '../line-protocol/line-scanner.ts';
import { blockOf } from './block-stats.ts';
import { floorDiv } from '../namespaces.ts';
import { checkNewField, MAX_FIELDS_PER_MEASUREMENT, storedUnsigned, typeConflict } from '../line-protocol/write-request.ts';
import { insertSql, STAGED_ROWS, stagedEntry, writeRows, type RowGroup } from './shard-rows.ts';

interface Group {
  shard: ShardInfo;
  measurement: MeasurementInfo;
  /** value columns bound per row (the measurement's field count when the group began) */
  width: number;
  /** rows, flat: (series_id, t_ms, t_ns, c0 .. c<width - 1>) per row */
  cells: Cells;
  rows: number;
}

// Arrays of cells given back by finished groups: a request takes the array the one before it grew to instead of
// growing one from 4,096 cells again (an allocation and a copy per doubling). Writes that interleave (a
// request's rows are stored after its rights check) each take their own. Bounded: a few arrays of at most 2 MB.
const SPARE_ARRAYS = 4;
const MAX_SPARE_CELLS = 1 << 18;
const spare: Float64Array[] = [];
const EMPTY = new Float64Array(0);

function takeNumbers(): Float64Array {
  return spare.pop() ?? new Float64Array(4096);
}

function giveNumbers(numbers: Float64Array): void {
  if (numbers.length >= 4096 && numbers.length <= MAX_SPARE_CELLS && spare.length < SPARE_ARRAYS) spare.push(numbers);
}

/**
 * A request's rows as cells: numbers in a growable Float64Array (NaN is NULL: no field value is NaN), strings and
 * big integers beside it by cell index. Typed cells cost 8 bytes instead of a pointer and a boxed number, and die
 * with the request without being promoted by the garbage collector first.
 */
class Cells {
  numbers = takeNumbers();
  length = 0;
  private others: Map<number, string | bigint> | undefined;

  /** Makes room for `count` more cells. */
  reserve(count: number): void {
    if (this.length + count <= this.numbers.length) return;
    const grown = new Float64Array(Math.max(this.numbers.length * 2, this.length + count));
    grown.set(this.numbers.subarray(0, this.length));
    giveNumbers(this.numbers);
    this.numbers = grown;
  }

  /** Gives the cells' array back for a later request; the cells are empty after. */
  release(): void {
    giveNumbers(this.numbers);
    this.numbers = EMPTY;
    this.length = 0;
    this.others = undefined;
  }

  setOther(i: number, value: string | bigint): void {
    this.numbers[i] = Number.NaN;
    (this.others ??= new Map()).set(i, value);
  }

  /** The rows as shard-rows.ts writes or stages them. */
  rowGroup(table: string, width: number, kinds: string, rows: number): RowGroup {
    return { table, width, kinds, rows, numbers: this.numbers, others: this.others };
  }
}

export class ShardWriter {
  private readonly groups = new Map<string, Group>();
  private lastShard: ShardInfo | undefined;
  private lastGroup: Group | undefined;
  // the field layout of the previous line: its measurement, keys and their ordinals (in order: ordinal k at k)
  private readonly ordinals: number[] = [];
  private readonly layoutKeys: string[] = [];
  private layoutOf: MeasurementInfo | undefined;
  private inOrder = false;
  /** whether this request created or altered a shard table */
  schemaChanged = false;
  /** entries this request staged (telemetry_staged) instead of writing rows */
  staged = 0;

  /**
   * `stage`: the rows go to telemetry_staged, for the fold worker to write into their shard tables (staging.ts); else
   * they are written at once.
   */
  constructor(private readonly catalogue: Catalogue, private readonly ns: NamespaceInfo, private readonly now: number,
    private readonly stage = false) {}

  /** Buffers the current line of the scanner (fields parsed) as a row of `series`. */
  add(series: SeriesInfo, sc: LineScanner): void {
    const m = series.measurement;
    const n = sc.fieldCount;
    // Map the line's fields to columns first (a new field widens the measurement, and so the rows it needs). Lines
    // mostly repeat the previous line's keys (the scanner then hands out the very same strings): keep that mapping.
    const ordinals = this.ordinals;
    const keys = this.layoutKeys;
    let same = m === this.layoutOf && n === keys.length;
    for (let k = 0; same && k < n; k++) same = keys[k] === sc.fieldKeys[k];
    if (!same) {
      for (let k = 0; k < n; k++) {
        const field = m.fields.get(sc.fieldKeys[k]) ?? this.newField(m, sc, k);
        ordinals[k] = field.ordinal;
        keys[k] = sc.fieldKeys[k];
      }
      keys.length = n;
      this.layoutOf = m;
      this.inOrder = ordinals.every((o, k) => k >= n || o === k);
    }
    const list = m.list;
    for (let k = 0; k < n; k++) {
      const field = list[ordinals[k]];
      if (field.kind !== sc.fieldKinds[k]) throw typeConflict(sc.line, field.name, m.name, field.kind, sc.fieldKinds[k]);
    }
    const group = this.group(this.shardFor(sc.timeMs, list.length), m);
    const width = group.width;
    const cells = group.cells;
    cells.reserve(3 + width);
    const at = cells.length;
    const numbers = cells.numbers;
    numbers[at] = series.id;
    numbers[at + 1] = sc.timeMs;
    numbers[at + 2] = sc.subMsNs;
    if (this.inOrder && n === width) {
      // every field of the measurement, in column order: the common case
      for (let k = 0; k < n; k++) setCell(cells, at + 3 + k, sc, k);
    } else {
      numbers.fill(Number.NaN, at + 3, at + 3 + width);
      for (let k = 0; k < n; k++) setCell(cells, at + 3 + ordinals[k], sc, k);
    }
    cells.length += 3 + width;
    group.rows++;
  }

  /** Writes every buffered row. */
  flush(): void {
    for (const group of this.groups.values()) this.flushGroup(group);
  }

  private newField(m: MeasurementInfo, sc: LineScanner, k: number): FieldInfo {
    checkNewField(sc.line, sc.fieldKeys[k], m.name, m.list.length, MAX_FIELDS_PER_MEASUREMENT);
    return this.catalogue.addField(this.ns, m, sc.fieldKeys[k], sc.fieldKinds[k]);
  }

  private shardFor(timeMs: number, columns: number): ShardInfo {
    const last = this.lastShard;
    if (last !== undefined && timeMs >= last.startMs && timeMs < last.endMs && last.columns >= columns) return last;
    const window = floorDiv(timeMs, this.ns.profile.shardDurationMs);
    const existing = this.ns.shards.get(window);
    if (existing === undefined || existing.columns < columns) this.schemaChanged = true;
    return (this.lastShard = this.catalogue.ensureShard(this.ns, window, columns, this.now));
  }

  private group(shard: ShardInfo, m: MeasurementInfo): Group {
    const last = this.lastGroup;
    const width = m.list.length;
    if (last !== undefined && last.shard === shard && last.measurement === m && last.width === width) return last;
    const key = `${shard.window}/${m.uid}`;
    let group = this.groups.get(key);
    if (group === undefined || group.width !== width) {
      // One pending group per (table, measurement): rows for the same (series, time) are written in line order.
      if (group !== undefined) this.flushGroup(group);
      group = { shard, measurement: m, width, cells: new Cells(), rows: 0 };
      this.groups.set(key, group);
    }
    return (this.lastGroup = group);
  }

  private flushGroup(group: Group): void {
    const { rows, cells } = group;
    if (rows === 0) return;
    const perRow = 3 + group.width;
    const order = keyOrder(cells.numbers, rows, perRow);
    this.markStale(group, order);
    const kinds = group.measurement.list.slice(0, group.width).map((f) => (isIntegerKind(f.kind) ? 'i' : '-')).join('');
    const rowGroup = cells.rowGroup(group.shard.table, group.width, kinds, rows);
    if (this.stage) {
      // In entries of at most STAGED_ROWS rows: one entry is the most a fold slice holds the write lock for.
      const insert = this.catalogue.statement('staged', () => `INSERT INTO telemetry_staged (shard_table, width, kinds, rows, cells, others)
        VALUES (?, ?, ?, ?, ?, ?)`);
      for (let first = 0; first < rows; first += STAGED_ROWS) {
        const n = Math.min(STAGED_ROWS, rows - first);
        const entry = stagedEntry(rowGroup, order, first, n);
        insert.run(group.shard.table, group.width, kinds, n, entry.cells, entry.others);
        this.staged++;
      }
    } else {
      writeRows(rowGroup, (size) => this.catalogue.statement(`${group.shard.table}/${group.measurement.uid}/${group.width}/${size}`,
        () => insertSql(group.shard.table, group.width, kinds, size)), order);
    }
    cells.release();
    group.rows = 0;
  }

  /** Cached block statistics of the blocks these rows fall in are stale now (rows are in key order: one mark per run). */
  private markStale(group: Group, order: Uint32Array): void {
    const { shard } = group;
    const stats = this.catalogue.blockStats;
    if (!stats.caches(shard.table)) return;
    const numbers = group.cells.numbers;
    const perRow = 3 + group.width;
    let series = -1;
    let block = -1;
    for (let r = 0; r < order.length; r++) {
      const at = order[r] * perRow;
      const s = numbers[at];
      const b = blockOf(shard, numbers[at + 1]);
      if (s !== series || b !== block) {
        stats.markStale(shard, s, numbers[at + 1]);
        series = s;
        block = b;
      }
    }
  }

}

function isIntegerKind(kind: FieldKind): boolean {
  return kind === INTEGER || kind === UNSIGNED || kind === BOOLEAN;
}

/** Stores field k of the scanner's line in cell i, as better-sqlite3 will bind it. */
function setCell(cells: Cells, i: number, sc: LineScanner, k: number): void {
  switch (sc.fieldKinds[k]) {
    case FLOAT:
    case BOOLEAN:
      cells.numbers[i] = sc.fieldNumbers[k];
      return;
    case INTEGER: {
      const big = sc.fieldValues[k];
      if (big === undefined) cells.numbers[i] = sc.fieldNumbers[k];
      else cells.setOther(i, big as bigint);
      return;
    }
    case UNSIGNED: {
      const big = sc.fieldValues[k];
      if (big === undefined) { cells.numbers[i] = sc.fieldNumbers[k]; return; }
      cells.setOther(i, storedUnsigned(sc, k, big as bigint));
      return;
    }
    case STRING:
      cells.setOther(i, sc.fieldValues[k] as string);
  }
}

/**
 * Row indexes in (series_id, t_ms, t_ns) order; equal keys keep their line order (the last line must win). Lines come
 * time-major (every series at one time, then the next time): rows are bucketed by series in line order (a counting
 * sort), and a bucket is only sorted when its times go backwards: a comparison sort of every row would cost more.
 */
function keyOrder(numbers: Float64Array, rows: number, perRow: number): Uint32Array {
  const order = new Uint32Array(rows);
  const counts = new Map<number, number>();
  let sorted = true;
  for (let r = 0; r < rows; r++) {
    const id = numbers[r * perRow];
    counts.set(id, (counts.get(id) ?? 0) + 1);
    if (sorted && r > 0 && compareRows(numbers, (r - 1) * perRow, r * perRow) > 0) sorted = false;
  }
  if (sorted) {
    for (let r = 0; r < rows; r++) order[r] = r;
    return order;
  }
  // where each series' bucket starts, series by id
  const ids = [...counts.keys()].sort((a, b) => a - b);
  const next = new Map<number, number>();
  let at = 0;
  for (const id of ids) {
    next.set(id, at);
    at += counts.get(id)!;
  }
  for (let r = 0; r < rows; r++) {
    const id = numbers[r * perRow];
    const i = next.get(id)!;
    order[i] = r;
    next.set(id, i + 1);
  }
  let from = 0;
  for (const id of ids) {
    const to = from + counts.get(id)!;
    for (let i = from + 1; i < to; i++) {
      if (compareRows(numbers, order[i - 1] * perRow, order[i] * perRow) > 0) {
        order.subarray(from, to).sort((a, b) => compareRows(numbers, a * perRow, b * perRow) || a - b);
        break;
      }
    }
    from = to;
  }
  return order;
}

function compareRows(numbers: Float64Array, a: number, b: number): number {
  return numbers[a] - numbers[b] || numbers[a + 1] - numbers[b + 1] || numbers[a + 2] - numbers[b + 2];
}
