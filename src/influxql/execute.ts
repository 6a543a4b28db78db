// Runs an InfluxQL query: every statement planned first (a planning error is that statement's answer), the whole
// request charged once through the telemetry cost limiter (the SELECTs' cost queries), then every statement executed
// inside one read transaction — one consistent snapshot, as the JSON queries have.
import type { Statement } from './ast.ts';
import { StatementError } from './errors.ts';
import { newMemo, planSelect, type QueryContext, type SelectPlan } from './plan.ts';
import { runSelect, type OutSeries } from './select.ts';
import { runShow, type ShowSeries } from './show.ts';
import { timeJson } from './time.ts';
import type { CostQuery } from '../telemetry/cost.ts';
import type { PointValue } from '../telemetry/query-points.ts';

export interface ExecuteOptions {
  /** epoch=… output unit; RFC3339 strings when undefined */
  epoch?: string;
  /** called once with the cost queries of every SELECT before anything executes; throws to refuse */
  charge(cost: CostQuery[]): void;
}

type Planned = { kind: 'select'; plan: SelectPlan } | { kind: 'other'; stmt: Statement } | { kind: 'error'; message: string };

/** The answer `{"results":[…]}` as JSON text. Call inside a read transaction after catalogue.sync(). */
export function executeQuery(ctx: QueryContext, statements: Statement[], options: ExecuteOptions): string {
  const memo = newMemo();
  const planned = statements.map((stmt): Planned => {
    if (stmt.kind !== 'select') return { kind: 'other', stmt };
    try {
      return { kind: 'select', plan: planSelect(ctx, stmt, memo) };
    } catch (err) {
      if (err instanceof StatementError) return { kind: 'error', message: err.message };
      throw err;
    }
  });
  options.charge(planned.flatMap((p) => (p.kind === 'select' ? p.plan.cost : [])));
  const results = planned.map((p, id) => {
    try {
      if (p.kind === 'error') return errorResult(id, p.message);
      if (p.kind === 'select') return selectResult(id, runSelect(ctx.catalogue, p.plan, options.epoch), options.epoch, p.plan.stmt.tz);
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
  return `{"results":[${results.join(',')}]}`;
}

function errorResult(id: number, message: string): string {
  return JSON.stringify({ statement_id: id, error: message });
}

export function valueJson(v: PointValue): string {
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  return JSON.stringify(v);
}

function selectResult(id: number, series: OutSeries[], epoch: string | undefined, zone: string | undefined): string {
  if (series.length === 0) return `{"statement_id":${id}}`;
  const parts = series.map((s) => {
    const rows = s.rowsJson ?? s.rows.map((r) => `[${timeJson(r.ms, r.sub, epoch, zone)}${r.values.map((v) => `,${valueJson(v)}`).join('')}]`);
    const head = `"name":${JSON.stringify(s.name)}${s.tags ? `,"tags":${JSON.stringify(s.tags)}` : ''},"columns":${JSON.stringify(s.columns)}`;
    return `{${head},"values":[${rows.join(',')}]}`;
  });
  return `{"statement_id":${id},"series":[${parts.join(',')}]}`;
}

function showResult(id: number, series: ShowSeries[]): string {
  if (series.length === 0 || series.every((s) => s.values.length === 0 && s.name !== 'databases')) return `{"statement_id":${id}}`;
  return JSON.stringify({ statement_id: id, series: series.map((s) => (s.values.length === 0 ? { ...s, values: undefined } : s)) });
}
