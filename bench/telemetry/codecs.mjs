// The block codecs (src/telemetry/blocks/) against the alternatives, on the history data set (lib/history-dataset.mjs:
// 20 devices, 30 days, a point every 10 s, six fields): one block per device and day, as sealing would make them.
// Prints, per field and for the whole set, bytes per value of:
//   blocks   our codec of the field (column.ts; the times with timestamps.ts)
//   float64  plain 8 bytes a value
//   xor      Gorilla XOR coding alone (gorilla.ts), of every field as doubles
//   varint   delta + zig-zag varint: of the integers, of floats as integers of tenths (what a decimal-unaware integer
//            codec gets at best), of the milliseconds
//   deflate  node:zlib deflate (level 6) of the raw float64 bytes of each block's column
//   brotli   node:zlib brotli (quality 11) of the same, on every SAMPLE-th block (it is slow)
// then the whole blocks with their headers and the statistics of every field; then encode and decode speeds (values a
// second, the fastest of ROUNDS, on every SAMPLE-th block) of each codec, and the time to decode one column of 8,640 floats.
// Run: node --import ./test/support/register.mjs bench/telemetry/codecs.mjs   (DEVICES, DAYS, ROUNDS=7, SAMPLE=10)
import { brotliCompressSync, brotliDecompressSync, constants, deflateSync, inflateSync } from 'node:zlib';
import { loadavg } from 'node:os';
import { historyDataset } from '../lib/history-dataset.mjs';
import { columnStats, decodeBlock, encodeBlock, encodeStats } from '../../src/telemetry/blocks/index.ts';
import { ByteReader, ByteWriter } from '../../src/telemetry/blocks/bits.ts';
import { decodeColumn, encodeColumn } from '../../src/telemetry/blocks/column.ts';
import { decodeTimes, encodeTimes } from '../../src/telemetry/blocks/timestamps.ts';
import { decodeXor, encodeXor } from '../../src/telemetry/blocks/gorilla.ts';
import { FLOAT, INTEGER } from '../../src/telemetry/line-protocol/line-scanner.ts';

const DEVICES = Number(process.env.DEVICES ?? 20);
const DAYS = Number(process.env.DAYS ?? 30);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const SAMPLE = Number(process.env.SAMPLE ?? 10);

const dataset = historyDataset({ devices: DEVICES, days: DAYS });
const FIELDS = dataset.fields;
const TIME = 'time';
const CODECS = ['blocks', 'float64', 'xor', 'varint', 'deflate', 'brotli'];

/** delta + zig-zag varint of integers (floats scaled to tenths) */
function encodeVarint(values, scale) {
  const w = new ByteWriter(values.length * 2);
  let prev = 0;
  for (let i = 0; i < values.length; i++) {
    const v = Math.round(values[i] * scale);
    w.svarint(v - prev);
    prev = v;
  }
  return w.finish();
}

function decodeVarint(bytes, n, scale) {
  const r = new ByteReader(bytes);
  const out = new Float64Array(n);
  let prev = 0;
  for (let i = 0; i < n; i++) {
    prev += r.svarint();
    out[i] = scale === 1 ? prev : prev / scale;
  }
  return out;
}

const raw = (values) => new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: 8640 * 8 } };

/** Each codec's encode and decode of one column: (values) -> bytes, (bytes, n) -> values */
const codecs = {
  blocks: {
    encode: (values, kind) => {
      const w = new ByteWriter(values.length);
      encodeColumn(w, { kind, present: undefined, values }, values.length);
      return w.finish();
    },
    decode: (bytes, n) => decodeColumn(new ByteReader(bytes), n),
  },
  xor: {
    encode: (values) => {
      const w = new ByteWriter(values.length * 4);
      encodeXor(w, values);
      return w.finish();
    },
    decode: (bytes, n) => decodeXor(new ByteReader(bytes), n),
  },
  varint: {
    encode: (values, kind) => encodeVarint(values, kind === FLOAT ? 10 : 1),
    decode: (bytes, n, kind) => decodeVarint(bytes, n, kind === FLOAT ? 10 : 1),
  },
  deflate: { encode: (values) => deflateSync(raw(values)), decode: (bytes) => new Float64Array(inflateSync(bytes).buffer) },
  brotli: { encode: (values) => brotliCompressSync(raw(values), BROTLI), decode: (bytes) => brotliDecompressSync(bytes) },
};
const times = {
  encode: (ms) => {
    const w = new ByteWriter(64);
    encodeTimes(w, ms, new Int32Array(ms.length));
    return w.finish();
  },
  decode: (bytes, n) => decodeTimes(new ByteReader(bytes), n),
};

