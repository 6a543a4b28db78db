// A node:test reporter that test/run.mjs adds beside the spec reporter: for each test file, the time its top-level tests
// took, slowest first, one `<seconds>\t<file>` line each. The run prints the slowest after each pass, so that what
// lengthens the run is seen where it happens.
export default async function* fileTimes(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      const file = event.data.file ?? '(unknown file)';
      perFile.set(file, (perFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
  }
  for (const [file, ms] of [...perFile].sort((a, b) => b[1] - a[1])) yield `${(ms / 1000).toFixed(1)}\t${file}\n`;
}
