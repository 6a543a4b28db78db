// Process settings; main.ts imports this module first, since the thread pool's size must be set before anything uses
// the pool. Each is measured in bench/README.md (Performance II); a setting given in the environment or on node's
// command line wins.
//
// libuv's thread pool (scrypt password hashes, the commit's fdatasync, file reads) is sized to the machine: at most 4
// (libuv's default), at least 2, one per core in between. More threads than cores only cost memory.
//
// V8 lets its old generation grow to up to four times what survived the last full collection before it collects again.
// Device listings of 10,000 rows promote a few MB per request (rows still alive at a young-generation pass: on
// PostgreSQL a slice's whole result set), so a run of them took the heap from ~22 MB live to ~96 MB before a full
// collection: 50–60 MB of the service's peak RSS was garbage. Growing to at most three times what is live collects it
// sooner (marking runs mostly on another core): PostgreSQL's devices benchmark peak 202 -> 185 MB for the same
// latencies. Tighter costs throughput where requests allocate a lot: at twice (161 MB) telemetry ingest lost 8–11%,
// at three times 2–4% (noise level). V8 reads the flag whenever it sets its next limit, so setting it while running
// takes effect. It is set once the service listens, not first thing: V8 checks a hash of its flags before using the
// compiled code kept for node's own modules, and every module loaded after a change is compiled afresh (set first
// thing, it cost the cold start 35-40 ms: 127-135 -> 164-171 ms).
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
