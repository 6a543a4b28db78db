// SHOW statements, over the telemetry catalogue and filtered by the same rights as SELECT: a database, measurement,
// tag, field or series appears only when the caller may read at least one series behind it (a field: one with a
// point of that field, unless it may read every series of the measurement).
import type { ShowStatement } from './ast.ts';
import { evaluate, truthy } from './condition.ts';
import { StatementError } from './errors.ts';
import { matchMeasurements, namespaceOf, visibleFields, visibleSeries, type QueryContext, type RequestMemo } from './plan.ts';
import { FIELD_TYPES } from '../telemetry/line-protocol/line-scanner.ts';
import type { NamespaceInfo } from '../telemetry/catalogue-types.ts';
import { seriesKeyOf } from '../telemetry/query/series-key.ts';
import type { SeriesRef } from '../telemetry/query/reads-types.ts';

export interface ShowSeries {
  name?: string;
  columns: string[];
  values: unknown[][];
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Every version-1 namespace, loaded through the catalogue. */
function v1Namespaces(ctx: QueryContext): NamespaceInfo[] {
  const out: NamespaceInfo[] = [];
  for (const namespace of ctx.reads.namespaces()) {
    if (namespace.version !== '1') continue;
    const ns = ctx.reads.find(namespace);
    if (ns !== undefined) out.push(ns);
  }
  return out;
}

function nsVisible(ctx: QueryContext, memo: RequestMemo, ns: NamespaceInfo): boolean {
  for (const m of ns.measurements.keys()) if (visibleSeries(ctx, memo, ns, m).length > 0) return true;
  return false;
}

const dbOf = (ns: NamespaceInfo) => (ns.namespace as { database: string }).database;
const rpOf = (ns: NamespaceInfo) => (ns.namespace as { retentionPolicy: string }).retentionPolicy;

/** Go's time.Duration text: 24h0m0s, 168h0m0s, 0s. */
function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m${s % 60}s`;
}

function page<T>(list: T[], limit: number, offset: number): T[] {
  return limit > 0 ? list.slice(offset, offset + limit) : list.slice(offset);
}

export function runShow(ctx: QueryContext, stmt: ShowStatement, memo: RequestMemo): ShowSeries[] {
  if (stmt.what === 'databases') {
    const names = [...new Set(v1Namespaces(ctx).filter((ns) => nsVisible(ctx, memo, ns)).map(dbOf))].sort(byText);
    return [{ name: 'databases', columns: ['name'], values: names.map((n) => [n]) }];
  }
  const dbName = (namespaceOf(ctx, { database: stmt.database }) as { database: string }).database;
  let namespaces = v1Namespaces(ctx).filter((ns) => dbOf(ns) === dbName);

  if (stmt.what === 'retention policies') {
    const visible = namespaces.filter((ns) => nsVisible(ctx, memo, ns));
    if (visible.length === 0) throw new StatementError(`database not found: ${dbName}`);
    return [{
      columns: ['name', 'duration', 'shardGroupDuration', 'replicaN', 'default'],
      values: visible.map((ns) => [rpOf(ns), '0s', goDuration(ns.profile.shardDurationMs), 1, rpOf(ns) === 'autogen']),
    }];
  }

  // sources: FROM (several, with optional rp) or every measurement of the database
  const sources = stmt.sources.length > 0 ? stmt.sources : [{ regex: /(?:)/ }];
  const pairs: Array<{ ns: NamespaceInfo; m: string }> = [];
  for (const src of sources) {
    const rp = 'retentionPolicy' in src ? src.retentionPolicy : undefined;
    if ('database' in src && src.database !== undefined && src.database !== dbName) {
      namespaces = v1Namespaces(ctx).filter((ns) => dbOf(ns) === src.database);
    }
    for (const ns of namespaces) {
      if (rp !== undefined && rpOf(ns) !== rp) continue;
      for (const m of matchMeasurements(ns, src)) pairs.push({ ns, m: m.name });
    }
  }
  if (stmt.measurement !== undefined) {
    const want = stmt.measurement;
    for (let i = pairs.length - 1; i >= 0; i--) {
      const name = pairs[i].m;
      if (want.name !== undefined ? name !== want.name : !want.regex!.test(name)) pairs.splice(i, 1);
    }
  }
  // the visible series of each (namespace, measurement), after the WHERE clause (tags only)
  const seriesOf = (ns: NamespaceInfo, m: string): SeriesRef[] => {
    const list = visibleSeries(ctx, memo, ns, m);
    if (stmt.condition === undefined) return list;
    const cond = stmt.condition;
    return list.filter((s) => truthy(evaluate(cond, (name) => (name === '_name' ? m : s.tags[name] ?? ''))));
  };
  const byMeasurement = new Map<string, SeriesRef[]>();
  const fieldsOf = new Map<string, Map<string, string>>();
  for (const { ns, m } of pairs) {
    const list = seriesOf(ns, m);
    if (list.length === 0) continue;
    byMeasurement.set(m, [...(byMeasurement.get(m) ?? []), ...list]);
    const fields = fieldsOf.get(m) ?? new Map<string, string>();
    const info = ns.measurements.get(m);
    if (info !== undefined) for (const f of visibleFields(ctx, memo, ns, info).values()) if (!fields.has(f.name)) fields.set(f.name, FIELD_TYPES[f.kind]);
    fieldsOf.set(m, fields);
  }
  const measurements = [...byMeasurement.keys()].sort(byText);

  switch (stmt.what) {
    case 'measurements': {
      const names = page(measurements, stmt.limit, stmt.offset);
      return names.length === 0 ? [] : [{ name: 'measurements', columns: ['name'], values: names.map((n) => [n]) }];
    }
    case 'tag keys': {
      const out: ShowSeries[] = [];
      for (const m of measurements) {
        const keys = page([...new Set(byMeasurement.get(m)!.flatMap((s) => Object.keys(s.tags)))].sort(byText), stmt.limit, stmt.offset);
        if (keys.length > 0) out.push({ name: m, columns: ['tagKey'], values: keys.map((k) => [k]) });
      }
      return out;
    }
    case 'tag values': {
      const keys = stmt.keys!;
      const wanted = (k: string) => {
        switch (keys.op) {
          case '=': case 'IN': return keys.names!.includes(k);
          case '!=': return !keys.names!.includes(k);
          case '=~': return keys.re!.test(k);
          case '!~': return !keys.re!.test(k);
        }
      };
      const out: ShowSeries[] = [];
      for (const m of measurements) {
        const pairsSeen = new Set<string>();
        const values: Array<[string, string]> = [];
        for (const s of byMeasurement.get(m)!) {
          for (const [k, v] of Object.entries(s.tags)) {
            if (!wanted(k)) continue;
            const key = JSON.stringify([k, v]);
            if (!pairsSeen.has(key)) { pairsSeen.add(key); values.push([k, v]); }
          }
        }
        values.sort((a, b) => byText(a[0], b[0]) || byText(a[1], b[1]));
        const paged = page(values, stmt.limit, stmt.offset);
        if (paged.length > 0) out.push({ name: m, columns: ['key', 'value'], values: paged });
      }
      return out;
    }
    case 'field keys': {
      const out: ShowSeries[] = [];
      for (const m of measurements) {
        const fields = page([...fieldsOf.get(m)!.entries()].sort((a, b) => byText(a[0], b[0])), stmt.limit, stmt.offset);
        if (fields.length > 0) out.push({ name: m, columns: ['fieldKey', 'fieldType'], values: fields.map(([k, t]) => [k, t]) });
      }
      return out;
    }
    case 'series': {
      const keys = [...new Set(measurements.flatMap((m) => byMeasurement.get(m)!.map((s) => seriesKeyOf(m, s.tags))))].sort(byText);
      const paged = page(keys, stmt.limit, stmt.offset);
      return paged.length === 0 ? [] : [{ columns: ['key'], values: paged.map((k) => [k]) }];
    }
    default:
      return [];
  }
}
