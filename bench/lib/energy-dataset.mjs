// The telemetry benchmarks' data set (bench/telemetry/vs-influx.mjs, bench/influxql/vs-influx.mjs): `series` series of
// measurement `energy` (tags nodeId, site; fields power, voltage, current as floats, energy and state as integers),
// `points / series` timestamps `stepMs` apart ending now, written in line-protocol batches of `batch` lines
// (nanosecond timestamps). Deterministic: the same options give the same lines.
export function energyDataset({ points, series, batch, stepMs }) {
  const nodeId = (s) => `node-${String(s).padStart(3, '0')}`;
  const timestamps = points / series;
  const startMs = Math.floor(Date.now() / 1000) * 1000 - timestamps * stepMs;
  const endMs = startMs + timestamps * stepMs;
  /** the text of batch number b (0 .. points / batch - 1) */
  function batchBody(b) {
    const perBatch = batch / series;
    const lines = [];
    for (let k = 0; k < perBatch; k++) {
      const idx = b * perBatch + k;
      const ts = `${startMs + idx * stepMs}000000`;
      for (let s = 0; s < series; s++) {
        const x = (idx * 31 + s * 17) % 1000;
        lines.push(`energy,nodeId=${nodeId(s)},site=site-${s % 10} power=${(x * 1.25).toFixed(2)},voltage=${(230 + x / 1000).toFixed(3)},`
          + `current=${(x / 97).toFixed(4)},energy=${idx * 10 + s}i,state=${x % 4}i ${ts}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }
  return { nodeId, startMs, endMs, batchBody };
}
