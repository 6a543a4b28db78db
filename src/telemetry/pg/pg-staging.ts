// Staged telemetry writes on PostgreSQL (the table: sql/pg/0013_telemetry_staged.sql). Inserting points into the
// shard tables' B-trees is the server's larger part of a write; so that the client does not wait for it, the request
// stores them as a few rows of arrays in telemetry_staged (pg-ingest.ts), committed before its answer as every write
// is, and a node folds them into their
// shard tables afterwards, in the background, each staged row by one statement that the server runs from the arrays
// it already holds: nothing goes over the wire twice.
//
// What stays true:
// - A read sees every acknowledged point: before its read snapshot a telemetry read folds every batch staged by then
//   (settleStaged), whichever node wrote it; a batch staged after that belongs to a write that was not acknowledged when
//   the read began, and is wholly in the snapshot or wholly out of it (a batch is folded whole, in one transaction).
// - A re-written (series, time) ends with the later request's fields: the batches of a namespace are folded in batch
//   order (the writing transaction's id), under the namespace's fold lock (a transaction-level advisory lock), so two
//   nodes never fold its batches side by side or out of order.
// - Nothing is lost: folding deletes a staged row in the statement that writes its points; a crash leaves it staged,
//   and the next read of any node, `gridkeeper copy` or the next write to its namespace folds it. `telemetry prune`
//   deletes the staged rows of the shard tables it drops, in the same transaction.
// - Writes that outrun the folding wait: when this node counts MAX_BACKLOG batches not folded yet, a write first waits
//   for the folder, so what a read may have to fold, like the space the staged rows take, stays bounded.
import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../../db/open.ts';
import type { Logger } from '../../lib/logger.ts';
import { GUARD_AGAINST_DROPS } from './pg-catalogue.ts';
import { GRACE_DIVISOR, type SealStep } from '../blocks/rows.ts';
import { noteSealed } from '../sqlite/seal-progress.ts';
import type { DueWindow } from './pg-seal.ts';
import { markSealing, sealPartsStraight, takeStaged, type StraightPart } from './pg-seal-staged.ts';

/** pg_advisory_xact_lock(FOLD_LOCK, namespace id): folding a namespace's staged batches ('gtfl' in ASCII) */
export const FOLD_LOCK = 0x6774_666c;
/** batches per fold transaction */
const SLICE_BATCHES = 8;
/** batches this node counts as staged and not folded beyond which a write first waits for the folder */
export const MAX_BACKLOG = 32;
/** after a failed fold (the server gone, a table dropped meanwhile), the folder tries again this much later */
const RETRY_MS = 500;
/** failed folds in a row after which the folder leaves a namespace to the next read or write */
const MAX_FAILURES = 5;
/**
 * Batches a node folds between two VACUUMs of telemetry_staged: every staged row is deleted soon after it was written,
 * and a server whose autovacuum is off (or slow to come by) would keep every dead row and its arrays. Small and cheap
 * while the table holds only what waits.
 */
export const VACUUM_EVERY = 500;
/**
 * Once everything waiting is folded the table is empty, and a VACUUM then gives its pages (and the TOAST pages the
 * staged arrays took) back to the file system instead of keeping them for the next writes. It runs at most this often.
 */
const IDLE_VACUUM_MS = 5000;
/**
 * Bytes of blocks a node writes straight from staged points between two VACUUMs of telemetry_blocks: a block rewritten
 * leaves its earlier version (out of line, in TOAST) dead, and space that no VACUUM has freed is never written again.
 */
const VACUUM_BLOCK_BYTES = 4 << 20;

let log: Logger | undefined;

/** Where the background folder reports a failed fold (the service's log). */
export function setFoldLog(logger: Logger): void {
  log = logger;
}

interface StagedPart {
  batch: string;
  part: number;
  table_name: string;
  columns: string[];
  points: number;
}

