// Lets Node 20 run the TypeScript sources directly (tests, `npm start` in development): .ts is transpiled
// with esbuild (types stripped, no type check — `tsc --noEmit` does that), and .sql/.py/.txt files
// import as text, matching esbuild's text loader in build.mjs.
import { register } from 'node:module';

register('./loader-hooks.mjs', import.meta.url);
