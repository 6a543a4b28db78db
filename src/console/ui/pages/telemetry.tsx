// Telemetry of one device: pick a series (nodeInfluxSeries, or namespace + measurement + fields), a range, and plot it.
// Long ranges are aggregated automatically: one mean-per-bucket query per bucket, sent together in one request
// (the API has no GROUP BY time). The request's cost and the bucket's remaining capacity come from its headers.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { ApiFailure, api, get } from '../api.ts';
import { ErrorNote, Section, Select, TextInput, useAction, useLoad } from '../components.tsx';
import type { Device } from '../types.ts';

interface SeriesSpec { measurement: string; database?: string; retentionPolicy?: string; tags?: Record<string, string>; fields?: string[] }
interface NamespaceInfo { namespace: { version: string; database?: string; retentionPolicy?: string }; expectedIntervalSeconds: number }
interface StatementResult { statement_id: number; series?: { name: string; tags: Record<string, string>; columns: string[]; values: unknown[][] }[]; error?: string }

const RANGES: [string, string][] = [['3600', 'Last hour'], ['86400', 'Last day'], ['604800', 'Last week'], ['custom', 'Custom range']];
/** Above this many expected points per field, the plot shows bucket means instead of raw points. */
const RAW_LIMIT = 1500;
const BUCKETS = 200;
const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7b83'];

/** The contract's default interval by retention-policy name (§7.1) when the namespace is not listed yet. */
function intervalFor(rp: string, known: NamespaceInfo[] | undefined, db: string): number {
  const hit = known?.find((n) => n.namespace.database === db && n.namespace.retentionPolicy === rp);
  if (hit) return hit.expectedIntervalSeconds;
  return rp.endsWith('_one_s') ? 1 : rp.endsWith('_one_m') ? 60 : rp.endsWith('_one_h') ? 3600 : 10;
}

const localInput = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

export interface PlotData { x: number[]; lines: { label: string; values: (number | null)[] }[]; aggregated: boolean }

export function Telemetry({ device }: { device: Device }) {
  const nodeId = typeof device.properties.nodeId === 'string' ? device.properties.nodeId : undefined;
  const declared = (Array.isArray(device.properties.nodeInfluxSeries) ? device.properties.nodeInfluxSeries : []) as SeriesSpec[];
  const namespaces = useLoad(() => get<{ namespaces: NamespaceInfo[] }>('/v1/telemetry/namespaces').then((r) => r.namespaces), []);
  const v1 = (namespaces.data ?? []).filter((n) => n.namespace.version === '1');
  const [source, setSource] = useState(declared.length ? '0' : 'custom');
  const [ns, setNs] = useState('');
  const [measurement, setMeasurement] = useState('');
  const [fields, setFields] = useState('');
  const [range, setRange] = useState('3600');
  const now = Date.now();
  const [from, setFrom] = useState(localInput(now - 86_400_000));
  const [to, setTo] = useState(localInput(now));
  const [plot, setPlot] = useState<PlotData | undefined>();
  const [usage, setUsage] = useState<{ cost: string; remaining: string; queries: number } | undefined>();

  const spec: SeriesSpec | undefined = useMemo(() => {
    if (source !== 'custom') return declared[Number(source)];
    const [database, retentionPolicy] = (ns || (v1[0] ? `${v1[0].namespace.database}/${v1[0].namespace.retentionPolicy}` : '')).split('/');
    return { measurement: measurement.trim(), database, retentionPolicy, fields: fields.split(',').map((f) => f.trim()).filter(Boolean) };
  }, [source, ns, measurement, fields, declared, v1]);

  const run = useAction(async () => {
    if (!nodeId) throw new Error('this device has no nodeId: telemetry lines are matched by their nodeId tag');
    if (!spec?.measurement || !spec.database || !spec.retentionPolicy) throw new Error('choose a namespace (database/retention policy) and a measurement');
    const fieldList = spec.fields?.length ? spec.fields : [];
    if (fieldList.length === 0) throw new Error('name at least one field to plot');
    const end = range === 'custom' ? new Date(to).getTime() : Date.now();
    const start = range === 'custom' ? new Date(from).getTime() : end - Number(range) * 1000;
    if (!(end > start)) throw new Error('the range must end after it starts');
    const fromClause = { measurement: spec.measurement, database: spec.database, retentionPolicy: spec.retentionPolicy };
    const tags = { ...spec.tags, nodeId };
    const expected = (end - start) / 1000 / intervalFor(spec.retentionPolicy, namespaces.data, spec.database);
    const aggregated = expected > RAW_LIMIT;
    let body: unknown;
    let edges: number[] = [];
    if (!aggregated) {
      body = [{ select: fieldList, from: fromClause, where: { time: [{ operator: '>=', value: start }, { operator: '<', value: end }], tags } }];
    } else {
      const step = Math.ceil((end - start) / BUCKETS);
      edges = Array.from({ length: BUCKETS }, (_, i) => start + i * step);
      body = edges.map((b) => ({
        select: fieldList.map((field) => ({ field, function: 'mean' })), from: fromClause,
        where: { time: [{ operator: '>=', value: b }, { operator: '<', value: Math.min(end, b + step) }], tags },
      }));
    }
    let res;
    try {
      res = await api<StatementResult[]>('POST', '/v1/telemetry/query', { body });
    } catch (err) {
      if (err instanceof ApiFailure) setUsage({ cost: err.headers.get('x-ratelimit-cost') ?? String(err.body.cost ?? '—'), remaining: err.headers.get('x-ratelimit-remaining') ?? String(err.body.remainingCapacity ?? '—'), queries: (body as unknown[]).length });
      throw err;
    }
    setUsage({ cost: res.headers.get('x-ratelimit-cost') ?? '—', remaining: res.headers.get('x-ratelimit-remaining') ?? '—', queries: (body as unknown[]).length });
    const failed = res.data.find((r) => r.error);
    if (failed) throw new Error(`query ${failed.statement_id}: ${failed.error}`);
    setPlot(aggregated ? bucketsToPlot(res.data, edges, fieldList) : rawToPlot(res.data[0], fieldList));
  });

  const options: [string, string][] = [
    ...declared.map((s, i): [string, string] => [String(i), `${s.measurement} (${s.database ?? '?'}/${s.retentionPolicy ?? '?'})${s.fields?.length ? ': ' + s.fields.join(', ') : ''}`]),
    ['custom', 'Choose namespace, measurement and fields…'],
  ];
  return (
    <Section title="Telemetry">
      <form class="telemetry-form" onSubmit={(e) => { e.preventDefault(); void run.run(); }}>
        <Select label="Series" value={source} onChange={setSource} options={options} />
        {source === 'custom' && (
          <>
            <Select label="Namespace" value={ns} onChange={setNs} options={v1.map((n): [string, string] => [`${n.namespace.database}/${n.namespace.retentionPolicy}`, `${n.namespace.database} / ${n.namespace.retentionPolicy}`])}
              hint={v1.length ? undefined : 'No namespace holds data of your devices yet.'} />
            <TextInput label="Measurement" value={measurement} onInput={setMeasurement} />
            <TextInput label="Fields" value={fields} onInput={setFields} hint="Comma-separated; each is a line on the plot." />
          </>
        )}
        <Select label="Range" value={range} onChange={setRange} options={RANGES} />
        {range === 'custom' && (
          <>
            <TextInput label="From" type="datetime-local" value={from} onInput={setFrom} />
            <TextInput label="To" type="datetime-local" value={to} onInput={setTo} />
          </>
        )}
        <div class="field"><span class="label-spacer" aria-hidden="true">&nbsp;</span><button type="submit" class="primary" disabled={run.busy}>{run.busy ? 'Querying…' : 'Plot'}</button></div>
      </form>
      <ErrorNote error={run.error ?? namespaces.error} context="Telemetry query" />
      {usage && (
        <p class="muted small" aria-live="polite">
          {usage.queries} quer{usage.queries === 1 ? 'y' : 'ies'} · cost <strong>{usage.cost}</strong> · bucket capacity remaining <strong>{usage.remaining}</strong>
          {plot?.aggregated && ' · showing means of 200 buckets'}
        </p>
      )}
      {plot && <Plot data={plot} />}
    </Section>
  );
}

