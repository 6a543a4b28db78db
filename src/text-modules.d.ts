// .sql and asset files are imported as text: esbuild's text loader in the bundle, test/support/register.mjs in tests.
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