// --- sizes -------------------------------------------------------------------------------------------------------
console.log(`history data set: ${DEVICES} devices x ${DAYS} days, a point every 10 s, ${FIELDS.length} fields; load average ${loadavg()[0].toFixed(1)}`);

const kindOf = (name) => (FIELDS.find((f) => f.name === name).kind === 'float' ? FLOAT : INTEGER);
const bytes = {}; // bytes[field][codec]
const counted = {}; // values counted[field][codec] (brotli: sampled)
const add = (field, codec, size, n) => {
  (bytes[field] ??= {})[codec] = (bytes[field][codec] ?? 0) + size;
  (counted[field] ??= {})[codec] = (counted[field][codec] ?? 0) + n;
};
const columnsOf = (b) => FIELDS.map((f) => ({ kind: kindOf(f.name), present: undefined, values: b.values[f.name] }));
let blockBytes = 0;
let statsBytes = 0;
let values = 0;
let blockCount = 0;
const sample = []; // every SAMPLE-th block: the speed runs
const made = Date.now();
for (const b of dataset.seriesColumns()) {
  const i = blockCount++;
  const n = b.ms.length;
  const columns = columnsOf(b);
  const block = encodeBlock({ ms: b.ms, sub: new Int32Array(n), columns });
  blockBytes += block.length;
  statsBytes += encodeStats(columns.map((c) => columnStats(b.ms, new Int32Array(n), c))).length;
  values += n * FIELDS.length;
  const sampled = i % SAMPLE === 0;
  if (sampled) sample.push(b);
  for (const [name, v] of [[TIME, b.ms], ...FIELDS.map((f) => [f.name, b.values[f.name]])]) {
    const kind = name === TIME ? INTEGER : kindOf(name);
    add(name, 'blocks', (name === TIME ? times.encode(v) : codecs.blocks.encode(v, kind)).length, n);
    add(name, 'float64', n * 8, n);
    for (const codec of ['xor', 'varint', 'deflate']) add(name, codec, codecs[codec].encode(v, kind).length, n);
    if (sampled) add(name, 'brotli', codecs.brotli.encode(v, kind).length, n);
  }
}
console.log(`${blockCount} blocks generated and coded every way in ${((Date.now() - made) / 1000).toFixed(0)} s\n`);

const per = (field, codec) => bytes[field][codec] / counted[field][codec];
const pad = (s, w) => String(s).padStart(w);
console.log('bytes per value (time: per row)');
console.log(['field'.padEnd(10), ...CODECS.map((c) => pad(c, 9))].join(''));
for (const name of [...FIELDS.map((f) => f.name), TIME]) {
  console.log([name.padEnd(10), ...CODECS.map((c) => pad(per(name, c).toFixed(3), 9))].join(''));
}
// the whole set: every field and the times, per field value
const whole = (codec) => [...FIELDS.map((f) => f.name), TIME].reduce((sum, name) => sum + per(name, codec), 0) / FIELDS.length;
console.log(['all'.padEnd(10), ...CODECS.map((c) => pad(whole(c).toFixed(3), 9))].join(''), '  (every field value, the times shared among them)');
console.log(`\nwhole blocks (headers, times, columns): ${(blockBytes / values).toFixed(3)} bytes per value; `
  + `statistics of every field: ${(statsBytes / values).toFixed(4)} more (${Math.round(statsBytes / blockCount)} bytes a block); `
  + `${blockCount} blocks, ${(blockBytes / 2 ** 20).toFixed(1)} MB for ${values.toLocaleString('en')} values`);

