// InfluxDB's series order: series keys (`measurement,k=v,...`, tags sorted by key), compared as text.
import type { SeriesRef } from './reads-types.ts';

/** Series rows (id, node_id, tags as stored) as SeriesRefs in series-key order (InfluxDB's). */
export function bySeriesKey(measurement: string, rows: ReadonlyArray<readonly [number, string, string]>): SeriesRef[] {
  const list = rows.map(([id, nodeId, text]) => {
    const tags = JSON.parse(text) as Record<string, string>;
    return { id, nodeId, tags, key: seriesKeyOf(measurement, tags) };
  });
  list.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return list.map(({ id, nodeId, tags }) => ({ id, nodeId, tags }));
}

/** InfluxDB's series key: `measurement,k=v,...` with tags sorted by key and `,`, `=`, ` ` escaped. */
export function seriesKeyOf(measurement: string, tags: Record<string, string>): string {
  const esc = (s: string) => s.replace(/([, =])/g, '\\$1');
  let key = measurement.replace(/([, ])/g, '\\$1');
  for (const k of Object.keys(tags).sort()) key += `,${esc(k)}=${esc(tags[k])}`;
  return key;
}
