// SELECT: sources -> visible series -> points (read through the telemetry query layer: the planned shard tables, the
// same statement cache) -> rows. Raw selects return points; selects with functions reduce windows (GROUP BY time, or
// the whole range) and fill the empty ones; transformations map the rows they get.
import type { Dimension, Expr, Field } from './ast.ts';
import { evaluate, fieldNames, onlyTags, truthy, type Resolver } from './condition.ts';
import type { PlannedSource, SelectPlan } from './plan.ts';
import { aggregateRows, isSimpleSum, sqlAggregateRows, type AggregateRows } from './aggregate.ts';
import { valueJson, type Group, type OutRow, type OutSeries, type Stream } from './rows.ts';
import type { PointValue } from '../telemetry/query/reads-types.ts';
import type { FieldInfo, MeasurementInfo } from '../telemetry/catalogue-types.ts';
import type { TelemetryReads } from '../telemetry/query/reads-types.ts';
import { FIELD_TYPES } from '../telemetry/line-protocol/line-scanner.ts';
import { takesType } from './functions.ts';
import { EPOCH_UNITS, epochTimeJson, timeJson } from './time.ts';
import { checkTypes, needsTypeCheck, type DataType, type TypeOf } from './types.ts';
import { RowBytes, type RowSink } from '../telemetry/query/row-bytes.ts';
import { withTagColumns } from './tag-columns.ts';

export type { OutSeries } from './rows.ts';

/** `epoch`: the answer's time unit (RFC3339 text when undefined), which decides whether SQLite may write the rows. */
export function runSelect(reads: TelemetryReads, plan: SelectPlan, epoch?: string): OutSeries[] {
  const stmt = plan.stmt;
  const out: OutSeries[] = [];
  // `*` over several measurements: every one answers the columns of them all (InfluxDB's schema of the statement)
  const all = plan.sources.flatMap((src) => src.measurements.map((m) => ({ src, m })));
  let union: Union | undefined;
  if (all.length > 1 && stmt.fields.some((f) => f.expr.kind === 'wildcard' || (f.expr.kind === 'call' && f.expr.args[0]?.kind === 'wildcard'))) {
    const fields = new Map<string, FieldInfo>();
    const tagKeys = new Set<string>();
    for (const { src, m } of all) {
      for (const [name, f] of src.fieldsOf(m)) if (!fields.has(name)) fields.set(name, f);
      for (const s of src.seriesOf(m.name)) for (const k of Object.keys(s.tags)) tagKeys.add(k);
    }
    union = { fields, tagKeys: [...tagKeys].sort() };
  }
  if (needsTypeCheck(stmt.fields)) checkTypes(stmt.fields, typesOf(all));
  for (const { src, m } of all) out.push(...selectMeasurement(reads, plan, src, m, epoch, union));
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const from = stmt.soffset;
  const sliced = stmt.slimit > 0 ? out.slice(from, from + stmt.slimit) : out.slice(from);
  return sliced;
}

/** The type of a name over the statement's measurements: a field's (the first measurement's that has it), else a tag's. */
function typesOf(all: ReadonlyArray<{ src: PlannedSource; m: MeasurementInfo }>): TypeOf {
  let tagKeys: Set<string> | undefined;
  const fieldType = (name: string): DataType | undefined => {
    for (const { src, m } of all) {
      const f = src.fieldsOf(m).get(name);
      if (f !== undefined) return FIELD_TYPES[f.kind];
    }
    return undefined;
  };
  return (name, cast) => {
    if (cast === 'tag') return 'tag';
    const t = fieldType(name);
    if (t !== undefined || cast === 'field') return t ?? 'unknown';
    tagKeys ??= new Set(all.flatMap(({ src, m }) => src.seriesOf(m.name).flatMap((s) => Object.keys(s.tags))));
    return tagKeys.has(name) ? 'tag' : 'unknown';
  };
}

function resolverOf(m: MeasurementInfo): Resolver {
  return {
    isField: (name, cast) => cast === 'tag' ? false : cast === 'field' ? true : m.fields.has(name),
  };
}

function hasCall(e: Expr): boolean {
  switch (e.kind) {
    case 'call': return e.name !== 'now';
    case 'binary': return hasCall(e.lhs) || hasCall(e.rhs);
    case 'paren': return hasCall(e.expr);
    default: return false;
  }
}

