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

/**
 * Optional packages that the mqtt client's dependencies try to require inside try/catch (debug: supports-color; ws:
 * bufferutil, utf-8-validate), never installed here. Left as requires, each makes a single executable print a warning
 * about non-builtin modules; bundled as a module that throws "not found", each takes the fallback it has in place.
 */
export const absentOptionalsPlugin = {
  name: 'absent-optionals',
  setup(b) {
    b.onResolve({ filter: /^(supports-color|bufferutil|utf-8-validate)$/ }, (args) => ({ path: args.path, namespace: 'absent-optional' }));
    b.onLoad({ filter: /.*/, namespace: 'absent-optional' }, (args) => ({
      contents: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${args.path}'`)}), { code: 'MODULE_NOT_FOUND' });`,
      loader: 'js',
    }));
  },
};
