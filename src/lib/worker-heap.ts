// The heap limits of the service's worker threads. V8 lets a thread's young generation grow to 48 MB on a 64-bit
// machine; the workers' allocations die young (rows folded or decoded, answers written), so a third of that costs them
// little time and keeps the process smaller (bench/README.md).
//
// What a worker keeps alive for the length of one piece of work (a heavy answer's rows, a slice of staged points being
// folded) reaches the old generation and dies there; V8 lets the old generation grow to a multiple of what was live
// before it collects. A worker that has just finished such a piece of work knows better: collectAfterWork() collects
// at once when more than COLLECT_ABOVE_BYTES are in use (at most once in `minIntervalMs`, for a worker whose pieces of
// work come many a second).
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** resourceLimits of a worker thread (node:worker_threads) */
export const WORKER_LIMITS = { maxYoungGenerationSizeMb: 16 } as const;

const COLLECT_ABOVE_BYTES = 24 * 1024 * 1024;

/** V8's full collection, from a context made while --expose-gc is set (the flag is cleared again at once) */
let collect: (() => void) | undefined | null = null;
let lastMs = -Infinity;

function collector(): (() => void) | undefined {
  if (collect !== null) return collect;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    collect = typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    collect = undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return collect;
}

/**
 * In a worker thread after a piece of work whose garbage is now dead, or in the main thread once heavy work gave way
 * to lighter work (boot/allocator.ts): a full collection when it is worth it (above).
 */
export function collectAfterWork(minIntervalMs = 0): void {
  const now = performance.now();
  if (now - lastMs < minIntervalMs || getHeapStatistics().used_heap_size <= COLLECT_ABOVE_BYTES) return;
  const gc = collector();
  if (gc === undefined) return;
  lastMs = now;
  gc();
}