/** A staged row with its window's shard row, as a fold lists them (BIGINT columns arrive as numbers: db/postgres.ts). */
interface StagedListing extends StagedPart {
  namespace_id: number;
  shard_window: number;
  start_ms: number;
  end_ms: number;
  width: number;
  sealed: boolean;
}

/** A staged row as a fold finds it: its window, and whether that is marked sealed (telemetry_sealed). */
interface StagedRow extends StagedPart {
  window: DueWindow;
  sealed: boolean;
}

/**
 * Points one fold takes straight into blocks at most, as whole batches (pg-seal-staged.ts): half a day of 20 devices
 * every 10 s, as on SQLite.
 */
const STRAIGHT_POINTS = 100_000;
/**
 * While the writes are still in a due window, its staged batches wait for more (so that a window loaded in time order
 * has its blocks rewritten once per STRAIGHT_POINTS rather than once per batch), this long at most...
 */
const GATHER_MS = 1000;
/** ...and only while the writes go on: a wait this long with no batch staged means they have paused (a load ended) */
const PAUSE_MS = 250;

/** The service's clock, by database (root handle), where it seals on a timer (seal.ts startSealing). */
const foldClocks = new WeakMap<Db, () => number>();
/** What seals the windows that straight folds emptied, by database (root handle): the service's sealing pass. */
const emptiedSealers = new WeakMap<Db, () => void>();

/**
 * Staged points of windows due for sealing at `now()` go straight into their blocks (pg-seal-staged.ts) from now on:
 * where sealing runs on a timer anyway, what it would seal next is not folded into a shard table first. `sealEmptied`
 * is called when the folder has nothing left to fold after some of it went straight into blocks: the windows so
 * emptied are sealed (their empty tables dropped) then, as on SQLite, rather than by the next pass on the timer.
 */
export function sealStagedWhenDuePg(db: Db, now: () => number, sealEmptied?: () => void): void {
  foldClocks.set(db, now);
  if (sealEmptied === undefined) emptiedSealers.delete(db);
  else emptiedSealers.set(db, sealEmptied);
}

/** A staged row's points into its shard table, by the server from the row's arrays, in the statement that deletes it. */
async function foldPart(tx: Db, p: StagedPart): Promise<void> {
  takeStaged(tx, p.batch, p.part); // read by the server from the row: what was sent for it need not be kept
  if (!/^\d+$/.test(p.batch) || !Number.isInteger(p.part)) throw new Error(`telemetry fold: unexpected staged key ${p.batch}/${p.part}`);
  const counts = { f: 0, i: 0, s: 0 };
  const values = p.columns.map((c) => {
    const cls = c.slice(-1) as 'f' | 'i' | 's';
    if (!/^c\d+[fis]$/.test(c)) throw new Error(`telemetry fold: unexpected column ${c}`);
    const k = ++counts[cls];
    return `unnest(${cls}[${k}:${k}])`;
  });
  const names = ['series_id', 't_ms', 't_ns', ...p.columns].join(', ');
  // Deleting the staged row gives the blocks of its points new versions (a trigger: sql/pg/0014_telemetry_block_stats.sql),
  // in this statement: the block statistics stored for them no longer hold.
  const source = `WITH d AS (DELETE FROM telemetry_staged WHERE batch = ${p.batch} AND part = ${p.part} RETURNING series_ids, t_ms, t_ns, f, i, s)
    INSERT INTO "${p.table_name.replace(/"/g, '""')}" AS t (${names})
    SELECT ${['unnest(series_ids)', 'unnest(t_ms)', 'unnest(t_ns)', ...values].join(', ')} FROM d`;
  // A plain INSERT first (half the time of an upsert); only rows that re-write stored keys run as an upsert, the
  // failed INSERT undone by its savepoint. No parameters: the savepoint goes in the same round trip.
  try {
    await tx.tx((inner) => inner.script(source));
  } catch (err) {
    if ((err as { code?: unknown }).code !== '23505') throw err;
    const updates = p.columns.length === 0 ? 'NOTHING' : `UPDATE SET ${p.columns.map((c) => `${c} = coalesce(EXCLUDED.${c}, t.${c})`).join(', ')}`;
    await tx.script(`${source} ON CONFLICT (series_id, t_ms, t_ns) DO ${updates}`);
  }
}

