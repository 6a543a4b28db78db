// The test run's bundles (test/support/bundle-tests.mjs) say which test files the backend can change: those whose
// code reaches test/support/postgres.ts, directly or through a shared chunk. The others run once (test/run.mjs).
// The bundler runs in a node of its own, as test/run.mjs runs it: it is not itself bundled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;

test('test bundles: a file that opens a test app reads the backend; a codec or parser test does not', (t) => {
  const out = mkdtempSync(join(root, 'node_modules/.cache/gridkeeper-test-bundles-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const files = [
    'test/roles/roles.test.ts', // makeTestApp, through test/support/app.ts
    'test/telemetry/blocks/bits.test.ts', // the codecs alone
    'test/influxql/parser.test.ts', // the parser alone
    'test/alarms/kill.test.ts', // several executables on one PostgreSQL database, through the harness
    'test/devices/create.test.ts', // makeTestApp, sharing chunks with the first
  ];
  const script = `import { bundleTests } from ${JSON.stringify(join(root, 'test/support/bundle-tests.mjs'))};
    console.log(JSON.stringify(await bundleTests(${JSON.stringify(root)}, ${JSON.stringify(files)}, ${JSON.stringify(out)})));`;
  const bundles = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })) as
    Array<{ path: string; usesBackend: boolean }>;
  assert.deepEqual(bundles.map((b) => b.usesBackend), [true, false, false, true, true]);
  for (const b of bundles) assert.ok(existsSync(b.path), `${b.path} is written`);
});
