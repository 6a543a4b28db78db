// The client scripts src/assets/estimateCost.{ts,py} must compute exactly the server's cost (docs/api.md#cost).
// Thousands of random valid bodies go through all three; each script runs once over a JSON-lines file.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import ts from 'typescript';
import fc from 'fast-check';
import * as v from 'valibot';
import { estimateRequest, MAX_TIME_MS, MIN_TIME_MS } from '../../src/telemetry/cost.ts';
import { QueryBodySchema } from '../../src/telemetry/telemetry.schemas.ts';

const TS_SCRIPT = fileURLToPath(new URL('../../src/assets/estimateCost.ts', import.meta.url));
const PY_SCRIPT = fileURLToPath(new URL('../../src/assets/estimateCost.py', import.meta.url));
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 15, 12, 34, 56, 789);

let dir = '';
let jsScript = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gridkeeper-estimators-'));
  // Node 20 cannot run TypeScript: transpile the script exactly as a client on an older Node would.
  jsScript = join(dir, 'estimateCost.mjs');
  writeFileSync(jsScript, (await transform(readFileSync(TS_SCRIPT, 'utf8'), { loader: 'ts', format: 'esm' })).code);
});
after(() => rmSync(dir, { recursive: true, force: true }));

type Run = { status: number | null; stdout: string; stderr: string };
function runScript(kind: 'ts' | 'py', args: string[], input?: string): Run {
  const [cmd, script] = kind === 'ts' ? [process.execPath, jsScript] : ['python3', PY_SCRIPT];
  const r = spawnSync(cmd, [script, ...args], { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const expectedLine = (body: unknown) => {
  const e = estimateRequest(v.parse(QueryBodySchema, body), NOW);
  return `{"cost": ${e.cost}, "estimatedDatapoints": ${e.estimatedDatapoints}, "scannedShards": ${e.scannedShards}}`;
};

// ---- random valid bodies ----

const instant = fc.oneof(
  { arbitrary: fc.integer({ min: NOW - 40 * DAY, max: NOW + 5 * DAY }), weight: 4 },
  // Shard and interval boundaries, and one ms either side of them.
  { arbitrary: fc.tuple(fc.integer({ min: 20_000, max: 20_500 }), fc.constantFrom(DAY, 7 * DAY, 90 * DAY, 3_600_000, 60_000), fc.constantFrom(-1, 0, 1))
    .map(([k, unit, delta]) => Math.max(MIN_TIME_MS, Math.min(MAX_TIME_MS, Math.floor((k * DAY) / unit) * unit + delta))), weight: 3 },
  { arbitrary: fc.integer({ min: -5 * DAY, max: 5 * DAY }), weight: 1 }, // around the epoch, negative times
  { arbitrary: fc.integer({ min: MIN_TIME_MS, max: MAX_TIME_MS }), weight: 1 },
  { arbitrary: fc.constantFrom(MIN_TIME_MS, MAX_TIME_MS, MIN_TIME_MS + 1, MAX_TIME_MS - 1, 0, -1, NOW, NOW + 1), weight: 1 },
);

/** An instant written as a number or as one of the accepted ISO forms. */
const timeValue = fc.tuple(instant, fc.integer({ min: 0, max: 7 }), fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }), fc.integer({ min: 0, max: 999_999 }))
  .map(([ms, form, offsetMin, extraDigits]): number | string => {
    const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ for years 0000-9999
    switch (form) {
      case 0: return iso;
      case 1: return iso.slice(0, 19) + 'Z';
      case 2: return iso.slice(0, 23); // no offset = UTC
      case 3: return iso.slice(0, 10); // date only
      case 4: return `${iso.slice(0, 23)}${String(extraDigits).padStart(6, '0')}Z`; // ns digits, truncated
      case 5: { // the same instant written in another offset, when that stays a valid year
        const local = ms + offsetMin * 60_000;
        if (local < MIN_TIME_MS || local > MAX_TIME_MS) return ms;
        const sign = offsetMin < 0 ? '-' : '+';
        const abs = Math.abs(offsetMin);
        return `${new Date(local).toISOString().slice(0, 23)}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
      }
      case 6: return iso.slice(0, 16); // minutes only
      default: return ms;
    }
  });

const condition = fc.record({ operator: fc.constantFrom('<', '<=', '>', '>=', '=' as const), value: timeValue });
const name = fc.constantFrom('autogen', 'rp_one_s', 'rp_one_m', 'rp_one_h', '_one_h', 'one_s', 'x_one_s_y', 'raw_one_m');
const from = fc.oneof(
  fc.record({ measurement: fc.constant('m'), namespace: fc.record({ version: fc.constant('1' as const), database: fc.constant('db'), retentionPolicy: name }) }),
  fc.record({ measurement: fc.constant('m'), namespace: fc.record({ version: fc.constant('2' as const), organization: fc.constant('o_one_s'), bucket: name }) }),
  fc.record({ measurement: fc.constant('m'), namespace: fc.record({ version: fc.constant('IOx' as const), value: name }) }),
  fc.record({ measurement: fc.constant('m'), database: fc.constant('db'), retentionPolicy: name }),
);
const query = fc.record({
  select: fc.constant(['power']),
  from,
  where: fc.record({ time: fc.array(condition, { maxLength: 2 }) }, { requiredKeys: [] }),
  limit: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 10_000_000 }), fc.constant(Number.MAX_SAFE_INTEGER)),
}, { requiredKeys: ['select', 'from'] });
const body = fc.oneof(query, fc.array(query, { minLength: 1, maxLength: 12 }));

describe('cost estimators: agreement', () => {
  it('server, TS script and Python script agree exactly on 3000 random bodies', () => {
    const bodies: unknown[] = fc.sample(body, { seed: 42, numRuns: 3000 });
    // A large array and the widest possible range are in the mix for sure.
    const widest = { select: ['p'], from: { measurement: 'm', database: 'd', retentionPolicy: 'r_one_s' }, where: { time: [{ operator: '>=', value: MIN_TIME_MS }, { operator: '<=', value: MAX_TIME_MS }] } };
    bodies.push(widest, Array.from({ length: 1000 }, (_, i) => bodies[i % 100]).flat().slice(0, 1000));
    const expected = bodies.map(expectedLine);
    const file = join(dir, 'bodies.jsonl');
    writeFileSync(file, bodies.map((b) => JSON.stringify(b)).join('\n') + '\n');
    for (const kind of ['ts', 'py'] as const) {
      const r = runScript(kind, [file, '--now', String(NOW), '--jsonl']);
      assert.equal(r.stderr, '', kind);
      assert.equal(r.status, 0, kind);
      const lines = r.stdout.trimEnd().split('\n');
      assert.equal(lines.length, bodies.length, kind);
      lines.forEach((line, i) => assert.equal(line, expected[i], `${kind} disagrees on body ${i}: ${JSON.stringify(bodies[i])}`));
    }
    // The widest range: 0000-01-01 to 9999-12-31 at 1 s: 315569520000 points over 3652425 daily shards.
    assert.equal(expected[3000], '{"cost": 3163000052, "estimatedDatapoints": 315569520000, "scannedShards": 3652425}');
  });
});

describe('cost estimators: command line', () => {
  const sample = { select: ['p'], from: { measurement: 'm', database: 'd', retentionPolicy: 'r_one_s' }, where: { time: [{ operator: '>=', value: '2026-01-15T00:00:00Z' }, { operator: '<', value: '2026-01-15T01:00:00Z' }] } };
  // 1 h at 1 s: 3600 points, 1 shard; 100 + 50 + 3600 + 200 = 3950 hundredths → 40.
  const out = '{"cost": 40, "estimatedDatapoints": 3600, "scannedShards": 1}\n';

  for (const kind of ['ts', 'py'] as const) {
    it(`${kind}: reads one body from stdin or a file and prints one line`, () => {
      assert.deepEqual(runScript(kind, ['--now', String(NOW)], JSON.stringify(sample)), { status: 0, stdout: out, stderr: '' });
      const file = join(dir, `one-${kind}.json`);
      writeFileSync(file, JSON.stringify([sample, sample], null, 2));
      // 100 + 100 + 7200 + 400 = 7800 → 78
      assert.deepEqual(runScript(kind, [file, '--now', String(NOW)]), { status: 0, stdout: '{"cost": 78, "estimatedDatapoints": 7200, "scannedShards": 2}\n', stderr: '' });
    });

    it(`${kind}: defaults now to the current time`, () => {
      const open = { select: ['p'], from: { measurement: 'm', database: 'd', retentionPolicy: 'r' }, where: { time: [{ operator: '>=', value: Date.now() - 10 * DAY }] } };
      const r = runScript(kind, [], JSON.stringify(open));
      // 10 days at 10 s = 86400 points (+ at most a few for the time the script takes to start), 10 or 11 shards.
      const result = JSON.parse(r.stdout) as { estimatedDatapoints: number; scannedShards: number };
      assert.ok(result.estimatedDatapoints >= 86_400 && result.estimatedDatapoints < 86_400 + 100, r.stdout);
      assert.ok(result.scannedShards === 10 || result.scannedShards === 11, r.stdout);
    });

    it(`${kind}: exits 2 with a message for a time value the server refuses`, () => {
      const bad = { ...sample, where: { time: [{ operator: '=', value: '2026-02-30' }] } };
      const r = runScript(kind, ['--now', String(NOW)], JSON.stringify(bad));
      assert.equal(r.status, 2);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, 'estimateCost: invalid time value: "2026-02-30"\n');
    });
  }

  it('the TS script uses only syntax that Node can strip (erasableSyntaxOnly) and type-checks alone', () => {
    const program = ts.createProgram([TS_SCRIPT], {
      noEmit: true, strict: true, erasableSyntaxOnly: true, target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: ['node'], skipLibCheck: true,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(diagnostics, []);
    assert.doesNotMatch(readFileSync(TS_SCRIPT, 'utf8'), /from '\.\.?\//, 'the script must not import project files');
  });
});
