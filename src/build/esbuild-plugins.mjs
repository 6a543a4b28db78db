// What every esbuild build of the sources needs, in one place: build.mjs (the executable's bundle) and
// test/support/bundle-tests.mjs (the tests' bundles). test/support/loader-hooks.mjs gives sources run directly the same
// imports through module hooks.
//   - .sql, .html, .py and .txt files import as their text (TEXT_LOADERS);
//   - `import x from './file.ts?raw'` gives the file's text (assets served verbatim, e.g. estimateCost.ts);
//   - `gridkeeper:console-assets` is the console's front end, built beforehand (src/console/build-ui.mjs);
//   - `gridkeeper:fold-worker` is the telemetry fold worker's own bundle as text (src/telemetry/sqlite/fold-worker.ts).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_ASSETS_MODULE } from '../console/build-ui.mjs';

/** esbuild's `loader` option: the file kinds imported as text. */
export const TEXT_LOADERS = { '.sql': 'text', '.html': 'text', '.py': 'text', '.txt': 'text' };

export const rawTextPlugin = {
  name: 'raw',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (args) => ({ path: join(args.resolveDir, args.path.replace(/\?raw$/, '')), namespace: 'raw' }));
    b.onLoad({ filter: /.*/, namespace: 'raw' }, (args) => ({ contents: readFileSync(args.path, 'utf8'), loader: 'text' }));
  },
};

/** The console's assets module, its source made by consoleAssetsModule(). */
export function consoleAssetsPlugin(source) {
  return {
    name: 'console-assets',
    setup(b) {
      b.onResolve({ filter: /^gridkeeper:console-assets$/ }, () => ({ path: CONSOLE_ASSETS_MODULE, namespace: 'console' }));
      b.onLoad({ filter: /.*/, namespace: 'console' }, () => ({ contents: source, loader: 'js' }));
    },
  };
}

export const FOLD_WORKER_MODULE = 'gridkeeper:fold-worker';
const FOLD_WORKER_ENTRY = join(dirname(fileURLToPath(import.meta.url)), '../telemetry/sqlite/fold-worker.ts');

/**
 * The fold worker as one CommonJS script (better-sqlite3's JavaScript included: a thread started from text has no
 * node_modules to load it from; the addon itself is loaded by path) and the module that exports it as text.
 */
export async function foldWorkerModule() {
  const result = await build({
    entryPoints: [FOLD_WORKER_ENTRY],
    bundle: true,
    write: false,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  return `export default ${JSON.stringify(result.outputFiles[0].text)};`;
}

/** `gridkeeper:fold-worker` in an esbuild build (build.mjs, the tests' bundles). */
export const foldWorkerPlugin = {
  name: 'fold-worker',
  setup(b) {
    b.onResolve({ filter: /^gridkeeper:fold-worker$/ }, () => ({ path: FOLD_WORKER_MODULE, namespace: 'fold-worker' }));
    b.onLoad({ filter: /.*/, namespace: 'fold-worker' }, async () => ({ contents: await foldWorkerModule(), loader: 'js' }));
  },
};
