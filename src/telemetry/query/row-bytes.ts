// Raw rows of an answer (`[<time>,v,...]`) written as UTF-8 bytes as they are made, instead of kept as a string each
// until the answer is joined. A raw week of a device is 60,000 rows: as strings they outlived several scavenges and
// filled the old generation with them and with the pieces they were made of, tens of MB for a 3.4 MB answer
// (bench/README.md). Here each row dies as soon as it is written.
//
// The bytes go into chunks of CHUNK_BYTES taken from a pool the thread keeps (the sink hands them back once its bytes
// are copied into the answer), so a thread answering raw weeks one after another reuses the same few MB.

/** Where rows are appended: an array of JSON texts, or a RowBytes. `length`: rows appended so far. */
export interface RowSink {
  readonly length: number;
  push(row: string): unknown;
}

const CHUNK_BYTES = 64 * 1024;
/** chunks kept for the next answers, at most (4 MB) */
const POOL_CHUNKS = 64;
const pool: Array<Uint8Array<ArrayBuffer>> = [];
const encoder = new TextEncoder();

/** Rows as comma-separated UTF-8 (no brackets around them), the first `skip` rows appended left out (an OFFSET). */
export class RowBytes implements RowSink {
  /** rows appended, those skipped included (what a limit counts) */
  length = 0;
  /** bytes written */
  size = 0;
  private readonly chunks: Array<Uint8Array<ArrayBuffer>> = [];
  /** bytes used of each chunk but the last */
  private readonly used: number[] = [];
  /** the last chunk, and the bytes used of it */
  private chunk: Uint8Array<ArrayBuffer> | undefined;
  private at = 0;

  constructor(private readonly skip = 0) {}

  /** rows written (appended and not skipped) */
  get rows(): number {
    return Math.max(0, this.length - this.skip);
  }

  push(row: string): number {
    if (++this.length <= this.skip) return this.length;
    const comma = this.length > this.skip + 1 ? 1 : 0;
    // at most 3 bytes of UTF-8 for each UTF-16 unit
    const most = comma + row.length * 3;
    let chunk = this.chunk;
    if (chunk === undefined || this.at + most > chunk.length) chunk = this.nextChunk(most);
    if (comma === 1) chunk[this.at++] = 0x2c;
    const { written } = encoder.encodeInto(row, chunk.subarray(this.at));
    this.at += written;
    this.size += comma + written;
    return this.length;
  }

  /** Copies the bytes into `target` at `offset`; returns the offset after them. */
  copyTo(target: Uint8Array, offset: number): number {
    let at = offset;
    this.chunks.forEach((chunk, k) => {
      const used = k < this.used.length ? this.used[k] : this.at;
      target.set(chunk.subarray(0, used), at);
      at += used;
    });
    return at;
  }

  /** Gives the chunks back to the pool; the sink is empty after. */
  release(): void {
    for (const chunk of this.chunks) if (chunk.length === CHUNK_BYTES && pool.length < POOL_CHUNKS) pool.push(chunk);
    this.chunks.length = 0;
    this.used.length = 0;
    this.chunk = undefined;
    this.at = 0;
    this.size = 0;
  }

  private nextChunk(need: number): Uint8Array<ArrayBuffer> {
    if (this.chunk !== undefined) this.used.push(this.at);
    // a row longer than a chunk (long strings) gets a chunk of its own size
    const chunk = need > CHUNK_BYTES ? new Uint8Array(need) : pool.pop() ?? new Uint8Array(CHUNK_BYTES);
    this.chunks.push(chunk);
    this.chunk = chunk;
    this.at = 0;
    return chunk;
  }
}
