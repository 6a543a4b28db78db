// The server's dry-run cost, the TS script and the Python script — both as served by /assets — agree exactly on
// thousands of random request bodies (docs/api.md#cost). The clock is pinned and the scripts get the same --now; each
// script runs once over all bodies (--jsonl).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transform } from 'esbuild';
import fc from 'fast-check';
import { makeTestApp, type TestApp } from '../support/app.ts';
import { MAX_TIME_MS, MIN_TIME_MS } from '../../src/telemetry/cost.ts';

const NOW = Date.UTC(2026, 2, 29, 1, 2, 3, 456);
const DAY = 86_400_000;
const RUNS = 3000;

let dir = '';
let t: TestApp;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gridkeeper-agreement-'));
  t = await makeTestApp({ now: NOW });
});
after(async () => { await t.close(); rmSync(dir, { recursive: true, force: true }); });

// ---- random bodies the server accepts ----

const SHARD_UNITS = [1000, 60_000, 3_600_000, DAY, 7 * DAY, 90 * DAY];
const instant = fc.oneof(
  // near now, where open-ended ranges end
  { arbitrary: fc.integer({ min: NOW - 3 * DAY, max: NOW + DAY }), weight: 3 },
  // on and around interval and shard boundaries
  { arbitrary: fc.tuple(fc.integer({ min: -400, max: 400 }), fc.constantFrom(...SHARD_UNITS), fc.integer({ min: -2, max: 2 }))
    .map(([k, unit, d]) => Math.floor(NOW / unit) * unit + k * unit + d), weight: 3 },
  // years away, before the epoch, at the ends of the accepted span
  { arbitrary: fc.integer({ min: NOW - 4000 * DAY, max: NOW + 400 * DAY }), weight: 1 },
  { arbitrary: fc.integer({ min: -1000 * DAY, max: 1000 * DAY }), weight: 1 },
  { arbitrary: fc.constantFrom(MIN_TIME_MS, MAX_TIME_MS, MIN_TIME_MS + 999, MAX_TIME_MS - 999, 0, NOW, NOW - 1), weight: 1 },
);

