// Runs an InfluxQL query: every statement planned first (a planning error is that statement's answer), the whole
// request charged once through the telemetry cost limiter (the SELECTs' cost queries), then every statement executed
// inside one read transaction — one consistent snapshot, as the JSON queries have.
//
// The statements run synchronously over the backend's reads (telemetry/reads.ts), while the read rights of the series' nodeIds come
// from the shared rules, which are asynchronous: they are checked between attempts, never inside one. An attempt runs
// every statement with the rights known so far, a series of an unchecked nodeId counting as unreadable, and notes
// those nodeIds. The first attempt knows no right, so it only plans (and runs the SHOWs): it gives the charge and the
// nodeIds to check; the next one answers, unless a series of another unchecked nodeId appeared in between (checked,
// then run again).
import type { Db } from '../db/open.ts';
import type { Statement } from './ast.ts';
import { StatementError } from './errors.ts';
import { newMemo, planSelect, type QueryContext, type RequestMemo, type SelectPlan } from './plan.ts';
import { readsEdgesOnly, readsStatisticsOnly, runSelect, type OutSeries } from './select.ts';
import { runShow, type ShowSeries } from './show.ts';
import { timeJson } from './time.ts';
import { readableNodeIds } from '../telemetry/authorize.ts';
import { onKeptCatalogue, readAttempts, settledRead } from '../telemetry/reads.ts';
import type { CostQuery } from '../telemetry/cost.ts';
import type { PointValue, TelemetryReads } from '../telemetry/query/reads-types.ts';
import { flat } from '../lib/flat-string.ts';
import { valueJson } from './rows.ts';
import { RowBytes } from '../telemetry/query/row-bytes.ts';

/** Who asks, when, and the request's ?db= and ?rp=. */
export interface QueryRequest {
  userId: number;
  nowMs: number;
  database?: string;
  retentionPolicy?: string;
}

export interface ExecuteOptions {
  /** epoch=… output unit; RFC3339 strings when undefined */
  epoch?: string;
  /** called once with the cost queries of every SELECT before any point is read; rejects to refuse */
  charge(cost: CostQuery[]): Promise<void>;
  /**
   * Once charged: the whole answer from elsewhere (a read worker, telemetry/read-workers.ts) for a heavy request, or
   * undefined to answer here. Given, the first attempt only plans: the points are read where the answer is made.
   */
  offload?(cost: CostQuery[]): Promise<Uint8Array<ArrayBuffer> | undefined>;
  /**
   * A buffer of at least `size` bytes for an answer written as bytes (one whose raw rows were written as bytes: see
   * telemetry/query/row-bytes.ts); a new one when not given. The answer is a view of its first bytes.
   */
  buffer?(size: number): Uint8Array<ArrayBuffer>;
}

/** A part of an answer: text, or raw rows written as bytes. */
type Piece = string | RowBytes;

type Planned = { kind: 'select'; plan: SelectPlan } | { kind: 'other'; stmt: Statement } | { kind: 'error'; message: string };

interface Attempt {
  /** the answer's parts, valid when `unknown` is empty */
  body: Piece[];
  cost: CostQuery[];
  /** nodeIds met whose right was not known */
  unknown: Set<string>;
  /** false when the SELECTs were only planned */
  answered: boolean;
  /**
   * every SELECT reads at most one point per series (readsEdgesOnly) or the statistics of one nodeId's series
   * (readsStatisticsOnly): never worth a read worker
   */
  light: boolean;
}

/** The answer `{"results":[…]}` as JSON text (or its bytes, from a read worker). */
export async function executeQuery(db: Db, request: QueryRequest, statements: Statement[], options: ExecuteOptions): Promise<string | Uint8Array<ArrayBuffer>> {
  const rights = new Map<string, boolean>();
  const lists: RequestMemo['lists'] = new Map();
  const attempts = readAttempts(db);
  let planOnly = options.offload !== undefined;
  const run = (reads: TelemetryReads): Attempt => {
    const memo = newMemo(rights, lists);
    return { ...runStatements({ ...request, reads }, statements, memo, options.epoch, planOnly), unknown: memo.unknown };
  };
  const attempt = (tx: Db) => attempts.run(tx, run);
  // The first attempt gives the cost to charge (outside any transaction: the charge reads the caller's tier) and the
  // nodeIds to check. It answers nothing when it meets a nodeId (no right is known yet), so on PostgreSQL it plans on
  // the catalogue rows kept between requests, without a round trip, when they hold all it needs: the snapshot below
  // reads the catalogue's version and plans again on what that snapshot holds. So does an attempt that only plans
  // (a read worker may answer): it answers nothing either. Another attempt that met no nodeId is the answer: that one
  // comes from a read snapshot.
  const planned = onKeptCatalogue(db, run);
  const first = planned !== undefined && (planned.unknown.size > 0 || planOnly) ? planned : await settledRead(db, attempt);
  await options.charge(first.cost);
  if (planOnly) {
    // a lone first() or last() reads a point per series, a count, sum or mean of one nodeId's series reads block
    // statistics: the hop to a worker would cost more than the read
    const elsewhere = first.light ? undefined : await options.offload!(first.cost);
    if (elsewhere !== undefined) return elsewhere;
    planOnly = false;
  }
  if (first.unknown.size === 0 && first.answered) {
    await attempts.keep();
    return answerOf(first.body, options.buffer);
  }
  // then rights and answer in ONE read snapshot: the rights checked are those of the data read. Begun as the first
  // one was (settledRead): its first statement reads the catalogue version too, so the catalogue rows kept between
  // requests serve this snapshot as well (PostgreSQL: two round trips fewer than reading them again)
  const body = await settledRead(db, async (tx) => {
    for (let unknown = first.unknown; ;) {
      const readable = await readableNodeIds(tx, request.userId, unknown);
      for (const nodeId of unknown) rights.set(nodeId, readable.has(nodeId));
      const next = await attempt(tx);
      if (next.unknown.size === 0) return next.body;
      unknown = next.unknown; // every attempt but the last adds at least one nodeId
    }
  });
  await attempts.keep();
  return answerOf(body, options.buffer);
}