// --- speeds ------------------------------------------------------------------------------------------------------
/**
 * Values a second of run() over n values, from the fastest of ROUNDS runs after a warm-up (fewer when they pass 3 s),
 * by the process's CPU time and by the wall clock. On a shared machine the wall clock mostly measures the wait for a
 * core, and even CPU time grows with what the other core's work does to the caches: the fastest run is the cleanest.
 */
function rate(n, run) {
  run();
  let cpu = Infinity;
  let wall = Infinity;
  const started = performance.now();
  for (let r = 0; r < ROUNDS && (r === 0 || performance.now() - started < 3000); r++) {
    const c = process.cpuUsage();
    const t = performance.now();
    run();
    wall = Math.min(wall, performance.now() - t);
    const used = process.cpuUsage(c);
    cpu = Math.min(cpu, (used.user + used.system) / 1000);
  }
  return { cpu: n / (cpu / 1000), wall: n / (wall / 1000) };
}
const M = (v) => `${(v / 1e6).toFixed(1)}`.padStart(9);
const both = ({ cpu, wall }) => `${(cpu / 1e6).toFixed(1)} (${(wall / 1e6).toFixed(1)})`;

console.log(`\nmillions of values a second by CPU time (the fastest of up to ${ROUNDS} runs over ${sample.length} blocks; load average ${loadavg()[0].toFixed(1)})`);
console.log(['field'.padEnd(10), ...['blocks', 'xor', 'varint', 'deflate', 'brotli'].flatMap((c) => [pad(`${c} enc`, 13), pad('dec', 9)])].join(''));
for (const f of [...FIELDS, { name: TIME }]) {
  const kind = f.name === TIME ? INTEGER : kindOf(f.name);
  const columnOf = (b) => (f.name === TIME ? b.ms : b.values[f.name]);
  const row = [f.name.padEnd(10)];
  for (const c of ['blocks', 'xor', 'varint', 'deflate', 'brotli']) {
    const codec = c === 'blocks' && f.name === TIME ? times : codecs[c];
    const n = sample.reduce((sum, b) => sum + b.ms.length, 0);
    const encoded = sample.map((b) => codec.encode(columnOf(b), kind));
    row.push(M(rate(n, () => sample.forEach((b) => codec.encode(columnOf(b), kind))).cpu).padStart(13));
    row.push(M(rate(n, () => encoded.forEach((e, i) => codec.decode(e, sample[i].ms.length, kind))).cpu));
  }
  console.log(row.join(''));
}
const sampleValues = sample.reduce((sum, b) => sum + b.ms.length * FIELDS.length, 0);
const encodedBlocks = sample.map((b) => encodeBlock({ ms: b.ms, sub: new Int32Array(b.ms.length), columns: columnsOf(b) }));
const encodeAll = rate(sampleValues, () => sample.forEach((b) => encodeBlock({ ms: b.ms, sub: new Int32Array(b.ms.length), columns: columnsOf(b) })));
const decodeAll = rate(sampleValues, () => encodedBlocks.forEach((e) => decodeBlock(e)));
console.log(`whole blocks, millions of values a second by CPU time (by the wall clock): encode ${both(encodeAll)}, decode ${both(decodeAll)} (times included)`);

// one column of 8,640 floats, as a query decodes it: the fastest of ROUNDS runs of 500 decodes
for (const name of ['grid', 'solar', 'soc']) {
  const one = codecs.blocks.encode(sample[Math.floor(sample.length / 2)].values[name], FLOAT);
  const { cpu, wall } = rate(500, () => {
    for (let i = 0; i < 500; i++) codecs.blocks.decode(one, 8640);
  });
  console.log(`one ${name} column of 8,640 floats (${one.length} bytes): decoded in ${(1e6 / cpu).toFixed(1)} us of CPU (${(1e6 / wall).toFixed(1)} us by the wall clock)`);
}
