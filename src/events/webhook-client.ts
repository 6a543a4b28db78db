// A small HTTP/1.1 client for webhook POSTs: per origin a few keep-alive connections, each carrying one request at a
// time, written as one preformatted buffer; the answer's status line, the headers the delivery needs
// (content-length, transfer-encoding, connection, retry-after) and its body (by length, chunked, or up to the close)
// are parsed here, its first RESPONSE_BYTES kept. It does what a delivery needs and nothing more: no redirects, no
// request streaming, no 100-continue, no upgrade. node:http's general client costs several times the CPU per request.
import net from 'node:net';
import tls from 'node:tls';
import type { LookupFunction } from 'node:net';

/** bytes of an answer's body kept */
export const RESPONSE_BYTES = 1024;
/** an answer's head larger than this ends the connection (a failure) */
const MAX_HEAD_BYTES = 64 * 1024;
/** an answer's body beyond this is not read: the status stands and the connection is closed */
const MAX_BODY_BYTES = 1024 * 1024;
/**
 * An answer's status line and header lines as RFC 9112 has them: a token before the colon, no control characters but
 * tab in the reason or a value, no line folding. Anything else ends the connection: a receiver (or what stands in
 * front of it) that frames its answers oddly must not have them read another way than it meant.
 */
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [\t\x20-\x7e\x80-\xff]*)?$/;
const HEADER_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[\t\x20-\x7e\x80-\xff]*$/;
/** connections to one origin */
const MAX_SOCKETS = 16;
/** an idle connection is closed after this */
const IDLE_MS = 30_000;

export interface Answer {
  status: number;
  retryAfter: string | undefined;
  /** the first RESPONSE_BYTES of the body */
  body: Buffer;
}

export interface Target {
  secure: boolean;
  /** the host as in the URL, without IPv6 brackets */
  host: string;
  port: number;
  /** path and query */
  path: string;
  /** the Host header */
  hostHeader: string;
  /** pool key: the origin and the lookup's rules */
  key: string;
  lookup: LookupFunction;
}

interface Pending {
  head: string;
  body: Buffer;
  resolve: (answer: Answer) => void;
  reject: (err: Error) => void;
  /** set when it was written on a connection that had served an earlier request */
  reused: boolean;
  /** sent again once already, after a kept connection closed under it */
  retried: boolean;
  settled: boolean;
  conn: Conn | undefined;
}

class Pool {
  readonly idle: Conn[] = [];
  readonly waiting: Pending[] = [];
  open = 0;
  constructor(readonly target: Target) {}
}

const pools = new Map<string, Pool>();

/**
 * Sends one request and gives its answer; rejects on a connection error or a malformed answer. `cancel` (from the
 * returned handle) ends the request, closing its connection.
 */
export function request(target: Target, headers: Record<string, string>, body: string): { answer: Promise<Answer>; cancel: () => void } {
  const bytes = Buffer.from(body, 'utf8');
  let head = `POST ${target.path} HTTP/1.1\r\nhost: ${target.hostHeader}\r\nconnection: keep-alive\r\n`;
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
  head += `content-length: ${bytes.length}\r\n\r\n`;
  let pool = pools.get(target.key);
  if (pool === undefined) pools.set(target.key, pool = new Pool(target));
  let p!: Pending;
  const answer = new Promise<Answer>((resolve, reject) => {
    p = { head, body: bytes, resolve, reject, reused: false, retried: false, settled: false, conn: undefined };
  });
  take(pool, p);
  return {
    answer,
    cancel: () => {
      if (p.settled) return;
      p.settled = true;
      const at = pool.waiting.indexOf(p);
      if (at >= 0) pool.waiting.splice(at, 1);
      if (p.conn?.current === p) p.conn.destroy();
      p.reject(new Error('cancelled'));
    },
  };
}

/** Puts the request on an idle connection, a new one, or the queue. */
function take(pool: Pool, p: Pending): void {
  const idle = pool.idle.pop();
  if (idle !== undefined) idle.send(p, true);
  else if (pool.open < MAX_SOCKETS) new Conn(pool).send(p, false);
  else pool.waiting.push(p);
}

/** One keep-alive connection and the parse of the answer to its current request. */
class Conn {
  readonly socket: net.Socket;
  current: Pending | undefined;
  private buf: Buffer | undefined;
  private served = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private dead = false;
  // the answer being read
  private status = 0;
  private retryAfter: string | undefined;
  private mode: 'head' | 'length' | 'chunked' | 'close' = 'head';
  private remaining = 0;
  private keepAlive = true;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private bodyBytes = 0;
  private chunkState: 'size' | 'data' | 'crlf' | 'trailers' = 'size';

