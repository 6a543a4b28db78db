// One JSON object per line on stdout. Secrets never go in: callers log ids, not keys, passwords or tokens.
//
// The lines of one turn of the event loop go out in one write: at the default level every request logs a line, and
// one write to stdout per line (a synchronous system call for a file or a pipe) would be a large part of a small
// request. A warning or error goes out at once, after the lines before it. The lines still waiting
// are written when the process exits (also after an uncaught exception). Only a kill -9 can lose them, and then at
// most one turn's worth.
import type { LogLevel } from './config.ts';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** `write` receives each line with its newline; `urgent` is true for warnings and errors. */
export type LineWriter = (line: string, urgent: boolean) => void;

export function createLogger(level: LogLevel, write: LineWriter = stdoutLines()): Logger {
  const min = ORDER[level];
  const emit = (lvl: LogLevel) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[lvl] < min) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + '\n', ORDER[lvl] >= ORDER.warn);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

let shared: BatchedLines | undefined;

/** Writes the log lines still waiting: before anything else goes to stdout, so that the order stays. */
export function flushLogLines(): void {
  shared?.flush();
}

/** Lines to stdout, gathered per event-loop turn (one writer per process, however many loggers). */
function stdoutLines(): LineWriter {
  if (shared === undefined) {
    shared = batchedLines((text) => process.stdout.write(text));
    process.on('exit', shared.flush);
  }
  return shared.write;
}

export interface BatchedLines {
  write: LineWriter;
  /** hands what waits to the sink now */
  flush(): void;
}

/** Lines handed to `sink` together once per event-loop turn; an urgent line at once, after those before it. */
export function batchedLines(sink: (text: string) => void): BatchedLines {
  let waiting = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (waiting === '') return;
    const text = waiting;
    waiting = '';
    sink(text);
  };
  const write: LineWriter = (line, urgent) => {
    waiting += line;
    if (urgent) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return { write, flush };
}
