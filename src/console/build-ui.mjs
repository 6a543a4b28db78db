// Builds the console's front end (src/console/ui) with esbuild into hashed assets held in memory, and renders them as
// the text of a module: build.mjs inlines that module into the server bundle, the tests' bundles inline it too
// (test/support/bundle-tests.mjs), and test/support/loader-hooks.mjs serves it to sources run directly, so tests see
// the real assets.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONSOLE_ASSETS_MODULE = 'gridkeeper:console-assets';

const uiDir = join(dirname(fileURLToPath(import.meta.url)), 'ui');
const TYPES = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** @returns {Promise<{ files: { name: string, type: string, text: string }[], js: string, css: string }>} */
export async function buildConsoleAssets({ minify = true } = {}) {
  const result = await build({
    entryPoints: { app: join(uiDir, 'main.tsx') },
    bundle: true,
    write: false,
    outdir: '/console-out',
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const files = [];
  let js = '';
  let css = '';
  for (const out of result.outputFiles) {
    const ext = out.path.endsWith('.css') ? '.css' : '.js';
    // Content hash in the name: the assets can be cached forever, a new build gets new names.
    const hash = createHash('sha256').update(out.contents).digest('hex').slice(0, 12);
    const name = `${basename(out.path, ext)}.${hash}${ext}`;
    files.push({ name, type: TYPES[ext], text: out.text });
    if (ext === '.js') js = name; else css = name;
  }
  return { files, js, css };
}

/** The assets as an ES module's source: `export default { files, js, css }`. */
export async function consoleAssetsModule(options) {
  return `export default ${JSON.stringify(await buildConsoleAssets(options))};\n`;
}
