// What every esbuild build of the sources needs, in one place: build.mjs (the executable's bundle) and
// test/support/bundle-tests.mjs (the tests' bundles). test/support/loader-hooks.mjs gives sources run directly the same
// imports through module hooks.
//   - .sql, .html, .py and .txt files import as their text (TEXT_LOADERS);
//   - `import x from './file.ts?raw'` gives the file's text (assets served verbatim, e.g. estimateCost.ts);
//   - `gridkeeper:console-assets` is the console's front end, built beforehand (src/console/build-ui.mjs).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_ASSETS_MODULE } from './console/build-ui.mjs';

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
