// Builds gridkeeper:
//   dist/gridkeeper.cjs          one esbuild bundle (SQL migrations and assets inlined as text), better_sqlite3.node and
//                                gridkeeper_allocator.node (src/boot/allocator.c) beside it
//   dist/gridkeeper              a Node single executable application: the bundle and the addon embedded in a copy of node
//   dist/release/                with --release: the executables for linux-x64 and linux-arm64, their Debian packages
//                                and SHA256SUMS (src/build/release.mjs)
// Usage: node build.mjs [--no-sea | --release]   (--no-sea stops after the bundle: what `npm start` needs)
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { consoleAssetsModule } from './src/console/build-ui.mjs';
import { TEXT_LOADERS, absentOptionalsPlugin, consoleAssetsPlugin, rawTextPlugin, workersPlugin } from './src/build/esbuild-plugins.mjs';
import { makeExecutable } from './src/build/sea.mjs';
import { buildRelease, packageVersion } from './src/build/release.mjs';
import { TARGETS, targetAllocator } from './src/build/targets.mjs';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);
const started = Date.now();
const say = (msg) => console.log(`build: ${msg} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

mkdirSync(dist, { recursive: true });

// The console's front end, built first and inlined as one module of hashed assets (src/console/build-ui.mjs).
const consoleSource = await consoleAssetsModule();
say('built the console');

await build({
  entryPoints: [join(root, 'src/main.ts')],
  outfile: join(dist, 'gridkeeper.cjs'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: false,
  sourcemap: false,
  legalComments: 'none',
  loader: TEXT_LOADERS,
  define: { __GRIDKEEPER_BUNDLED__: 'true' },
  plugins: [rawTextPlugin, consoleAssetsPlugin(consoleSource), workersPlugin, absentOptionalsPlugin],
  // pg's optional native binding (libpq) is never used: the pure JavaScript client is bundled.
  external: ['pg-native'],
  logLevel: 'warning',
});
const addon = require.resolve('better-sqlite3/build/Release/better_sqlite3.node');
copyFileSync(addon, join(dist, 'better_sqlite3.node'));
const allocator = targetAllocator(Object.keys(TARGETS).find((name) => TARGETS[name].host));
copyFileSync(allocator, join(dist, 'gridkeeper_allocator.node'));
say('bundled dist/gridkeeper.cjs');

if (process.argv.includes('--no-sea')) process.exit(0);

makeExecutable({ bundle: join(dist, 'gridkeeper.cjs'), addon, allocator, node: process.execPath, out: join(dist, 'gridkeeper') });
say('wrote dist/gridkeeper');

if (process.argv.includes('--release')) {
  for (const { file, bytes } of buildRelease({ dist, version: packageVersion(root), say })) {
    console.log(`  dist/release/${file.padEnd(36)} ${(bytes / 1e6).toFixed(1).padStart(6)} MB`);
  }
}
