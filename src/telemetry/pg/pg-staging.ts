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

/** A staged row's points into its shard table, by the server from the row's arrays, in the statement that deletes it. */
async function foldPart(tx: Db, p: StagedPart): Promise<void> {
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

/**
 * Folds the oldest staged batches of a namespace (at most SLICE_BATCHES; those up to `through` when given) in one
 * transaction; returns the batches folded and the points each shard table received.
 */
async function foldSlice(db: Db, namespaceId: number, through?: number): Promise<{ batches: number; points: Map<string, number> }> {
  return db.tx(async (tx) => {
    // a fold acknowledges nothing: lost in a crash, its batches are simply still staged
    await tx.script('SET LOCAL synchronous_commit = off');
    await tx.get(sql`SELECT pg_advisory_xact_lock(${FOLD_LOCK}::integer, ${namespaceId}::integer)`);
    const upTo = through === undefined ? sql`` : sql` AND batch <= ${through}`;
    const parts = await tx.all(sql<StagedPart>`SELECT batch::text AS batch, part, table_name, columns, points FROM telemetry_staged
      WHERE namespace_id = ${namespaceId} AND batch IN (SELECT DISTINCT batch FROM telemetry_staged WHERE namespace_id = ${namespaceId}${upTo}
        ORDER BY batch LIMIT ${SLICE_BATCHES})
      ORDER BY batch, part`);
    const points = new Map<string, number>();
    for (const p of parts) {
      await foldPart(tx, p);
      points.set(p.table_name, (points.get(p.table_name) ?? 0) + p.points);
    }
    return { batches: new Set(parts.map((p) => p.batch)).size, points };
  });
}

/** Folds every batch of a namespace staged up to `through`. */
async function foldNamespace(db: Db, namespaceId: number, through: number): Promise<void> {
  for (let dropped = 0; ;) {
    let slice;
    try {
      slice = await foldSlice(db, namespaceId, through);
    } catch (err) {
      // a shard table dropped by `telemetry prune` while the slice waited for it: its staged rows went with it
      if ((err as { code?: unknown }).code === '42P01' && ++dropped < 3) continue;
      throw err;
    }
    folderOf(db).folded(slice.points, slice.batches, namespaceId);
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
  private lastVacuum = 0;
  private idleVacuum: NodeJS.Timeout | undefined;
  listener: FoldListener | undefined;

  constructor(private readonly db: Db) {}

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
    this.running ??= this.loop().finally(() => { this.running = undefined; });
  }

  /** Resolves once the backlog is below MAX_BACKLOG (at once when it is). */
  async room(): Promise<void> {
    while (this.backlog >= MAX_BACKLOG && this.running !== undefined) await new Promise<void>((r) => this.waiters.push(r));
  }

  /** Batches of a namespace folded by this process (a read's settle included): its count goes down. */
  folded(points: Map<string, number>, batches: number, namespaceId: number): void {
    const counted = this.pending.get(namespaceId);
    if (counted !== undefined) this.pending.set(namespaceId, Math.max(0, counted - batches));
    if (points.size > 0) this.listener?.(points);
    this.sinceVacuum += batches;
    if (this.sinceVacuum >= VACUUM_EVERY) this.vacuum();
    this.wake();
  }

  /** VACUUM of telemetry_staged in the background, outside any transaction (VACUUM runs in none); a failure only skips it. */
  private vacuum(): void {
    this.sinceVacuum = 0;
    this.lastVacuum = Date.now();
    void this.db.script('VACUUM telemetry_staged').catch((err) => {
      if (isClosed(err)) this.closed = true;
      else log?.warn('VACUUM of telemetry_staged failed', { error: String(err) });
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private async loop(): Promise<void> {
    const failures = new Map<number, number>();
    while (!this.closed && this.pending.size > 0) {
      for (const namespaceId of [...this.pending.keys()]) {
        try {
          this.fresh.delete(namespaceId);
          const slice = await foldSlice(this.db, namespaceId);
          failures.delete(namespaceId);
          this.folded(slice.points, slice.batches, namespaceId);
          // everything of the namespace folded (by this node or another), unless a batch was staged since the slice began
          if (slice.batches < SLICE_BATCHES && !this.fresh.has(namespaceId)) this.pending.delete(namespaceId);
        } catch (err) {
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
    }
    if (!this.closed) this.vacuumWhenIdle();
    this.wake();
  }

  /** A VACUUM once nothing waits (IDLE_VACUUM_MS after the last at the soonest), if batches were folded since the last. */
  private vacuumWhenIdle(): void {
    if (this.sinceVacuum === 0 || this.idleVacuum !== undefined) return;
    this.idleVacuum = setTimeout(() => {
      this.idleVacuum = undefined;
      if (!this.closed && this.running === undefined && this.sinceVacuum > 0) this.vacuum();
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

/** Batches staged by this process and not folded yet, as far as it counted them (for /metrics). */
export function stagedBatches(db: Db): number {
  return folders.get(db)?.backlog ?? 0;
}
