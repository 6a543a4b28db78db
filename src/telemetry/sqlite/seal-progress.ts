// What sealing has done in this process (docs/api.md#telemetry-blocks), for the log and /metrics: it runs in the fold
// worker or on the main thread, and reports each transaction here.
import type { Logger } from '../../lib/logger.ts';
import type { SealStep } from './seal.ts';

export type { SealStep } from './seal.ts';

export interface SealProgress {
  /** windows whose shard table sealing emptied and dropped */
  windows: number;
  points: number;
  /** bytes of the blocks written */
  bytes: number;
}

const progress: SealProgress = { windows: 0, points: 0, bytes: 0 };
let log: Logger | undefined;

export function logSealingTo(logger: Logger): void {
  log = logger;
}

/** One sealing transaction done. */
export function noteSealed(step: SealStep): void {
  progress.points += step.points;
  progress.bytes += step.bytes;
  if (step.done) {
    progress.windows++;
    log?.info('telemetry window sealed', { namespaceId: step.namespaceId, window: step.window, table: step.table });
  }
}

/** Totals since the process started. */
export function sealProgress(): Readonly<SealProgress> {
  return progress;
}
