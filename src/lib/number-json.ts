// A number as JSON text, for answers that write hundreds of thousands of them. String(n) goes through V8's number-to-
// string cache, which lives in the old generation and keeps its latest results alive: a raw week written that way
// left ~0.4 MB more in a thread's heap at every scavenge, ~15 MB an answer, until the next full collection
// (bench/README.md). JSON.stringify writes the same shortest digits for every finite number without the cache.

/** `n` (finite) as JSON text: the same digits as String(n). */
export function numberJson(n: number): string {
  return JSON.stringify(n);
}
