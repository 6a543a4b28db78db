import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform, version as esbuildVersion } from 'esbuild';
import { TEXT_LOADERS, WORKERS, workerModule } from '../../src/build/esbuild-plugins.mjs';

// The console's assets (src/console/build-ui.mjs), built on first import like build.mjs inlines them in the bundle.
const CONSOLE_ASSETS = 'gridkeeper:console-assets';
// Every module these hooks see costs a round trip to the hooks' thread, and kysely's ES build is 262 modules (of the
// ~600 a test app imports): packages that ship a CommonJS build as well are loaded from it, whose own require()s do not
// come here (a test process imports ~340 modules through the hooks instead of ~600, ~0.5 s less per test file).
const COMMONJS = new Map(['kysely', 'nodemailer'].map((name) => {
  const pkg = JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8'));
  return [name, new URL(`../../node_modules/${name}/${pkg.exports['.'].require}`, import.meta.url).href];
}));

export async function resolve(specifier, context, nextResolve) {
  if (specifier === CONSOLE_ASSETS) return { url: CONSOLE_ASSETS, shortCircuit: true };
  if (Object.hasOwn(WORKERS, specifier)) return { url: specifier, shortCircuit: true };
  const commonjs = COMMONJS.get(specifier);
  if (commonjs !== undefined) return { url: commonjs, format: 'commonjs', shortCircuit: true };
  return nextResolve(specifier, context);
}

// Each process that runs the sources directly (benchmarks, scripts; the test files run bundled instead, see
// bundle-tests.mjs) would transpile the ~200 sources it imports and build the console again (~0.7 s). What esbuild
// made is kept on disk, under the hash of everything it was made from, and shared by every process after it.
const root = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = process.env.GRIDKEEPER_TS_CACHE ?? join(root, 'node_modules/.cache/gridkeeper-ts');
const TRANSFORM = { loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline' };
const hash = (...parts) => {
  const h = createHash('sha256').update(esbuildVersion);
  for (const p of parts) h.update('\0').update(p);
  return h.digest('hex');
};

async function cached(key, make) {
  const file = join(CACHE, `${key}.js`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    const text = await make();
    try {
      mkdirSync(CACHE, { recursive: true });
      // written whole, then renamed: a process reading meanwhile sees the whole text or none
      const partial = `${file}.${process.pid}.partial`;
      writeFileSync(partial, text);
      renameSync(partial, file);
    } catch {
      // a cache that cannot be written is only slower
    }
    return text;
  }
}

/** Every file under `dir` with its contents, for the console assets' key. */
function treeText(dir) {
  const parts = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) parts.push(treeText(p));
    else parts.push(p, readFileSync(p, 'utf8'));
  }
  return parts.join('\0');
}

// the file kinds that import as text, as in every esbuild build of the sources
const TEXT = new RegExp(`\\.(${Object.keys(TEXT_LOADERS).map((ext) => ext.slice(1)).join('|')})$`);
const TS = /\.(ts|mts)$/;
// Files imported as text keep their source; a .ts imported with ?raw is the script text itself (assets).
export async function load(url, context, nextLoad) {
  if (url === CONSOLE_ASSETS) {
    const builder = join(root, 'src/console/build-ui.mjs');
    // the lock file stands for the versions of what the console bundles (preact)
    const key = hash('console', readFileSync(builder, 'utf8'), readFileSync(join(root, 'package-lock.json'), 'utf8'), treeText(join(root, 'src/console/ui')));
    const source = await cached(key, async () => (await import('../../src/console/build-ui.mjs')).consoleAssetsModule());
    return { format: 'module', source, shortCircuit: true };
  }
  if (Object.hasOwn(WORKERS, url)) {
    // built each time (a few tens of ms to a second)
    return { format: 'module', source: await workerModule(url), shortCircuit: true };
  }
  if (url.startsWith('file:') && (TEXT.test(url) || url.endsWith('?raw'))) {
    const source = await readFile(fileURLToPath(url.replace(/\?raw$/, '')), 'utf8');
    return { format: 'module', source: `export default ${JSON.stringify(source)};`, shortCircuit: true };
  }
  if (url.startsWith('file:') && TS.test(url) && !url.includes('/node_modules/')) {
    const path = fileURLToPath(url);
    const source = await readFile(path, 'utf8');
    const code = await cached(hash('ts', JSON.stringify(TRANSFORM), path, source),
      async () => (await transform(source, { ...TRANSFORM, sourcefile: path })).code);
    return { format: 'module', source: code, shortCircuit: true };
  }
  return nextLoad(url, context);
}
