// The console's first screen: every script and style sheet the page loads, raw and gzipped (issue 15's budget:
// all JS + CSS of the first screen < 150 kB gzipped). Builds the assets exactly as build.mjs does.
// Usage: node bench/console-size.mjs
import { gzipSync } from 'node:zlib';
import { buildConsoleAssets } from '../src/console/build-ui.mjs';

const BUDGET = 150 * 1000;
const { files } = await buildConsoleAssets();
let raw = 0;
let gz = 0;
for (const f of files) {
  const bytes = Buffer.from(f.text, 'utf8');
  const g = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gz += g;
  console.log(`${f.name.padEnd(28)} ${String(bytes.length).padStart(8)} B raw ${String(g).padStart(8)} B gzip`);
}
console.log(`${'first screen (all assets)'.padEnd(28)} ${String(raw).padStart(8)} B raw ${String(gz).padStart(8)} B gzip — budget ${BUDGET} B: ${gz < BUDGET ? 'within' : 'OVER'}`);