/** What one fold transaction did. */
interface Slice {
  /** batches folded (into shard tables or straight into blocks) */
  batches: number;
  /** points folded into each shard table */
  points: Map<string, number>;
  /** what went straight into blocks, by window */
  sealed: SealStep[];
}

interface SliceOptions {
  /** the last batch to fold (a read's settle): none after it */
  through?: number;
  /** the staged batches may wait for more while they all go straight into the window the writes are in */
  gather?: boolean;
  /** windows to mark sealed first may be asked for (else their points are folded into their tables) */
  mark?: boolean;
}

/**
 * Folds the oldest staged batches of a namespace (at most SLICE_BATCHES; those up to `through` when given) in one
 * transaction, each staged row into its shard table or, where its window is due and its table empty, straight into
 * blocks (more batches then, up to STRAIGHT_POINTS). Returns what it did; 'gather' when it did nothing because the
 * batches wait for more (options.gather); the windows to mark sealed when it did nothing because straight sealing
 * needs them marked first (options.mark).
 */
async function foldSlice(db: Db, namespaceId: number, options: SliceOptions = {}): Promise<Slice | 'gather' | { mark: DueWindow[] }> {
  const now = foldClocks.get(db)?.();
  return db.tx(async (tx) => {
    // a fold acknowledges nothing: lost in a crash, its batches are simply still staged
    await tx.script('SET LOCAL synchronous_commit = off');
    await tx.get(sql`SELECT pg_advisory_xact_lock(${FOLD_LOCK}::integer, ${namespaceId}::integer)`);
    const upTo = options.through === undefined ? sql`` : sql` AND st.batch <= ${options.through}`;
    const rows = await tx.all(sql<StagedListing>`SELECT st.batch::text AS batch, st.part, st.table_name, st.columns,
        st.points, sh.namespace_id, sh.shard_window, sh.start_ms, sh.end_ms, sh.columns AS width,
        EXISTS (SELECT 1 FROM telemetry_sealed w WHERE w.namespace_id = sh.namespace_id AND w.shard_window = sh.shard_window) AS sealed
      FROM telemetry_staged st JOIN telemetry_shards sh ON sh.table_name = st.table_name
      WHERE st.namespace_id = ${namespaceId}${upTo}
      ORDER BY st.batch, st.part`);
    const batches: StagedRow[][] = [];
    for (const r of rows) {
      const part: StagedRow = {
        batch: r.batch, part: r.part, table_name: r.table_name, columns: r.columns, points: r.points, sealed: r.sealed,
        window: { namespace_id: r.namespace_id, shard_window: r.shard_window, table_name: r.table_name, start_ms: r.start_ms, end_ms: r.end_ms, columns: r.width },
      };
      if (batches.at(-1)?.[0].batch !== part.batch) batches.push([]);
      batches.at(-1)!.push(part);
    }
    // a staged row goes straight into blocks where its window is due and its table empty
    const straightTables = new Map<string, boolean>();
    const straight = async (p: StagedRow): Promise<boolean> => {
      let known = straightTables.get(p.table_name);
      if (known === undefined) {
        const w = p.window;
        known = now !== undefined && w.end_ms + Math.floor((w.end_ms - w.start_ms) / GRACE_DIVISOR) <= now
          && await tx.get(sql`SELECT 1 AS one FROM ${sql.id(p.table_name)} LIMIT 1`) === undefined;
        straightTables.set(p.table_name, known);
      }
      return known;
    };
    const taken: StagedRow[] = [];
    let takenBatches = 0;
    let straightPoints = 0;
    let allStraight = true;
    for (const batch of batches) {
      let each = true;
      for (const p of batch) if (!await straight(p)) each = false;
      const points = batch.reduce((n, p) => n + p.points, 0);
      if (takenBatches >= SLICE_BATCHES && !(allStraight && each && straightPoints + points <= STRAIGHT_POINTS)) break;
      taken.push(...batch);
      takenBatches++;
      allStraight &&= each;
      if (each) straightPoints += points;
    }
    const toMark = new Map<string, DueWindow>();
    for (const p of taken) if (!p.sealed && await straight(p)) toMark.set(p.table_name, p.window);
    if (toMark.size > 0) {
      if (options.mark === true) return { mark: [...toMark.values()] };
      // not marked: folded into their tables
      for (const table of toMark.keys()) straightTables.set(table, false);
      allStraight = false;
    }
    // every batch staged goes straight into one window, and the writes are still in it: wait for more (its last
    // batches go at once, when a later window has batches staged too)
    if (options.gather === true && allStraight && takenBatches === batches.length && straightPoints < STRAIGHT_POINTS
      && taken.length > 0 && taken.every((p) => p.table_name === taken[0].table_name)) {
      const later = await tx.get(sql`SELECT 1 AS one FROM telemetry_staged st JOIN telemetry_shards sh ON sh.table_name = st.table_name
        WHERE st.namespace_id = ${namespaceId} AND sh.start_ms > ${taken[0].window.start_ms} LIMIT 1`);
      if (later === undefined) return 'gather';
    }
    const points = new Map<string, number>();
    const direct: StraightPart[] = [];
    for (const p of taken) {
      if (straightTables.get(p.table_name) === true) {
        direct.push({ batch: p.batch, part: p.part, columns: p.columns, points: p.points, window: p.window });
        continue;
      }
      await foldPart(tx, p);
      points.set(p.table_name, (points.get(p.table_name) ?? 0) + p.points);
    }
    // in pieces of STRAIGHT_POINTS at most (a batch of one large request may hold many more): each piece's points
    // merged into the blocks the piece before wrote, in this transaction
    const sealed: SealStep[] = [];
    for (let from = 0; from < direct.length;) {
      let to = from + 1;
      for (let n = direct[from].points; to < direct.length && n + direct[to].points <= STRAIGHT_POINTS; to++) n += direct[to].points;
      sealed.push(...await sealPartsStraight(tx, namespaceId, direct.slice(from, to)));
      from = to;
    }
    return { batches: takenBatches, points, sealed };
  });
}

