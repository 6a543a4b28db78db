// The heap limits of the service's worker threads. V8 lets a thread's young generation grow to 48 MB on a 64-bit
// machine; the workers' allocations die young (rows folded or decoded, answers written), so a third of that costs them
// little time and keeps the process smaller (bench/README.md).

/** resourceLimits of a worker thread (node:worker_threads) */
export const WORKER_LIMITS = { maxYoungGenerationSizeMb: 16 } as const;