const encoder = new TextEncoder();

/** The answer of its parts: their text, or their bytes when rows were written as bytes (the rows' chunks given back). */
function answerOf(pieces: Piece[], buffer = (size: number) => new Uint8Array(size)): string | Uint8Array<ArrayBuffer> {
  if (pieces.every((p) => typeof p === 'string')) return pieces.join('');
  let size = 0;
  for (const p of pieces) size += typeof p === 'string' ? Buffer.byteLength(p) : p.size;
  const out = buffer(size);
  let at = 0;
  for (const p of pieces) {
    if (typeof p === 'string') at += encoder.encodeInto(p, out.subarray(at)).written;
    else {
      at = p.copyTo(out, at);
      p.release();
    }
  }
  return new Uint8Array(out.buffer, out.byteOffset, at);
}

/** One attempt: every statement planned, then executed (not with `planOnly`), with the rights in the memo. */
function runStatements(ctx: QueryContext, statements: Statement[], memo: RequestMemo, epoch: string | undefined, planOnly: boolean):
  { body: Piece[]; cost: CostQuery[]; answered: boolean; light: boolean } {
  const planned = statements.map((stmt): Planned => {
    if (stmt.kind !== 'select') return { kind: 'other', stmt };
    try {
      return { kind: 'select', plan: planSelect(ctx, stmt, memo) };
    } catch (err) {
      if (err instanceof StatementError) return { kind: 'error', message: err.message };
      throw err;
    }
  });
  const cost = planned.flatMap((p) => (p.kind === 'select' ? p.plan.cost : []));
  // Planning met nodeIds whose right is not known yet: this attempt's answer will be thrown away, so its SELECTs read
  // no point (the SHOWs still run: they may meet more nodeIds to check before the next attempt).
  const discarded = memo.unknown.size > 0 || planOnly;
  const results = planned.map((p, id) => {
    try {
      if (p.kind === 'error') return errorResult(id, p.message);
      if (p.kind === 'select') return discarded ? [] : selectResult(id, runSelect(ctx.reads, p.plan, epoch), epoch, p.plan.stmt.tz);
      const stmt = p.stmt;
      if (stmt.kind === 'unsupported') {
        return errorResult(id, `${stmt.text || 'this statement'} is not supported by gridkeeper's InfluxDB door (only SELECT and SHOW DATABASES, RETENTION POLICIES, MEASUREMENTS, TAG KEYS, TAG VALUES, FIELD KEYS and SERIES run)`);
      }
      if (stmt.kind === 'show') return showResult(id, runShow(ctx, stmt, memo));
      return errorResult(id, 'unsupported statement');
    } catch (err) {
      if (err instanceof StatementError) return errorResult(id, err.message);
      throw err;
    }
  });
  const light = planned.every((p) => p.kind !== 'select' || readsEdgesOnly(p.plan) || readsStatisticsOnly(p.plan));
  const body: Piece[] = ['{"results":['];
  results.forEach((result, k) => {
    if (k > 0) body.push(',');
    if (typeof result === 'string') body.push(result);
    else body.push(...result);
  });
  body.push(']}');
  return { body, cost, answered: !planOnly, light };
}

function errorResult(id: number, message: string): string {
  return JSON.stringify({ statement_id: id, error: message });
}

function selectResult(id: number, series: OutSeries[], epoch: string | undefined, zone: string | undefined): Piece[] {
  if (series.length === 0) return [`{"statement_id":${id}}`];
  const out: Piece[] = [`{"statement_id":${id},"series":[`];
  series.forEach((s, k) => {
    const rows = s.rowsJson ?? s.rows.map((r) => flat(`[${timeJson(r.ms, r.sub, epoch, zone)}${r.values.map((v) => `,${valueJson(v)}`).join('')}]`));
    const head = `"name":${JSON.stringify(s.name)}${s.tags ? `,"tags":${JSON.stringify(s.tags)}` : ''},"columns":${JSON.stringify(s.columns)}`;
    out.push(`${k > 0 ? ',' : ''}{${head},"values":[`, rows instanceof RowBytes ? rows : rows.join(','), ']}');
  });
  out.push(']}');
  return out;
}

function showResult(id: number, series: ShowSeries[]): string {
  if (series.length === 0 || series.every((s) => s.values.length === 0 && s.name !== 'databases')) return `{"statement_id":${id}}`;
  return JSON.stringify({ statement_id: id, series: series.map((s) => (s.values.length === 0 ? { ...s, values: undefined } : s)) });
}
