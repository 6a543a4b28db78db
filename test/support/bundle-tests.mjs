// Bundles the test files for a run (test/run.mjs): one esbuild build, every test file an entry point, what they share
// split into common chunks, the packages with files of their own left to node_modules. A test process then loads a
// handful of files instead of ~600 modules through module hooks: a test file that opens an app starts in ~0.55 s
// instead of ~1.4 s, over ~210 test files per run.
//
// What the bundle keeps as in the sources:
// - `import.meta.url` is the source file's own URL (each file's text is rewritten before esbuild sees it), so a test
//   finds the files beside it, and createRequire(import.meta.url) resolves from there;
// - .sql/.py/.txt/.html and `?raw` imports are text, `gridkeeper:console-assets` is the console's built assets
//   (src/build/esbuild-plugins.mjs, as in build.mjs);
// - stack traces name the bundle's lines; run with GRIDKEEPER_TEST_SOURCE_MAPS=1 to have them name the sources
//   (Node's --enable-source-maps: ~0.35 s more per test file, so not by default).
import { build } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { consoleAssetsModule } from '../../src/console/build-ui.mjs';
import { TEXT_LOADERS, consoleAssetsPlugin, rawTextPlugin, workersPlugin } from '../../src/build/esbuild-plugins.mjs';

// Kept in node_modules: native addons and packages that read files of their own at run time, or are large and used by
// one test file (typescript).
const EXTERNAL = ['better-sqlite3', 'pg-native', 'esbuild', 'playwright-core', 'typescript', 'axe-core'];

/** The one module that reads which backend a run is for (GRIDKEEPER_TEST_BACKEND): what reaches it depends on it. */
const BACKEND_MODULE = 'test/support/postgres.ts';

/**
 * Bundles `files` (paths relative to `root`, ending in .ts) into `outdir`, each as `<path without .ts>.mjs`.
 * Returns, in the order of `files`, each bundle's path and whether the backend can change what it does: whether its
 * code, with the chunks it imports (statically or dynamically), includes the module that reads the backend. A file
 * that does not is the same test on either backend.
 */
export async function bundleTests(root, files, outdir) {
  // a renamed module would make every file look the same on both backends
  if (!existsSync(join(root, BACKEND_MODULE))) {
    throw new Error(`bundleTests: ${BACKEND_MODULE} is missing: say which module reads the backend`);
  }
  // import.meta.url as each source's own
  const ownUrls = {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.(ts|mts|js|mjs|cjs)$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        const loader = /\.m?ts$/.test(args.path) ? 'ts' : 'js';
        return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader };
      });
    },
  };
  const { metafile } = await build({
    absWorkingDir: root,
    metafile: true,
    entryPoints: files.map((f) => ({ in: f, out: f.replace(/\.ts$/, '') })),
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
    loader: TEXT_LOADERS,
    define: { __GRIDKEEPER_BUNDLED__: 'false' },
    external: EXTERNAL,
    // the CommonJS packages in the bundle require() Node's own modules
    banner: { js: "import { createRequire as __gridkeeperCreateRequire } from 'node:module'; const require = __gridkeeperCreateRequire(import.meta.url);" },
    plugins: [rawTextPlugin, consoleAssetsPlugin(await consoleAssetsModule()), workersPlugin, ownUrls],
  });
  const outputs = metafile.outputs;
  /** whether an output, or an output it imports however indirectly, holds the backend's module */
  const reachesBackend = (entry) => {
    const seen = new Set([entry]);
    for (const stack = [entry]; stack.length > 0;) {
      const { inputs, imports } = outputs[stack.pop()];
      if (BACKEND_MODULE in inputs) return true;
      for (const { path, external } of imports) {
        if (external || seen.has(path)) continue;
        seen.add(path);
        stack.push(path);
      }
    }
    return false;
  };
  const relOut = relative(root, outdir);
  return files.map((f) => {
    const out = join(relOut, f.replace(/\.ts$/, '.mjs'));
    if (outputs[out] === undefined) throw new Error(`bundleTests: esbuild's metafile has no output ${out}`);
    return { path: join(root, out), usesBackend: reachesBackend(out) };
  });
}