/** Expands `*` (and `*::field`, `*::tag`) into the measurement's fields and tags, sorted by name. */
function expandFields(fields: Field[], fieldMap: ReadonlyMap<string, FieldInfo>, tagKeys: string[], groupTags: Set<string>): Field[] {
  const out: Field[] = [];
  for (const f of fields) {
    const e = f.expr;
    if (e.kind === 'call' && e.args[0]?.kind === 'wildcard') {
      // fn(*): one column per field of a type the function takes, named fn_field
      const names = [...fieldMap.values()].filter((fi) => takesType(e.name, FIELD_TYPES[fi.kind])).map((fi) => fi.name).sort();
      for (const name of names) out.push({ expr: { ...e, args: [{ kind: 'var', name, cast: 'field' }, ...e.args.slice(1)] }, alias: `${e.name}_${name}` });
      continue;
    }
    if (e.kind === 'call' && (e.name === 'top' || e.name === 'bottom') && e.args.length > 2) {
      // top(field, tag…, N): a column per tag beside the selected value
      out.push(f);
      for (const a of e.args.slice(1, -1)) if (a.kind === 'var') out.push({ expr: { kind: 'var', name: a.name, cast: 'tag' } });
      continue;
    }
    if (e.kind !== 'wildcard') { out.push(f); continue; }
    const cast = e.cast;
    const names: Array<{ name: string; cast: 'field' | 'tag' }> = [];
    if (cast !== 'tag') for (const name of fieldMap.keys()) names.push({ name, cast: 'field' });
    if (cast !== 'field') for (const k of tagKeys) if (!groupTags.has(k) && !fieldMap.has(k)) names.push({ name: k, cast: 'tag' });
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const n of names) out.push({ expr: { kind: 'var', name: n.name, cast: n.cast } });
  }
  return out;
}

/** InfluxDB's column names: the alias, a call's name, a variable's name, names in an expression joined by `_`; duplicates get `_1`, `_2`. */
export function columnNames(fields: Field[]): string[] {
  const nameOf = (e: Expr): string[] => {
    switch (e.kind) {
      case 'var': return [e.name];
      case 'call': return [e.name];
      case 'binary': return [...nameOf(e.lhs), ...nameOf(e.rhs)];
      case 'paren': return nameOf(e.expr);
      default: return [];
    }
  };
  const names = fields.map((f) => f.alias ?? (nameOf(f.expr).join('_') || ''));
  const seen = new Map<string, number>();
  const used = new Set(names);
  return names.map((n) => {
    const count = seen.get(n) ?? 0;
    seen.set(n, count + 1);
    if (count === 0) return n;
    let k = count;
    while (used.has(`${n}_${k}`)) k++;
    used.add(`${n}_${k}`);
    return `${n}_${k}`;
  });
}

function groupTagNames(dims: Dimension[], tagKeys: string[]): string[] {
  const out: string[] = [];
  for (const d of dims) {
    if (d.kind === 'tag') out.push(d.name);
    else if (d.kind === 'wildcard') out.push(...tagKeys);
    else if (d.kind === 'regex') out.push(...tagKeys.filter((k) => d.re.test(k)));
  }
  return [...new Set(out)].sort();
}

/** The fields and tag keys of every measurement of a statement. */
interface Union {
  fields: Map<string, FieldInfo>;
  tagKeys: string[];
}

