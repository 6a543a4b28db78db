// The console's built front end (see build-ui.mjs): provided by esbuild in the bundle and by the test loader.
declare module 'gridkeeper:console-assets' {
  const assets: {
    files: { name: string; type: string; text: string }[];
    /** names of the entry's script and style sheet */
    js: string;
    css: string;
  };
  export default assets;
}
