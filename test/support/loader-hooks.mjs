import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

// The console's assets (src/console/build-ui.mjs), built on first import like build.mjs inlines them in the bundle.
const CONSOLE_ASSETS = 'gridkeeper:console-assets';
export async function resolve(specifier, context, nextResolve) {
  if (specifier === CONSOLE_ASSETS) return { url: CONSOLE_ASSETS, shortCircuit: true };
  return nextResolve(specifier, context);
}

const TEXT = /\.(sql|py|txt|html)$/;
const TS = /\.(ts|mts)$/;
// Files imported as text keep their source; a .ts imported with ?raw is the script text itself (assets).
export async function load(url, context, nextLoad) {
  if (url === CONSOLE_ASSETS) {
    const { consoleAssetsModule } = await import('../../src/console/build-ui.mjs');
    return { format: 'module', source: await consoleAssetsModule(), shortCircuit: true };
  }
  if (url.startsWith('file:') && (TEXT.test(url) || url.endsWith('?raw'))) {
    const source = await readFile(fileURLToPath(url.replace(/\?raw$/, '')), 'utf8');
    return { format: 'module', source: `export default ${JSON.stringify(source)};`, shortCircuit: true };
  }
  if (url.startsWith('file:') && TS.test(url) && !url.includes('/node_modules/')) {
    const source = await readFile(fileURLToPath(url), 'utf8');
    const out = await transform(source, {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
      sourcemap: 'inline',
      sourcefile: fileURLToPath(url),
    });
    return { format: 'module', source: out.code, shortCircuit: true };
  }
  return nextLoad(url, context);
}
