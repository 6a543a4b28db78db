// Entry point of the bundle, the single executable and `npm start`.
import './boot/tuning.ts'; // first: the thread pool's size and V8's heap growth, before anything uses them
import { runCli } from './boot/cli.ts';
import { createLogger, flushLogLines } from './lib/logger.ts';

void runCli(process.argv.slice(2), process.env, {
  // the log's waiting lines first: what a command prints comes after what it logged
  out: (l) => { flushLogLines(); process.stdout.write(l + '\n'); },
  err: (l) => process.stderr.write(l + '\n'),
}).then((code) => process.exit(code), (err: unknown) => {
  createLogger('error').error('fatal', { error: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
});
