/** A block or statistics record that is corrupt or truncated: the only error a decoder throws. */
export class BlockFormatError extends Error {
  constructor(reason: string) {
    super(`telemetry block: ${reason}`);
    this.name = 'BlockFormatError';
  }
}