function iso(ms: number, form: number, offsetMinutes: number): number | string {
  const z = new Date(ms).toISOString();
  switch (form) {
    case 0: return z;
    case 1: return z.slice(0, 19) + 'Z';
    case 2: return z.slice(0, 23); // no offset: UTC
    case 3: return z.slice(0, 10);
    case 4: return z.slice(0, 16) + 'Z';
    case 5: return `${z.slice(0, 23)}987654Z`; // sub-millisecond digits are dropped
    case 6: { // the same instant in another offset
      const local = ms + offsetMinutes * 60_000;
      if (local < MIN_TIME_MS || local > MAX_TIME_MS) return ms;
      const a = Math.abs(offsetMinutes);
      return `${new Date(local).toISOString().slice(0, 23)}${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
    }
    default: return ms;
  }
}
const timeValue = fc.tuple(instant, fc.integer({ min: 0, max: 9 }), fc.integer({ min: -14 * 60, max: 14 * 60 }))
  .map(([ms, form, off]) => iso(ms, form, off));
const condition = fc.record({ operator: fc.constantFrom('<', '<=', '>', '>=', '='), value: timeValue });

const policy = fc.constantFrom('autogen', 'raw', 'x_one_s', 'x_one_m', 'x_one_h', '_one_h', 'one_m', 'a_one_s_b', 'y_ONE_S');
const from = fc.oneof(
  fc.record({ measurement: fc.constantFrom('power', 'energy'), database: fc.constantFrom('site', 'db_one_h'), retentionPolicy: policy }),
  fc.record({ measurement: fc.constant('power'), namespace: fc.record({ version: fc.constant('1'), database: fc.constant('site'), retentionPolicy: policy }) }),
  fc.record({ measurement: fc.constant('power'), namespace: fc.record({ version: fc.constant('2'), organization: fc.constant('org_one_s'), bucket: policy }) }),
  fc.record({ measurement: fc.constant('power'), namespace: fc.record({ version: fc.constant('IOx'), value: policy }) }),
);
const query = fc.record({
  select: fc.constantFrom(['power'], ['a', 'b', { field: 'c', function: 'mean' }]),
  from,
  where: fc.record({ time: fc.array(condition, { maxLength: 2 }), tags: fc.constant({ nodeId: 'meter-1' }) }, { requiredKeys: [] }),
  orderBy: fc.constantFrom('ASC', 'DESC'),
  limit: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 1_000_000_000 })),
}, { requiredKeys: ['select', 'from'] });
const body = fc.oneof({ arbitrary: query, weight: 3 }, { arbitrary: fc.array(query, { minLength: 1, maxLength: 25 }), weight: 2 });

function runScript(cmd: string, script: string, file: string): string[] {
  const r = spawnSync(cmd, [script, file, '--now', String(NOW), '--jsonl'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.stderr, '', `${script}: ${r.stderr}`);
  assert.equal(r.status, 0, script);
  return r.stdout.trimEnd().split('\n');
}

describe('cost agreement: server, served TS script, served Python script', () => {
  it(`agree exactly on ${RUNS} random bodies`, async () => {
    const bodies: unknown[] = fc.sample(body, { seed: 20260329, numRuns: RUNS });
    // the extremes are in for sure: the widest range, and a batch of 1000
    bodies.push(
      { select: ['p'], from: { measurement: 'm', database: 'd', retentionPolicy: 'r_one_s' }, where: { time: [{ operator: '>=', value: MIN_TIME_MS }, { operator: '<=', value: MAX_TIME_MS }] } },
      Array.from({ length: 1000 }, (_, i) => (bodies[i] instanceof Array ? (bodies[i] as unknown[])[0] : bodies[i])),
    );

    const user = await userWithToken();
    const server: string[] = [];
    for (const [i, b] of bodies.entries()) {
      const res = await t.request('POST', '/v1/telemetry/query?dryRun=true', { token: user, body: b });
      assert.equal(res.status, 200, `body ${i}: ${res.text}`);
      const { cost, estimatedDatapoints, scannedShards } = res.body;
      server.push(`{"cost": ${cost}, "estimatedDatapoints": ${estimatedDatapoints}, "scannedShards": ${scannedShards}}`);
    }
    assert.equal(t.clock.now(), NOW);

    const ts = await t.request('GET', '/assets/estimateCost.ts');
    const py = await t.request('GET', '/assets/estimateCost.py');
    const jsFile = join(dir, 'estimateCost.mjs');
    const pyFile = join(dir, 'estimateCost.py');
    // Node 20 cannot run TypeScript: strip the types as a client on Node 20 would.
    writeFileSync(jsFile, (await transform(ts.text, { loader: 'ts', format: 'esm' })).code);
    writeFileSync(pyFile, py.text);
    const input = join(dir, 'bodies.jsonl');
    writeFileSync(input, bodies.map((b) => JSON.stringify(b)).join('\n') + '\n');

    for (const [name, lines] of [['ts', runScript(process.execPath, jsFile, input)], ['py', runScript('python3', pyFile, input)]] as const) {
      assert.equal(lines.length, bodies.length, name);
      lines.forEach((line, i) => assert.equal(line, server[i], `${name} disagrees with the server on body ${i}: ${JSON.stringify(bodies[i])}`));
    }
    // the widest range: 0000-01-01 .. 9999-12-31 at 1 s over daily shards
    assert.equal(server[RUNS], '{"cost": 3163000052, "estimatedDatapoints": 315569520000, "scannedShards": 3652425}');
    // the sample is not degenerate: costs spread over orders of magnitude, empty ranges included
    const costs = server.map((s) => JSON.parse(s).cost as number);
    assert.ok(costs.filter((c) => c === 2).length > 10);
    assert.ok(costs.filter((c) => c > 1_000_000).length > 100);
    assert.ok(new Set(costs).size > RUNS / 3);
  });
});

async function userWithToken(): Promise<string> {
  const u = await t.createUser('agreement@example.com');
  return u.token;
}
