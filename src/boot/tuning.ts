// Process settings; main.ts imports this module first, since the thread pool's size must be set before anything uses
// the pool, and glibc's arenas capped before V8's and libuv's threads allocate (boot/allocator.ts). Their measurements
// are in bench/README.md; a setting given in the environment or on node's command line wins.
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
//
// V8 doubles a thread's young generation whenever enough survives a scavenge, up to two semi-spaces of 16 MB, and
// keeps it so: under telemetry load the main thread and the workers grow theirs to the full size. Once the main
// thread's has reached YOUNG_BYTES, growth stops (a factor of 1, read at every growth, so it takes effect while
// running; the flag is the process's, so the workers' stop growing too): seen after a collection (a 'gc' performance
// entry). V8 also shrinks an idle thread's young generation; once the main thread's is below YOUNG_BYTES again, growth
// resumes, or the thread would keep the smallest size for good. At the smallest size (1 MB semi-spaces) telemetry
// ingest scavenges every few milliseconds and slows (bench/README.md).
import { availableParallelism } from 'node:os';
import { tuneAllocatorToServe, type AllocatorTuning } from './allocator.ts';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

process.env.UV_THREADPOOL_SIZE ??= String(Math.min(4, Math.max(2, availableParallelism())));

/** glibc's allocator (boot/allocator.ts), set before the threads that take arenas of their own: undefined but to serve */
export const allocatorTuning: AllocatorTuning | undefined = tuneAllocatorToServe(process.argv.slice(2), process.env);

const HEAP_GROWING_PERCENT = 200;
/** the main thread's young generation (both semi-spaces) beyond which no thread's grows */
const YOUNG_BYTES = 8 * 1024 * 1024;
/** V8's own --semi-space-growth-factor */
const V8_GROWTH_FACTOR = 2;

/** V8's heap growth, as above; the serve command calls it once the service listens. */
export function tuneHeapGrowth(): void {
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ''];
  if (!given.some((arg) => arg.includes('heap-growing-percent'))) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (!given.some((arg) => arg.includes('semi-space'))) stopYoungGrowthAt(YOUNG_BYTES);
}

function stopYoungGrowthAt(bytes: number): void {
  let stopped = false;
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (young === undefined) return;
    const stop = young.space_size >= bytes;
    if (stop === stopped) return;
    stopped = stop;
    setFlagsFromString(stop ? '--semi-space-growth-factor=1' : `--semi-space-growth-factor=${V8_GROWTH_FACTOR}`);
  });
  observer.observe({ entryTypes: ['gc'] });
}