/**
 * foldSlice, with the windows it asks for marked sealed first (in a transaction of their own, which takes the
 * catalogue's row before any other lock, as every catalogue change does).
 */
async function foldSliceMarking(db: Db, namespaceId: number, options: Omit<SliceOptions, 'mark'>): Promise<Slice | 'gather'> {
  const slice = await foldSlice(db, namespaceId, { ...options, mark: true });
  if (slice === 'gather' || !('mark' in slice)) return slice;
  await markSealing(db, slice.mark);
  return foldSlice(db, namespaceId, options) as Promise<Slice | 'gather'>;
}

/** Folds every batch of a namespace staged up to `through`. */
async function foldNamespace(db: Db, namespaceId: number, through: number): Promise<void> {
  for (let dropped = 0; ;) {
    let slice;
    try {
      slice = await foldSliceMarking(db, namespaceId, { through }) as Slice;
    } catch (err) {
      // a shard table dropped by `telemetry prune` while the slice waited for it: its staged rows went with it
      if ((err as { code?: unknown }).code === '42P01' && ++dropped < 3) continue;
      throw err;
    }
    folderOf(db).folded(slice, namespaceId);
    if (slice.batches < SLICE_BATCHES) return;
  }
}

/**
 * Every batch staged by now, of every namespace, in its shard tables (before a read snapshot of telemetry begins, and
 * before `gridkeeper copy` reads the shard tables). One statement when nothing is staged.
 */
export async function settleStaged(db: Db): Promise<void> {
  if (db.inTransaction) return; // a fold cannot commit inside a caller's transaction (its snapshot may be taken already)
  await foldStaged(db, (await snapshotState(db)).staged);
}