function rawToPlot(result: StatementResult, fields: string[]): PlotData {
  const tables: uPlot.AlignedData[] = [];
  const labels: string[] = [];
  for (const s of result.series ?? []) {
    const xs = s.values.map((row) => Date.parse(String(row[0])) / 1000);
    const extra = Object.entries(s.tags).filter(([k]) => k !== 'nodeId').map(([k, v]) => `${k}=${v}`).join(',');
    for (const f of fields) {
      const col = s.columns.indexOf(f);
      if (col < 0) continue;
      tables.push([xs, s.values.map((row) => (typeof row[col] === 'number' ? row[col] as number : null))]);
      labels.push(extra ? `${f} {${extra}}` : f);
    }
  }
  if (tables.length === 0) return { x: [], lines: [], aggregated: false };
  const joined = uPlot.join(tables);
  return { x: joined[0] as number[], lines: labels.map((label, i) => ({ label, values: joined[i + 1] as (number | null)[] })), aggregated: false };
}

function bucketsToPlot(results: StatementResult[], edges: number[], fields: string[]): PlotData {
  const lines = new Map<string, (number | null)[]>();
  results.forEach((r, i) => {
    for (const s of r.series ?? []) {
      const extra = Object.entries(s.tags).filter(([k]) => k !== 'nodeId').map(([k, v]) => `${k}=${v}`).join(',');
      for (const f of fields) {
        const label = `mean ${f}${extra ? ` {${extra}}` : ''}`;
        if (!lines.has(label)) lines.set(label, new Array(edges.length).fill(null));
        const col = s.columns.indexOf(`mean_${f}`);
        const v = s.values[0]?.[col];
        lines.get(label)![i] = typeof v === 'number' ? v : null;
      }
    }
  });
  return { x: edges.map((e) => e / 1000), lines: [...lines].map(([label, values]) => ({ label, values })), aggregated: true };
}

function Plot({ data }: { data: PlotData }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el || data.lines.length === 0) return;
    const chart = new uPlot({
      width: Math.max(320, el.clientWidth),
      height: 320,
      series: [{}, ...data.lines.map((l, i) => ({ label: l.label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: data.aggregated, points: { show: data.x.length < 80 } }))],
      axes: [{}, { size: 60 }],
      legend: { live: true },
    }, [data.x, ...data.lines.map((l) => l.values)], el);
    const onResize = () => chart.setSize({ width: Math.max(320, el.clientWidth), height: 320 });
    window.addEventListener('resize', onResize);
    return () => { window.removeEventListener('resize', onResize); chart.destroy(); };
  }, [data]);
  if (data.lines.length === 0) return <p class="muted">No data in this range.</p>;
  const points = data.lines.reduce((n, l) => n + l.values.filter((v) => v !== null).length, 0);
  return <figure class="plot"><div ref={host} role="img" aria-label={`Plot of ${data.lines.map((l) => l.label).join(', ')}: ${points} values`} /></figure>;
}
