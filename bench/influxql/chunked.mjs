// Cutting an InfluxQL answer into chunked lines (src/influx/chunked.ts): ms and MB/s for an answer of 10 series x
// 20,000 rows (time, float, integer, string) at chunk sizes 10,000 (InfluxDB's default), 100 and 1; the same answer
// cut through JSON.parse + JSON.stringify beside it (what the raw walker avoids, and which loses epoch=ns digits); the
// heap retained while the lines are made one at a time (the answer's text is held anyway).
// Usage: node --expose-gc --import ./test/support/register.mjs bench/influxql/chunked.mjs
import { answerLines } from '../../src/influx/chunked.ts';

const SERIES = 10;
const ROWS = 20_000;
const t0 = 1_767_222_000_000_000_000n;
const series = Array.from({ length: SERIES }, (_, s) => {
  const rows = [];
  for (let i = 0; i < ROWS; i++) rows.push(`[${t0 + BigInt(i) * 10_000_000_000n},${(i * 0.37 + s).toFixed(3)},${i},"s${i % 7}"]`);
  return `{"name":"energy","tags":{"nodeId":"n${s}"},"columns":["time","power","count","state"],"values":[${rows.join(',')}]}`;
});
const text = `{"results":[{"statement_id":0,"series":[${series.join(',')}]}]}`;
const mb = text.length / 1e6;

function time(fn, rounds = 5) {
  const ms = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    fn();
    ms.push(performance.now() - start);
  }
  return ms.sort((a, b) => a - b)[Math.floor(rounds / 2)];
}

function drain(size) {
  let bytes = 0;
  let lines = 0;
  const it = answerLines(text, ['rows'], size);
  for (let r = it.next(); !r.done; r = it.next()) { bytes += r.value.length; lines++; }
  return { bytes, lines };
}

console.log(`answer: ${SERIES} series x ${ROWS} rows, ${mb.toFixed(1)} MB of JSON text`);
for (const size of [10_000, 100, 1]) {
  const { lines, bytes } = drain(size);
  const ms = time(() => drain(size));
  console.log(`chunk_size=${String(size).padEnd(6)} ${String(lines).padStart(7)} lines, ${(bytes / 1e6).toFixed(1)} MB out: ${ms.toFixed(0)} ms (${(mb / ms * 1000).toFixed(0)} MB/s in)`);
}
const parsed = time(() => {
  const doc = JSON.parse(text);
  for (const s of doc.results[0].series) {
    for (let i = 0; i < s.values.length; i += 10_000) JSON.stringify({ results: [{ statement_id: 0, series: [{ ...s, values: s.values.slice(i, i + 10_000) }] }] });
  }
});
console.log(`JSON.parse + JSON.stringify at 10000 (loses epoch=ns digits): ${parsed.toFixed(0)} ms`);

// retained, not garbage: collected every 100 lines (run with --expose-gc)
if (globalThis.gc === undefined) throw new Error('run with node --expose-gc');
globalThis.gc();
const before = process.memoryUsage().heapUsed;
let peak = before;
const it = answerLines(text, ['rows'], 100);
for (let r = it.next(), n = 0; !r.done; r = it.next(), n++) {
  if (n % 100 === 0) { globalThis.gc(); peak = Math.max(peak, process.memoryUsage().heapUsed); }
}
console.log(`heap retained beside the answer's text (${mb.toFixed(1)} MB) while cutting at 100 rows: at most +${((peak - before) / 1e6).toFixed(2)} MB`);