/** A namespace with staged batches, and the last of them. */
export interface StagedThrough { namespace_id: number; through: number }

/** What a read snapshot's first statement sees: the staged batches and the catalogue's version. */
export interface SnapshotState {
  /**
   * the namespaces with staged batches (none: every batch staged before the statement's snapshot is in its shard
   * table, as a fold deletes its staged rows in the transaction that writes their points)
   */
  staged: StagedThrough[];
  /** telemetry_catalogue_version (sql/pg/0016_telemetry_catalogue_version.sql); undefined without its row */
  catalogue: number | undefined;
}

/** The catalogue's version and the staged batches ([namespace_id, last batch] pairs as JSON, null: none), as one row. */
const STATE_SQL = `SELECT (SELECT version FROM telemetry_catalogue_version) AS catalogue,
    (SELECT json_agg(json_build_array(namespace_id, through) ORDER BY namespace_id)
      FROM (SELECT namespace_id, max(batch) AS through FROM telemetry_staged GROUP BY namespace_id) AS s) AS staged`;

interface StateRow { catalogue: number | null; staged: Array<[number, number]> | null }

function stateOf(row: StateRow | undefined): SnapshotState {
  return {
    staged: (row?.staged ?? []).map(([namespace_id, through]) => ({ namespace_id, through })),
    catalogue: row?.catalogue ?? undefined,
  };
}

/**
 * The staged batches and the catalogue's version, in one statement (one row even when nothing is staged). No
 * parameters: as a read snapshot's first statement it goes with the snapshot's BEGIN (db/postgres.ts), and the
 * snapshot is the one it saw.
 */
export async function snapshotState(db: Db): Promise<SnapshotState> {
  return stateOf(await db.get(sql.raw<StateRow>(STATE_SQL)));
}

/**
 * A read snapshot's first round trip: its guard against dropped shard tables (pg-catalogue.ts guardAgainstDrops) and
 * snapshotState, as one parameterless text (the LOCK runs first, before the SELECT takes the snapshot), which goes
 * with the snapshot's BEGIN.
 */
export async function guardedSnapshotState(tx: Db): Promise<SnapshotState> {
  return stateOf(await tx.get(sql.raw<StateRow>(`${GUARD_AGAINST_DROPS}; ${STATE_SQL}`)));
}

/**
 * A statement that reads what `inner` reads and the snapshot state (snapshotState) in the same snapshot: one row of
 * the state joined with inner's rows, numbered in inner's order (gk_n; null on the one row when inner has none).
 * unwrapStateRows takes the two apart. Inner's parameters stay as they are: the wrapper adds none. Its `*`s are over
 * inner's columns only, so the wrapped text may be prepared whenever inner's may (db/prepared.ts).
 */
export function withSnapshotState(inner: CompiledQuery): CompiledQuery {
  return CompiledQuery.raw(`SELECT gk_state.catalogue AS gk_catalogue, gk_state.staged AS gk_staged, gk_q.*
    FROM (${STATE_SQL}) AS gk_state
    LEFT JOIN (SELECT row_number() OVER () AS gk_n, gk_i.* FROM (${inner.sql}) AS gk_i) AS gk_q ON true
    ORDER BY gk_q.gk_n`, [...inner.parameters]);
}

/** The three columns withSnapshotState puts before inner's */
const STATE_COLUMNS = 3;

/** The state and inner's rows of a withSnapshotState statement's rows (arrays when `arrays`, else objects). */
export function unwrapStateRows(rows: readonly unknown[], arrays: boolean): { state: SnapshotState; rows: unknown[] } {
  if (arrays) {
    const list = rows as unknown[][];
    return {
      state: stateOf(list[0] === undefined ? undefined : { catalogue: list[0][0] as number | null, staged: list[0][1] as StateRow['staged'] }),
      rows: list.filter((r) => r[2] !== null).map((r) => r.slice(STATE_COLUMNS)),
    };
  }
  const list = rows as Array<Record<string, unknown>>;
  const first = list[0] as { gk_catalogue: number | null; gk_staged: StateRow['staged'] } | undefined;
  return {
    state: stateOf(first === undefined ? undefined : { catalogue: first.gk_catalogue, staged: first.gk_staged }),
    rows: list.filter((r) => r.gk_n !== null).map(({ gk_catalogue: _c, gk_staged: _s, gk_n: _n, ...row }) => row),
  };
}

