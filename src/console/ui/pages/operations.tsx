// Operations (root members): version and health, database size and request rates from /metrics, link to /docs.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../api.ts';
import { ErrorNote, Loading, Section } from '../components.tsx';
import { parseMetrics } from '../metrics-text.ts';

interface Sample { at: number; series: Map<string, number> }

const labels = (key: string): Record<string, string> => Object.fromEntries([...key.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
const bytes = (n: number) => (n > 1 << 30 ? `${(n / (1 << 30)).toFixed(2)} GiB` : n > 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / 1024).toFixed(0)} KiB`);

export function Operations() {
  const [health, setHealth] = useState<{ status: string; version: string; backend?: string } | undefined>();
  const [samples, setSamples] = useState<Sample[]>([]);
  const [error, setError] = useState<unknown>();
  const timer = useRef<number>();
  useEffect(() => {
    const poll = async () => {
      try {
        const [h, m] = await Promise.all([get<{ status: string; version: string; backend?: string }>('/healthz', { token: 'none' }), get<string>('/metrics', { token: 'none' })]);
        setHealth(h);
        setSamples((s) => [...s.slice(-1), { at: Date.now(), series: parseMetrics(m) }]);
        setError(undefined);
      } catch (err) { setError(err); }
    };
    void poll();
    timer.current = window.setInterval(() => void poll(), 5000);
    return () => window.clearInterval(timer.current);
  }, []);
  const last = samples[samples.length - 1];
  const prev = samples.length > 1 ? samples[0] : undefined;
  const rows = last ? [...last.series].filter(([k]) => k.startsWith('gridkeeper_http_requests_total{')).map(([k, total]) => {
    const l = labels(k);
    const rate = prev ? ((total - (prev.series.get(k) ?? 0)) / ((last.at - prev.at) / 1000)) * 60 : undefined;
    const sum = last.series.get(`gridkeeper_http_request_duration_seconds_sum{method="${l.method}",route="${l.route}"}`);
    const count = last.series.get(`gridkeeper_http_request_duration_seconds_count{method="${l.method}",route="${l.route}"}`);
    return { key: k, method: l.method, route: l.route, status: l.status, total, rate, avgMs: sum !== undefined && count ? (sum / count) * 1000 : undefined };
  }).sort((a, b) => (b.rate ?? 0) - (a.rate ?? 0) || b.total - a.total) : [];
  const dbSize = last?.series.get('gridkeeper_database_size_bytes');
  const points = last?.series.get('gridkeeper_telemetry_points_written_total');
  const rejected = last ? [...last.series].filter(([k]) => k.startsWith('gridkeeper_ratelimit_rejections_total')).reduce((n, [, v]) => n + v, 0) : 0;
  return (
    <div>
      <div class="page-head"><h1>Operations</h1><div class="actions"><a class="button" href="/docs">API reference</a><a class="button" href="/openapi.json">OpenAPI document</a></div></div>
      <ErrorNote error={error} context="Polling /healthz and /metrics" />
      {!health || !last ? <Loading /> : (
        <>
          <div class="tiles">
            <div class="tile"><span class="tile-label">Status</span><span class="tile-value">{health.status === 'ok' ? 'Healthy' : health.status}</span></div>
            <div class="tile"><span class="tile-label">Version</span><span class="tile-value mono">{health.version}</span></div>
            <div class="tile"><span class="tile-label">Backend</span><span class="tile-value">{health?.backend === 'sqlite' ? 'SQLite, embedded' : health?.backend ?? '—'}</span></div>
            <div class="tile"><span class="tile-label">Database size</span><span class="tile-value">{dbSize !== undefined ? bytes(dbSize) : '—'}</span></div>
            <div class="tile"><span class="tile-label">Telemetry points written</span><span class="tile-value">{(points ?? 0).toLocaleString()}</span></div>
            <div class="tile"><span class="tile-label">Queries refused by the bucket</span><span class="tile-value">{rejected.toLocaleString()}</span></div>
          </div>
          <Section title="Requests" actions={<span class="muted small">rates over the last {prev ? Math.round((last.at - prev.at) / 1000) : '–'} s, refreshed every 5 s</span>}>
            <div class="table-wrap">
              <table class="grid">
                <thead><tr><th scope="col">Method</th><th scope="col">Route</th><th scope="col">Status</th><th scope="col" class="num">Total</th><th scope="col" class="num">Per minute</th><th scope="col" class="num">Mean latency</th></tr></thead>
                <tbody>
                  {rows.slice(0, 40).map((r) => (
                    <tr key={r.key}>
                      <td>{r.method}</td><td class="mono">{r.route}</td><td>{r.status}</td><td class="num">{r.total.toLocaleString()}</td>
                      <td class="num">{r.rate === undefined ? '…' : r.rate.toFixed(1)}</td><td class="num">{r.avgMs === undefined ? '—' : `${r.avgMs.toFixed(1)} ms`}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Section>
        </>
      )}
    </div>
  );
}