function selectMeasurement(reads: TelemetryReads, plan: SelectPlan, src: PlannedSource, m: MeasurementInfo, epoch: string | undefined, union?: Union): OutSeries[] {
  const stmt = plan.stmt;
  const resolver = resolverOf(m);
  // A WHERE requiring one nodeId needs only that nodeId's series — unless `*` or GROUP BY * / /re/ must see every tag
  // key of the measurement, or the measurement has a field named nodeId (then the condition may mean the field).
  const allTagKeys = stmt.fields.some((f) => f.expr.kind === 'wildcard') || stmt.dimensions.some((d) => d.kind === 'wildcard' || d.kind === 'regex');
  const visible = plan.nodeId !== undefined && !allTagKeys && !m.fields.has('nodeId') ? src.seriesOfNode(m.name, plan.nodeId) : src.seriesOf(m.name);
  const tagKeys = [...new Set(visible.flatMap((s) => Object.keys(s.tags)))].sort();
  const groupTags = groupTagNames(stmt.dimensions, tagKeys);
  const wildcard = stmt.fields.some((f) => f.expr.kind === 'wildcard' || (f.expr.kind === 'call' && f.expr.args[0]?.kind === 'wildcard'));
  const fields = union === undefined ? expandFields(stmt.fields, wildcard ? src.fieldsOf(m) : m.fields, tagKeys, new Set(groupTags))
    : expandFields(stmt.fields, union.fields, union.tagKeys, new Set(groupTags));
  const columns = ['time', ...columnNames(fields)];
  const aggregate = fields.some((f) => hasCall(f.expr));
  const timeDim = stmt.dimensions.find((d) => d.kind === 'time');

  // the series-level part of the filter
  const filter = plan.filter;
  const tagFilter = filter !== undefined && onlyTags(filter, resolver) ? filter : undefined;
  const pointFilter = filter !== undefined && tagFilter === undefined ? filter : undefined;
  const series = tagFilter === undefined ? visible
    : visible.filter((s) => truthy(evaluate(tagFilter, (name) => s.tags[name] ?? '')));

  const groups = new Map<string, Group>();
  for (const s of series) {
    const tags: Record<string, string> = {};
    for (const k of groupTags) tags[k] = s.tags[k] ?? '';
    const key = JSON.stringify(tags);
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { key, tags, series: [] }));
    g.series.push(s);
  }
  const ordered = [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

  const wanted = new Set<string>();
  for (const f of fields) fieldNames(f.expr, resolver, wanted);
  fieldNames(pointFilter, resolver, wanted);
  const fieldInfos = [...wanted].map((n) => m.fields.get(n)).filter((f): f is FieldInfo => f !== undefined);
  const selected = new Set<string>();
  for (const f of fields) fieldNames(f.expr, resolver, selected);
  if (![...selected].some((n) => m.fields.has(n))) return [];

  const out: OutSeries[] = [];
  // ORDER BY time DESC orders the series backwards too (as InfluxDB does)
  if (stmt.desc) ordered.reverse();
  for (const g of ordered) {
    // a raw select without a point filter needs at most LIMIT + OFFSET points of each series, from the ordered end
    // so does a lone first() or last() of a field over the whole range: one point of each series, from its end
    const edge = !aggregate && pointFilter === undefined && stmt.limit > 0 && fields.every((f) => f.expr.kind === 'var')
      ? { desc: stmt.desc, limit: stmt.limit + stmt.offset }
      : aggregate && timeDim === undefined && pointFilter === undefined ? edgeSelector(fields, fieldInfos) : undefined;
    const dim = timeDim?.kind === 'time' ? timeDim : undefined;
    // raw fields (and tags) of one series: the telemetry layer writes the rows' JSON text itself (the JSON query's way),
    // the series' tag values spliced in at their columns
    if (!aggregate && pointFilter === undefined && g.series.length === 1 && (epoch === undefined || EPOCH_UNITS[epoch] !== undefined)
      && stmt.tz === undefined && src.fromMs >= 0
      && fields.every((f) => f.expr.kind === 'var' && (!resolver.isField(f.expr.name, f.expr.cast) || m.fields.has(f.expr.name)))) {
      const names = fields.map((f) => f.expr as Extract<Expr, { kind: 'var' }>);
      const isField = names.map((e) => resolver.isField(e.name, e.cast));
      const selectedFields = names.filter((_, k) => isField[k]).map((e) => m.fields.get(e.name)!);
      const take = stmt.limit > 0 ? stmt.limit + stmt.offset : Number.MAX_SAFE_INTEGER;
      const time = epoch === undefined ? undefined : epochTimeJson(epoch);
      const text = new RowBytes(stmt.offset);
      const tags = g.series[0].tags;
      const into = isField.every(Boolean) ? text
        : withTagColumns(text, names.map((e, k) => (isField[k] ? undefined : tags[e.name] === undefined ? 'null' : JSON.stringify(tags[e.name]))));
      reads.readRowsJson(src.shards, g.series[0].id, selectedFields, src.fromMs, src.toMs, stmt.desc, take, into, time);
      if (text.rows > 0) out.push({ name: m.name, ...(groupTags.length > 0 ? { tags: g.tags } : {}), columns, rows: [], rowsJson: text });
      continue;
    }
    let rows: OutRow[] | undefined;
    if (aggregate && pointFilter === undefined && stmt.tz === undefined && (dim === undefined || plan.explicitFromMs !== undefined)
      && fields.every((f) => isSimpleSum(f.expr, m, dim !== undefined))) {
      rows = sqlAggregateRows(reads, plan, src, g, fields, fieldInfos, dim);
    }
    if (rows === undefined && !aggregate && fields.every((f) => f.expr.kind === 'var')) {
      // plain names: each row's JSON written from the stream's columns at once (no row of values in between)
      const stream = readGroup(reads, src, g, fieldInfos, pointFilter, edge);
      const json = new RowBytes(stmt.offset);
      rawRowsJson(fields, stream, resolver, epoch, stmt.tz, stmt.desc, stmt.limit > 0 ? stmt.offset + stmt.limit : Number.POSITIVE_INFINITY, json);
      if (json.rows > 0) out.push({ name: m.name, ...(groupTags.length > 0 ? { tags: g.tags } : {}), columns, rows: [], rowsJson: json });
      continue;
    }
    if (rows === undefined) {
      const stream = readGroup(reads, src, g, fieldInfos, pointFilter, edge);
      if (stream.ms.length === 0) continue;
      rows = aggregate ? aggregateRows(plan, src, fields, stream, fieldInfos, dim) : rawRows(fields, stream, resolver);
    }
    if (rows.length === 0) continue;
    const perColumn = (rows as AggregateRows).limited === true;
    if (stmt.desc) rows.reverse();
    const limited = perColumn ? rows : stmt.limit > 0 ? rows.slice(stmt.offset, stmt.offset + stmt.limit) : rows.slice(stmt.offset);
    if (limited.length === 0) continue;
    out.push({ name: m.name, ...(groupTags.length > 0 ? { tags: g.tags } : {}), columns, rows: limited });
  }
  return out;
}