/** Folds the batches of `staged` (snapshotState), each namespace up to its last batch there. */
export async function foldStaged(db: Db, staged: readonly StagedThrough[]): Promise<void> {
  for (const s of staged) await foldNamespace(db, s.namespace_id, s.through);
}

/** The rows a node folded into each shard table, for the writer's statistics (pg-ingest.ts has them analyzed). */
export type FoldListener = (points: ReadonlyMap<string, number>) => void;

/** One process's background folding of the batches its writes staged, per database. */
class Folder {
  /** namespaces with batches to fold, and the batches this node counts there */
  private readonly pending = new Map<number, number>();
  /** namespaces where a batch was staged since the folder last began a slice there */
  private readonly fresh = new Set<number>();
  private running: Promise<void> | undefined;
  private waiters: Array<() => void> = [];
  private closed = false;
  private sinceVacuum = 0;
  /** bytes of blocks written straight since the last VACUUM (then telemetry_blocks is vacuumed too) */
  private blockBytes = 0;
  private vacuuming = false;
  private lastVacuum = 0;
  private idleVacuum: NodeJS.Timeout | undefined;
  /** namespaces whose staged batches wait for more (foldSlice: 'gather'), and since when */
  private readonly gathering = new Map<number, number>();
  /** wakes the loop while every namespace waits for more */
  private nudge: (() => void) | undefined;
  /** points went straight into blocks since the folder last had nothing to fold */
  private sealedStraight = false;
  /** no batch was staged while the folder last waited (PAUSE_MS): what gathers is folded now */
  private paused = false;
  listener: FoldListener | undefined;

  constructor(private readonly db: Db) {}

  /** The folder is at work (or waits for more batches of a due window). */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Batches this node staged (or found staged) and has not seen folded yet. */
  get backlog(): number {
    let n = 0;
    for (const b of this.pending.values()) n += b;
    return n;
  }

  /** A batch was staged in this namespace and committed: fold it soon. */
  staged(namespaceId: number): void {
    this.pending.set(namespaceId, (this.pending.get(namespaceId) ?? 0) + 1);
    this.fresh.add(namespaceId);
    this.paused = false;
    this.nudge?.();
    this.running ??= this.loop().finally(() => { this.running = undefined; });
  }

  /** Resolves once the backlog is below MAX_BACKLOG (at once when it is). */
  async room(): Promise<void> {
    while (this.backlog >= MAX_BACKLOG && this.running !== undefined) await new Promise<void>((r) => this.waiters.push(r));
  }

  /** Batches of a namespace folded by this process (a read's settle included): its count goes down. */
  folded({ points, batches, sealed }: Slice, namespaceId: number): void {
    const counted = this.pending.get(namespaceId);
    if (counted !== undefined) this.pending.set(namespaceId, Math.max(0, counted - batches));
    if (points.size > 0) this.listener?.(points);
    for (const step of sealed) {
      noteSealed(step);
      this.blockBytes += step.bytes;
      this.sealedStraight = true;
    }
    this.sinceVacuum += batches;
    if (this.sinceVacuum >= VACUUM_EVERY || this.blockBytes >= VACUUM_BLOCK_BYTES) this.vacuum();
    this.wake();
  }