  constructor(private readonly pool: Pool) {
    const t = pool.target;
    this.socket = t.secure
      ? tls.connect({ host: t.host, port: t.port, servername: net.isIP(t.host) === 0 ? t.host : undefined, lookup: t.lookup, ALPNProtocols: ['http/1.1'] })
      : net.connect({ host: t.host, port: t.port, lookup: t.lookup });
    pool.open++;
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })));
    this.socket.on('end', () => {
      if (this.current !== undefined && this.mode === 'close') this.finish();
      else this.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    });
  }

  send(p: Pending, reused: boolean): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.socket.ref();
    p.reused = reused;
    p.conn = this;
    this.current = p;
    this.status = 0;
    this.retryAfter = undefined;
    this.mode = 'head';
    this.keepAlive = true;
    this.kept = [];
    this.keptBytes = 0;
    this.bodyBytes = 0;
    this.chunkState = 'size';
    this.socket.write(Buffer.concat([Buffer.from(p.head, 'latin1'), p.body]));
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.current === undefined) {
      // nothing was asked: the connection is not in a state to reuse
      this.socket.destroy();
      return;
    }
    this.buf = this.buf === undefined || this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    try {
      this.parse();
    } catch (err) {
      this.socket.destroy();
      this.fail(err as Error);
    }
  }

  private parse(): void {
    while (this.current !== undefined && this.buf !== undefined && this.buf.length > 0) {
      if (this.mode === 'head') {
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (this.buf.length > MAX_HEAD_BYTES) throw Object.assign(new Error('the answer\'s head is too large'), { code: 'EHEADTOOLARGE' });
          return;
        }
        const head = this.buf.subarray(0, end).toString('latin1');
        this.buf = this.buf.subarray(end + 4);
        if (!this.readHead(head)) continue;
      } else if (this.mode === 'length') {
        const n = Math.min(this.remaining, this.buf.length);
        this.keep(this.buf.subarray(0, n));
        this.buf = this.buf.subarray(n);
        this.remaining -= n;
        if (this.remaining === 0) this.finish();
      } else if (this.mode === 'close') {
        this.keep(this.buf);
        this.buf = undefined;
      } else if (!this.readChunked()) {
        return;
      }
    }
  }

  /** Reads the status line and headers; false for an interim (1xx) answer, which is skipped. */
  private readHead(head: string): boolean {
    const lines = head.split('\r\n');
    const m = STATUS_LINE.exec(lines[0]);
    if (m === null) throw Object.assign(new Error('not an HTTP/1.x answer'), { code: 'EBADANSWER' });
    const status = Number(m[2]);
    if (status >= 100 && status < 200) {
      if (status === 101) throw Object.assign(new Error('the endpoint switched protocols'), { code: 'EBADANSWER' });
      return false;
    }
    let length: number | undefined;
    let chunked = false;
    let connection = m[1] === '0' ? 'close' : 'keep-alive';
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      const colon = line.indexOf(':');
      if (colon <= 0 || !HEADER_LINE.test(line)) throw Object.assign(new Error('a malformed header in the answer'), { code: 'EBADANSWER' });
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') {
        if (!/^\d+$/.test(value) || (length !== undefined && length !== Number(value))) throw Object.assign(new Error('a malformed content-length in the answer'), { code: 'EBADANSWER' });
        length = Number(value);
      } else if (name === 'transfer-encoding') {
        chunked = value.toLowerCase().split(',').map((s) => s.trim()).at(-1) === 'chunked';
        if (!chunked) connection = 'close';
      } else if (name === 'connection') {
        const tokens = value.toLowerCase().split(',').map((s) => s.trim());
        if (tokens.includes('close')) connection = 'close';
        else if (tokens.includes('keep-alive')) connection = 'keep-alive';
      } else if (name === 'retry-after') {
        this.retryAfter ??= value;
      }
    }
    this.status = status;
    this.keepAlive = connection !== 'close';
    if (status === 204 || status === 304) {
      this.finish();
    } else if (chunked) {
      this.mode = 'chunked';
      this.chunkState = 'size';
    } else if (length !== undefined) {
      this.mode = 'length';
      this.remaining = length;
      if (length === 0) this.finish();
    } else {
      this.mode = 'close';
      this.keepAlive = false;
    }
    return true;
  }

  /** Reads what it can of a chunked body; false when it needs more bytes. */
  private readChunked(): boolean {
    const buf = this.buf!;
    if (this.chunkState === 'size' || this.chunkState === 'crlf' || this.chunkState === 'trailers') {
      const eol = buf.indexOf('\r\n');
      if (eol < 0) {
        if (buf.length > MAX_HEAD_BYTES) throw Object.assign(new Error('a malformed chunk in the answer'), { code: 'EBADANSWER' });
        return false;
      }
      const line = buf.subarray(0, eol).toString('latin1');
      this.buf = buf.subarray(eol + 2);
      if (this.chunkState === 'crlf') {
        if (line !== '') throw Object.assign(new Error('a malformed chunk in the answer'), { code: 'EBADANSWER' });
        this.chunkState = 'size';
      } else if (this.chunkState === 'trailers') {
        if (line === '') this.finish();
      } else {
        const size = /^([0-9a-fA-F]{1,8})(?:[ \t]*;.*)?$/.exec(line);
        if (size === null) throw Object.assign(new Error('a malformed chunk in the answer'), { code: 'EBADANSWER' });
        this.remaining = parseInt(size[1], 16);
        this.chunkState = this.remaining === 0 ? 'trailers' : 'data';
      }
      return true;
    }
    const n = Math.min(this.remaining, buf.length);
    this.keep(buf.subarray(0, n));
    this.buf = buf.subarray(n);
    this.remaining -= n;
    if (this.remaining === 0) this.chunkState = 'crlf';
    return true;
  }

  private keep(part: Buffer): void {
    this.bodyBytes += part.length;
    if (this.keptBytes < RESPONSE_BYTES && part.length > 0) {
      const slice = part.subarray(0, RESPONSE_BYTES - this.keptBytes);
      // copied: the socket's chunk is not held for the life of the answer
      this.kept.push(Buffer.from(slice));
      this.keptBytes += slice.length;
    }
    // a body this large is not read to its end: the status is known, and the connection is closed
    if (this.bodyBytes > MAX_BODY_BYTES) {
      this.keepAlive = false;
      this.finish();
    }
  }

  /** The answer is complete: settle it, and keep the connection for the next request or close it. */
  private finish(): void {
    const p = this.current!;
    this.current = undefined;
    this.served++;
    const answer = { status: this.status, retryAfter: this.retryAfter, body: this.kept.length === 1 ? this.kept[0] : Buffer.concat(this.kept) };
    if (!this.keepAlive || (this.buf !== undefined && this.buf.length > 0)) {
      // bytes beyond the answer, or a close announced: not reused
      this.release(false);
      this.socket.destroy();
    } else {
      this.buf = undefined;
      this.release(true);
    }
    if (!p.settled) {
      p.settled = true;
      p.resolve(answer);
    }
  }

  private fail(err: Error): void {
    if (!this.dead) {
      this.dead = true;
      clearTimeout(this.idleTimer);
      const idle = this.pool.idle.indexOf(this);
      if (idle >= 0) this.pool.idle.splice(idle, 1);
      this.pool.open--;
      this.socket.destroy();
      this.next();
    }
    const p = this.current;
    if (p === undefined) return;
    this.current = undefined;
    if (p.settled) return;
    // a kept connection the receiver closed before answering: the request goes again on a new one (as a new attempt
    // would); its receiver may see it twice, which at-least-once delivery allows
    if (p.reused && !p.retried && this.status === 0 && this.mode === 'head' && ['ECONNRESET', 'EPIPE'].includes((err as NodeJS.ErrnoException).code ?? '')) {
      p.retried = true;
      take(this.pool, p);
      return;
    }
    p.settled = true;
    p.reject(err);
  }

  private release(keep: boolean): void {
    if (this.dead) return;
    if (!keep) {
      this.dead = true;
      this.pool.open--;
      this.next();
      return;
    }
    const waiting = this.pool.waiting.shift();
    if (waiting !== undefined) {
      this.send(waiting, true);
      return;
    }
    this.pool.idle.push(this);
    this.socket.unref();
    this.idleTimer = setTimeout(() => this.socket.destroy(), IDLE_MS);
    this.idleTimer.unref();
  }

  /** A connection went: a waiting request takes its place; an origin left without connections is forgotten. */
  private next(): void {
    const waiting = this.pool.waiting.shift();
    if (waiting !== undefined) take(this.pool, waiting);
    else if (this.pool.open === 0 && pools.get(this.pool.target.key) === this.pool) pools.delete(this.pool.target.key);
  }
}