/**
 * Whether a planned SELECT reads at most one point of each series: a lone first() or last() of a field, without
 * GROUP BY time, filtered by tags only (selectMeasurement then reads from each series' end).
 */
export function readsEdgesOnly(plan: SelectPlan): boolean {
  const stmt = plan.stmt;
  if (stmt.fields.length !== 1 || stmt.dimensions.some((d) => d.kind === 'time')) return false;
  const e = stmt.fields[0].expr;
  if (e.kind !== 'call' || (e.name !== 'first' && e.name !== 'last') || e.args.length !== 1 || e.args[0].kind !== 'var' || e.args[0].cast === 'tag') return false;
  const filter = plan.filter;
  return filter === undefined || plan.sources.every((src) => src.measurements.every((m) => onlyTags(filter, resolverOf(m))));
}

/**
 * Whether a planned SELECT of one nodeId is answered from statistics: count(), sum() or mean() of numeric fields over
 * the whole range, filtered by tags only — selectMeasurement's sqlAggregateRows path, which reads the statistics of
 * the blocks the range covers, decodes at most the two it cuts, and sums the head's rows in SQL, for the few series
 * of the nodeId.
 */
export function readsStatisticsOnly(plan: SelectPlan): boolean {
  const stmt = plan.stmt;
  if (plan.nodeId === undefined || stmt.tz !== undefined || stmt.dimensions.some((d) => d.kind !== 'tag')) return false;
  const filter = plan.filter;
  return plan.sources.every((src) => src.measurements.every((m) => !m.fields.has('nodeId')
    && stmt.fields.every((f) => f.expr.kind === 'call' && isSimpleSum(f.expr, m))
    && (filter === undefined || onlyTags(filter, resolverOf(m)))));
}

/** `{ desc, limit: 1 }` when the only field is first(f) or last(f) of the one field read; else undefined. */
function edgeSelector(fields: readonly Field[], fieldInfos: readonly FieldInfo[]): { desc: boolean; limit: number } | undefined {
  if (fields.length !== 1 || fieldInfos.length !== 1) return undefined;
  const e = fields[0].expr;
  if (e.kind !== 'call' || (e.name !== 'first' && e.name !== 'last') || e.args.length !== 1) return undefined;
  const arg = e.args[0];
  if (arg.kind !== 'var' || arg.cast === 'tag' || arg.name !== fieldInfos[0].name) return undefined;
  return { desc: e.name === 'last', limit: 1 };
}

