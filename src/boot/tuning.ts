// Process settings; main.ts imports this module first, since the thread pool's size must be set before anything uses
// the pool. Their measurements are in bench/README.md; a setting given in the environment or on node's command line
// wins.
//
// libuv's thread pool (scrypt password hashes, the commit's fdatasync, file reads) is sized to the machine: at most 4
// (libuv's default), at least 2, one per core in between. More threads than cores only cost memory.
//
// V8 lets its old generation grow to up to four times what survived the last full collection before it collects again;
// large device listings promote rows that die soon after, so most of that growth is garbage in the service's peak RSS.
// Three times collects it sooner (marking runs mostly on another core) at no cost in latency; tighter costs telemetry
// ingest throughput. V8 reads the flag whenever it sets its next limit, so setting it while running takes effect. It is
// set once the service listens, not first thing: a change of flags makes node compile its own modules afresh instead
// of using their code cache, which would slow the cold start.
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

process.env.UV_THREADPOOL_SIZE ??= String(Math.min(4, Math.max(2, availableParallelism())));

const HEAP_GROWING_PERCENT = 200;

/** V8's heap growth, as above; the serve command calls it once the service listens. */
export function tuneHeapGrowth(): void {
  if (![...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => arg.includes('heap-growing-percent'))) {
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  }
}
