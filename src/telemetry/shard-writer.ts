// Buffers the points of one write request per (shard table, measurement) and stores them at the end of the request,
// sorted by key, with multi-row upserts. Runs inside the request's transaction, synchronously, in its exclusive
// sections (add() while the body is scanned, flush() after the rights check). Both choices were measured
// (bench/telemetry/layout.mjs and the numbers in bench/telemetry/README.md): one statement call per 64 rows instead of
// one per row removes most of the per-call overhead, and inserting in key order (series by series instead of the
// time-major order devices send) touches each B-tree leaf once instead of once per timestamp — about 1.8x faster.
//
// Row layout (decided by bench/telemetry/layout.mjs): one row per point, (series_id, t_ms, t_ns, c0, c1, ...) in a
// WITHOUT ROWID table keyed (series_id, t_ms, t_ns), c<n> = field number n of the series' measurement. A field a line
// does not carry is bound as NULL and `coalesce` keeps the stored value: re-writing a (series, time) overwrites
// exactly the given fields (InfluxDB semantics); within a request the sort is stable, so the last line wins.
// Integers and booleans are bound as numbers (or bigint beyond 2^53) and CAST to INTEGER in SQL, so they are stored
// as compact exact integers.
import type { Statement } from 'better-sqlite3';
import type { Catalogue, FieldInfo, MeasurementInfo, NamespaceInfo, SeriesInfo, ShardInfo } from './catalogue.ts';
import { MAX_FIELDS_PER_MEASUREMENT } from './catalogue.ts';
import { BOOLEAN, FLOAT, INTEGER, STRING, UNSIGNED, type FieldKind, type LineScanner } from './line-scanner.ts';
import { blockOf } from './block-stats.ts';
import { floorDiv } from './namespaces.ts';
import { checkNewField, storedUnsigned, typeConflict } from './write-request.ts';

/** Most rows per statement (a power of two); also bounded by SQLite's 32766 parameters. */
const MAX_ROWS = 64;
const MAX_PARAMS = 32766;

interface Group {
  shard: ShardInfo;
  measurement: MeasurementInfo;
  /** value columns bound per row (the measurement's field count when the group began) */
  width: number;
  /** rows, flat: (series_id, t_ms, t_ns, c0 .. c<width - 1>) per row */
  cells: Cells;
  rows: number;
}

// Arrays of cells given back by finished groups: a request of 5,000 lines takes the array the one before it grew to
// instead of growing one from 4,096 cells again (five allocations and copies, ~0.4 ms). Writes that interleave (a
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

  /** The cell as better-sqlite3 binds it. */
  value(i: number): number | string | bigint | null {
    const v = this.numbers[i];
    return Number.isNaN(v) ? this.others?.get(i) ?? null : v;
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

  constructor(private readonly catalogue: Catalogue, private readonly ns: NamespaceInfo, private readonly now: number) {}

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
    let chunk = 1;
    while (chunk * 2 <= MAX_ROWS && chunk * 2 * perRow <= MAX_PARAMS) chunk *= 2;
    // Full chunks, then the tail in power-of-two statements: at most log2(chunk) + 1 statement shapes per group.
    let done = 0;
    for (let size = chunk; size >= 1; size >>= 1) {
      if (rows - done < size) continue;
      const args = new Array(size * perRow);
      const stmt = this.statement(group, size);
      while (rows - done >= size) {
        for (let r = 0; r < size; r++) {
          const from = order[done + r] * perRow;
          const to = r * perRow;
          for (let c = 0; c < perRow; c++) args[to + c] = cells.value(from + c);
        }
        stmt.run(args);
        done += size;
      }
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

  private statement(group: Group, rows: number): Statement {
    return this.catalogue.statement(`${group.shard.table}/${group.measurement.uid}/${group.width}/${rows}`, () => insertSql(group, rows));
  }
}

function insertSql(group: Group, rows: number): string {
  const { width, measurement } = group;
  const cols = Array.from({ length: width }, (_, i) => `c${i}`);
  const row = `(?, ?, ?${measurement.list.slice(0, width).map((f) => (isIntegerKind(f.kind) ? ', CAST(? AS INTEGER)' : ', ?')).join('')})`;
  const updates = cols.map((c) => `${c} = coalesce(excluded.${c}, ${c})`).join(', ');
  return `INSERT INTO "${group.shard.table}" (series_id, t_ms, t_ns${cols.map((c) => `, ${c}`).join('')}) VALUES ${Array(rows).fill(row).join(', ')}
    ON CONFLICT (series_id, t_ms, t_ns) DO UPDATE SET ${updates}`;
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

/** Row indexes in (series_id, t_ms, t_ns) order; equal keys keep their line order (the last line must win). */
function keyOrder(numbers: Float64Array, rows: number, perRow: number): Uint32Array {
  const order = new Uint32Array(rows);
  let sorted = true;
  for (let r = 0; r < rows; r++) {
    order[r] = r;
    if (sorted && r > 0 && compareRows(numbers, (r - 1) * perRow, r * perRow) > 0) sorted = false;
  }
  if (sorted) return order;
  return order.sort((a, b) => compareRows(numbers, a * perRow, b * perRow) || a - b);
}

function compareRows(numbers: Float64Array, a: number, b: number): number {
  return numbers[a] - numbers[b] || numbers[a + 1] - numbers[b + 1] || numbers[a + 2] - numbers[b + 2];
}
