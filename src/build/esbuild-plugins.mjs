// What every esbuild build of the sources needs, in one place: build.mjs (the executable's bundle) and
// test/support/bundle-tests.mjs (the tests' bundles). test/support/loader-hooks.mjs gives sources run directly the same
// imports through module hooks.
//   - .sql, .html, .py and .txt files import as their text (TEXT_LOADERS);
//   - `import x from './file.ts?raw'` gives the file's text (assets served verbatim, e.g. estimateCost.ts);
//   - `gridkeeper:console-assets` is the console's front end, built beforehand (src/console/build-ui.mjs);
//   - `gridkeeper:fold-worker` and `gridkeeper:read-worker` are the telemetry fold worker's and the read worker's own
//     bundles as text (src/telemetry/sqlite/fold-worker.ts, src/influx/read-worker.ts).
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

/** The worker threads started from the text of their own bundle: their virtual modules and entry points. */
export const WORKERS = {
  'gridkeeper:fold-worker': '../telemetry/sqlite/fold-worker.ts',
  'gridkeeper:read-worker': '../influx/read-worker.ts',
};
export const FOLD_WORKER_MODULE = 'gridkeeper:fold-worker';
const here = dirname(fileURLToPath(import.meta.url));

/**
 * A worker as one CommonJS script (better-sqlite3's JavaScript included: a thread started from text has no
 * node_modules to load it from; the addon itself is loaded by path) and the module that exports it as text. A worker's
 * sources may import text files and the fold worker (the read worker's telemetry code names it), like the program's.
 */
export async function workerModule(name) {
  const result = await build({
    entryPoints: [join(here, WORKERS[name])],
    bundle: true,
    write: false,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // MINIFY_WORKERS=0: names kept, for a profile of the worker threads (bench/README.md)
    minify: process.env.MINIFY_WORKERS !== '0',
    legalComments: 'none',
    external: ['pg-native'],
    logLevel: 'warning',
    loader: TEXT_LOADERS,
    plugins: name === FOLD_WORKER_MODULE ? [] : [workersPlugin],
  });
  return `export default ${JSON.stringify(result.outputFiles[0].text)};`;
}

/** `gridkeeper:fold-worker` and `gridkeeper:read-worker` in an esbuild build (build.mjs, the tests' bundles). */
export const workersPlugin = {
  name: 'workers',
  setup(b) {
    b.onResolve({ filter: /^gridkeeper:(fold|read)-worker$/ }, (args) => ({ path: args.path, namespace: 'worker' }));
    b.onLoad({ filter: /.*/, namespace: 'worker' }, async (args) => ({ contents: await workerModule(args.path), loader: 'js' }));
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
