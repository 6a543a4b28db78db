// .sql and asset files are imported as text: esbuild's text loader in the bundle and in the tests' bundles
// (test/support/bundle-tests.mjs), test/support/register.mjs for sources run directly.
declare module '*.sql' {
  const text: string;
  export default text;
}
declare module '*.py' {
  const text: string;
  export default text;
}
declare module '*.txt' {
  const text: string;
  export default text;
}
declare module '*.html' {
  const text: string;
  export default text;
}
declare module '*?raw' {
  const text: string;
  export default text;
}
// The fold worker's own bundle as text (src/esbuild-plugins.mjs), started with `new Worker(text, { eval: true })`.
declare module 'gridkeeper:fold-worker' {
  const text: string;
  export default text;
}
// The read worker's own bundle as text (src/influx/read-worker.ts), started like the fold worker.
declare module 'gridkeeper:read-worker' {
  const text: string;
  export default text;
}