function readGroup(reads: TelemetryReads, src: PlannedSource, g: Group, fieldInfos: FieldInfo[], pointFilter: Expr | undefined,
  edge: { desc: boolean; limit: number } | undefined): Stream {
  const parts = g.series.map((s) => ({ s, p: reads.readPoints(src.shards, s.id, fieldInfos, src.fromMs, src.toMs, edge) }));
  if (parts.length === 1 && pointFilter === undefined) {
    // one series, nothing to merge or filter: its points as they were read
    const { s, p } = parts[0];
    return { ms: p.ms, sub: p.sub, values: p.values, fieldNames: fieldInfos.map((f) => f.name), tags: new Array<Record<string, string>>(p.ms.length).fill(s.tags) };
  }
  const order: Array<[number, number]> = [];
  parts.forEach(({ p }, k) => { for (let i = 0; i < p.ms.length; i++) order.push([k, i]); });
  if (parts.length > 1) {
    order.sort((x, y) => {
      const a = parts[x[0]].p;
      const b = parts[y[0]].p;
      return a.ms[x[1]] - b.ms[y[1]] || a.sub[x[1]] - b.sub[y[1]] || x[0] - y[0];
    });
  }
  const st: Stream = { ms: [], sub: [], values: fieldInfos.map(() => []), fieldNames: fieldInfos.map((f) => f.name), tags: [] };
  const index = new Map(fieldInfos.map((f, i) => [f.name, i]));
  for (const [k, i] of order) {
    const { s, p } = parts[k];
    if (pointFilter !== undefined) {
      const get = (name: string, cast?: 'field' | 'tag'): PointValue => {
        const fi = cast === 'tag' ? undefined : index.get(name);
        if (fi !== undefined) return p.values[fi][i];
        return cast === 'field' ? null : s.tags[name] ?? '';
      };
      if (!truthy(evaluate(pointFilter, get))) continue;
    }
    st.ms.push(p.ms[i]);
    st.sub.push(p.sub[i]);
    for (let f = 0; f < fieldInfos.length; f++) st.values[f].push(p.values[f][i]);
    st.tags.push(s.tags);
  }
  return st;
}


/**
 * The rows of plain names (fields and tags) as JSON, as the answer writes them, appended to `rows` in time order
 * (`desc`: newest first) until it holds `take`; a row without a field value is left out.
 */
function rawRowsJson(fields: Field[], st: Stream, resolver: Resolver, epoch: string | undefined, zone: string | undefined, desc: boolean, take: number,
  rows: RowSink): void {
  const fieldIndex = new Map(st.fieldNames.map((n, i) => [n, i]));
  const cols = fields.map((f) => {
    const e = f.expr as Extract<Expr, { kind: 'var' }>;
    if (!resolver.isField(e.name, e.cast)) return { values: undefined, tag: e.name };
    const fi = fieldIndex.get(e.name);
    return { values: fi === undefined ? undefined : st.values[fi], tag: undefined };
  });
  const n = st.ms.length;
  for (let k = 0; k < n && rows.length < take; k++) {
    const i = desc ? n - 1 - k : k;
    let anyField = false;
    let row = '';
    for (const c of cols) {
      if (c.tag !== undefined) {
        const t = st.tags[i][c.tag];
        row += t === undefined ? ',null' : `,${JSON.stringify(t)}`;
        continue;
      }
      const v = c.values === undefined ? null : c.values[i];
      if (v !== null) anyField = true;
      row += `,${valueJson(v)}`;
    }
    if (anyField) rows.push(`[${timeJson(st.ms[i], st.sub[i], epoch, zone)}${row}]`);
  }
}

/** The rows of fields with expressions, evaluated per point; a row without a field value is left out. */
function rawRows(fields: Field[], st: Stream, resolver: Resolver): OutRow[] {
  const rows: OutRow[] = [];
  const fieldIndex = new Map(st.fieldNames.map((n, i) => [n, i]));
  const fieldCols = fields.map((f) => refersToField(f.expr, resolver));
  for (let i = 0; i < st.ms.length; i++) {
    const get = (name: string, cast?: 'field' | 'tag'): PointValue => {
      if (resolver.isField(name, cast)) {
        const fi = fieldIndex.get(name);
        return fi === undefined ? null : st.values[fi][i];
      }
      return st.tags[i][name] ?? null;
    };
    let anyField = false;
    const values = fields.map((f, k) => {
      const v = evaluate(f.expr, get);
      const value = v instanceof RegExp ? null : v;
      if (value !== null && fieldCols[k]) anyField = true;
      return value;
    });
    if (anyField) rows.push({ ms: st.ms[i], sub: st.sub[i], values });
  }
  return rows;
}

function refersToField(e: Expr, r: Resolver): boolean {
  switch (e.kind) {
    case 'var': return r.isField(e.name, e.cast);
    case 'binary': return refersToField(e.lhs, r) || refersToField(e.rhs, r);
    case 'paren': return refersToField(e.expr, r);
    default: return false;
  }
}
