// estimateCost.ts — the cost gridkeeper charges for a telemetry query request (POST /v1/telemetry/query).
//
// Usage (Node 22.6+: add --experimental-strip-types before 23.6; Node 20: transpile it first, e.g. with esbuild):
//   node estimateCost.ts [FILE] [--now MS] [--jsonl]
// Reads the request body (one query or an array of queries) as JSON from FILE or stdin and prints
//   {"cost": N, "estimatedDatapoints": N, "scannedShards": N}
// --now MS   compute as if the current time were MS (unix ms), for reproducible results
// --jsonl    the input holds one body per line; prints one result per line
//
// Rules (gridkeeper docs/api.md#cost): a query reads [from, to) from where.time (>= v: from = v; > v: from = v + 1;
// < v: to = v; <= v: to = v + 1; = v: both); conditions intersect; `to` defaults to now; no lower bound means the
// namespace's worst-case range ending at `to`. Datapoints = min(limit, ceil(range / interval)); shards = epoch-aligned
// shard windows the range overlaps. cost = ceil((100 + 50·queries + datapoints + 200·shards) / 100).
// Everything is integer arithmetic on values below 2^53, so the result is exact.
import { readFileSync } from 'node:fs';

type Result = { cost: number; estimatedDatapoints: number; scannedShards: number };

const DAY = 86_400_000;
// [name suffix, interval ms, shard duration ms, worst-case range ms]; the name is the retention policy / bucket / IOx value.
const PROFILES: Array<[string, number, number, number]> = [
  ['_one_s', 1_000, DAY, 30 * DAY],
  ['_one_m', 60_000, 7 * DAY, 400 * DAY],
  ['_one_h', 3_600_000, 90 * DAY, 3650 * DAY],
];
const DEFAULT_PROFILE: [string, number, number, number] = ['', 10_000, DAY, 30 * DAY];

const MIN_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
const ISO = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$/;

function floorDiv(a: number, b: number): number {
  const r = a % b;
  return r < 0 ? (a - r) / b - 1 : (a - r) / b;
}

function ceilDiv(a: number, b: number): number {
  const r = a % b;
  return r > 0 ? (a - r) / b + 1 : (a - r) / b;
}

function daysFromCivil(y: number, m: number, d: number): number {
  if (m <= 2) y -= 1;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

// Unix ms from a number or an ISO 8601 string (no offset means UTC; digits after the milliseconds are dropped).
function timeMs(value: unknown): number {
  let ms: number | undefined;
  if (typeof value === 'number' && Number.isInteger(value)) ms = value;
  const m = typeof value === 'string' ? ISO.exec(value) : null;
  if (m !== null) {
    const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number);
    const frac = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
    const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
    const monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
    const zone = m[8] ?? 'Z';
    const [oh, om] = zone === 'Z' ? [0, 0] : [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))];
    const offset = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
    const valid = mo >= 1 && mo <= 12 && d >= 1 && d <= monthDays && h <= 23 && mi <= 59 && s <= 59 && oh <= 23 && om <= 59;
    if (valid) ms = (((daysFromCivil(y, mo, d) * 24 + h) * 60 + mi - offset) * 60 + s) * 1000 + frac;
  }
  if (ms === undefined || ms < MIN_MS || ms > MAX_MS) throw new Error(`invalid time value: ${JSON.stringify(value)}`);
  return ms;
}

function estimateQuery(query: any, now: number): [number, number] {
  const ns = query.from.namespace ?? query.from; // the legacy form carries database/retentionPolicy directly
  const name: string = ns.version === '2' ? ns.bucket : ns.version === 'IOx' ? ns.value : ns.retentionPolicy;
  const [, interval, shard, worstCase] = PROFILES.find(([suffix]) => name.endsWith(suffix)) ?? DEFAULT_PROFILE;
  let from: number | undefined;
  let to: number | undefined;
  for (const { operator, value } of query.where?.time ?? []) {
    const v = timeMs(value);
    if (operator === '>=' || operator === '=') from = Math.max(from ?? v, v);
    if (operator === '>') from = Math.max(from ?? v + 1, v + 1);
    if (operator === '<') to = Math.min(to ?? v, v);
    if (operator === '<=' || operator === '=') to = Math.min(to ?? v + 1, v + 1);
  }
  to ??= now;
  from ??= to - worstCase;
  if (from >= to) return [0, 0];
  const points = Math.min(query.limit ?? Infinity, ceilDiv(to - from, interval));
  return [points, floorDiv(to - 1, shard) - floorDiv(from, shard) + 1];
}

function estimateRequest(body: unknown, now: number): Result {
  const queries = Array.isArray(body) ? body : [body];
  let points = 0;
  let shards = 0;
  for (const query of queries) {
    const [p, s] = estimateQuery(query, now);
    points += p;
    shards += s;
  }
  const hundredths = 100 + 50 * queries.length + points + 200 * shards;
  return { cost: ceilDiv(hundredths, 100), estimatedDatapoints: points, scannedShards: shards };
}

function format(r: Result): string {
  return `{"cost": ${r.cost}, "estimatedDatapoints": ${r.estimatedDatapoints}, "scannedShards": ${r.scannedShards}}`;
}

function main(argv: string[]): void {
  let file: string | undefined;
  let now = Date.now();
  let jsonl = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--now') now = Number(argv[++i]);
    else if (argv[i] === '--jsonl') jsonl = true;
    else file = argv[i];
  }
  if (!Number.isSafeInteger(now)) throw new Error('--now expects integer unix milliseconds');
  const text = readFileSync(file ?? 0, 'utf8'); // fd 0 = stdin
  const bodies = jsonl ? text.split('\n').filter((line) => line.trim() !== '') : [text];
  process.stdout.write(bodies.map((body) => format(estimateRequest(JSON.parse(body), now))).join('\n') + '\n');
}

try {
  main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`estimateCost: ${(err as Error).message}\n`);
  process.exitCode = 2;
}
