// Runs every test file under test/ with node:test. Node 20's --test takes no globs, so the files are listed here.
// Usage: node test/run.mjs [substring ...]  — only files whose path contains one of the substrings.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ensureSystemPackages } from './support/system-packages.mjs';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) { if (name !== 'support') walk(p); }
    else if (name.endsWith('.test.ts')) files.push(relative(root, p));
  }
})(join(root, 'test'));
const chosen = filters.length ? files.filter((f) => filters.some((s) => f.includes(s))) : files;
if (chosen.length === 0) { console.error('no test files matched'); process.exit(1); }
ensureSystemPackages();
const r = spawnSync(process.execPath, [
  '--import', './test/support/register.mjs',
  '--test', '--test-concurrency=2', '--test-reporter=spec',
  ...chosen,
], { cwd: root, stdio: 'inherit', env: { ...process.env, GRIDKEEPER_LOG: process.env.GRIDKEEPER_LOG ?? 'error', GRIDKEEPER_CHECK_DB_HANDLES: '1' } });
process.exit(r.status ?? 1);
