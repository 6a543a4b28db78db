// A Node single executable application: the bundle, with better-sqlite3's addon and the allocator's as assets
// (src/db/native.ts loads them),
// injected by postject into a stripped copy of a node binary. The same steps make every architecture's executable; for
// another architecture, `runNode` is that node under an emulator, so the blob's code cache is made by the V8 that runs it.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Writes the executable `out` from `bundle` (the esbuild output), `addon` (better_sqlite3.node of the target) and
 * `allocator` (gridkeeper_allocator.node of the target, src/boot/allocator.c).
 * @param {{ bundle: string, addon: string, allocator: string, node: string, out: string, runNode?: string[], strip?: string }} opts
 *   node: the target's node binary, copied; runNode: the command that runs it here (default: the node itself);
 *   strip: the target's strip (absent: the symbols stay).
 */
export function makeExecutable({ bundle, addon, allocator, node, out, runNode = [node], strip = 'strip' }) {
  const work = mkdtempSync(join(dirname(out), '.sea-'));
  try {
    const blob = join(work, 'sea-prep.blob');
    const config = join(work, 'sea-config.json');
    writeFileSync(config, JSON.stringify({
      main: bundle,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      assets: { 'better_sqlite3.node': addon, 'gridkeeper_allocator.node': allocator },
    }, null, 2));
    execFileSync(runNode[0], [...runNode.slice(1), '--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] });
    const exe = join(work, 'exe');
    copyFileSync(node, exe);
    chmodSync(exe, 0o755);
    try {
      // The debug symbols of node are of no use on an appliance: ~12 MB smaller. (.comment: compiler versions.)
      execFileSync(strip, ['--remove-section=.comment', exe], { stdio: 'ignore' });
    } catch {
      console.log(`build: ${strip} not available, keeping symbols`);
    }
    const postject = join(dirname(require.resolve('postject/package.json')), 'dist', 'cli.js');
    // postject prints harmless "Can't find string offset" warnings for node's notes: shown only when it fails.
    execFileSync(process.execPath, [postject, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], { stdio: ['ignore', 'ignore', 'pipe'] });
    renameSync(exe, out);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return out;
}