  /**
   * VACUUM of telemetry_staged (and of telemetry_blocks after blocks were written straight) in the background, outside
   * any transaction (VACUUM runs in none), one at a time; a failure only skips it.
   */
  private vacuum(): void {
    if (this.vacuuming) return;
    const tables = this.blockBytes > 0 ? 'telemetry_staged, telemetry_blocks' : 'telemetry_staged';
    this.sinceVacuum = 0;
    this.blockBytes = 0;
    this.lastVacuum = Date.now();
    this.vacuuming = true;
    void this.db.script(`VACUUM ${tables}`).catch((err) => {
      if (isClosed(err)) this.closed = true;
      else log?.warn(`VACUUM of ${tables} failed`, { error: String(err) });
    }).finally(() => { this.vacuuming = false; });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private async loop(): Promise<void> {
    const failures = new Map<number, number>();
    while (!this.closed && this.pending.size > 0) {
      let waiting = true;
      for (const namespaceId of [...this.pending.keys()]) {
        try {
          this.fresh.delete(namespaceId);
          const since = this.gathering.get(namespaceId);
          const gather = !this.paused && this.backlog < MAX_BACKLOG / 2 && (since === undefined || Date.now() - since < GATHER_MS);
          const slice = await foldSliceMarking(this.db, namespaceId, { gather });
          failures.delete(namespaceId);
          if (slice === 'gather') {
            if (since === undefined) this.gathering.set(namespaceId, Date.now());
            continue;
          }
          waiting = false;
          this.gathering.delete(namespaceId);
          this.folded(slice, namespaceId);
          // everything of the namespace folded (by this node or another), unless a batch was staged since the slice began
          if (slice.batches < SLICE_BATCHES && !this.fresh.has(namespaceId)) this.pending.delete(namespaceId);
        } catch (err) {
          waiting = false;
          if (isClosed(err)) {
            this.closed = true;
            break;
          }
          const n = (failures.get(namespaceId) ?? 0) + 1;
          failures.set(namespaceId, n);
          log?.warn('telemetry fold failed; it is tried again', { namespaceId, error: String((err as Error)?.message ?? err) });
          if (n >= MAX_FAILURES) {
            // the next read folds what is left (and reports the error), the next write here starts the folder again
            this.pending.delete(namespaceId);
            failures.delete(namespaceId);
          }
          await new Promise((r) => setTimeout(r, RETRY_MS).unref());
        }
      }
      // every namespace waits for more: until the next batch is staged, or a pause in the writes
      if (waiting && !this.closed && this.pending.size > 0) {
        const staged = await new Promise<boolean>((resolve) => {
          this.nudge = () => resolve(true);
          setTimeout(() => resolve(false), PAUSE_MS).unref();
        });
        this.nudge = undefined;
        if (!staged) this.paused = true;
      }
    }
    if (!this.closed) {
      this.vacuumWhenIdle();
      if (this.sealedStraight) emptiedSealers.get(this.db)?.();
    }
    this.sealedStraight = false;
    this.wake();
  }

  /** A VACUUM once nothing waits (IDLE_VACUUM_MS after the last at the soonest), if batches were folded since the last. */
  private vacuumWhenIdle(): void {
    if ((this.sinceVacuum === 0 && this.blockBytes === 0) || this.idleVacuum !== undefined) return;
    this.idleVacuum = setTimeout(() => {
      this.idleVacuum = undefined;
      if (!this.closed && this.running === undefined && (this.sinceVacuum > 0 || this.blockBytes > 0)) this.vacuum();
    }, Math.max(0, this.lastVacuum + IDLE_VACUUM_MS - Date.now())).unref();
  }
}

function isClosed(err: unknown): boolean {
  return /pool after calling end|Cannot use a pool/i.test(String((err as Error)?.message ?? err));
}

const folders = new WeakMap<Db, Folder>();

/** The folder of a database (root handle). */
export function folderOf(db: Db): Folder {
  let f = folders.get(db);
  if (f === undefined) folders.set(db, f = new Folder(db));
  return f;
}

/** Whether this process's folder is at work on `db`: what is staged is folded without anyone asking. */
export function folding(db: Db): boolean {
  return folders.get(db)?.busy ?? false;
}

/** Batches staged by this process and not folded yet, as far as it counted them (for /metrics). */
export function stagedBatches(db: Db): number {
  return folders.get(db)?.backlog ?? 0;
}
