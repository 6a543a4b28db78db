// The webhook POST's own HTTP/1.1 client (src/events/webhook-client.ts through postWebhook) against raw TCP servers that
// answer byte for byte: bodies by length, chunked and up to the close, what is kept of them, Retry-After, interim
// answers, keep-alive reuse, a kept connection the receiver closed, Connection: close, malformed answers, the timeout,
// and TLS with its certificate checked.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postWebhook } from '../../src/events/webhook-sender.ts';
import { RESPONSE_BYTES } from '../../src/events/webhook-client.ts';
import { mulberry32 } from '../support/random-installation.ts';

interface Raw {
  url: string;
  /** requests received, raw, per connection */
  requests: string[][];
  connections: number;
  close(): Promise<void>;
}

/**
 * A server that answers each complete request (head and content-length body) with `answer(n)` (n: the request's
 * number, from 0), written as given; `after` is called with the socket once it is written.
 */
async function rawServer(answer: (n: number) => string | Buffer | undefined, after?: (socket: net.Socket, n: number) => void): Promise<Raw> {
  const requests: string[][] = [];
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const mine: string[] = [];
    requests.push(mine);
    let buf = '';
    socket.on('data', (chunk) => {
      buf += chunk.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        mine.push(buf.slice(0, end + 4 + length));
        buf = buf.slice(end + 4 + length);
        const n = count++;
        const text = answer(n);
        if (text !== undefined) socket.write(text);
        after?.(socket, n);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook?x=1`, requests,
    get connections() { return requests.length; },
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
  };
}

const post = (url: string, body = '{"a":1}', timeoutMs?: number) =>
  postWebhook(url, { 'content-type': 'application/json', 'webhook-id': 'evt_1' }, body, { allowInternal: true, timeoutMs });

describe('webhook client', () => {
  it('sends one POST with its headers and body, and reads an answer by length, keeping the connection', async (t) => {
    const rx = await rawServer(() => 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nRetry-After: 7\r\n\r\nhello');
    t.after(() => rx.close());
    const first = await post(rx.url, '{"é":1}');
    assert.deepEqual(first, { status: 200, error: null, response: 'hello', retryAfter: '7' });
    const second = await post(rx.url);
    assert.equal(second.status, 200);
    assert.equal(rx.connections, 1, 'the connection is kept for the next delivery');
    const [request] = rx.requests[0];
    assert.match(request, /^POST \/hook\?x=1 HTTP\/1\.1\r\n/);
    assert.match(request, /\r\nhost: 127\.0\.0\.1:\d+\r\n/);
    assert.match(request, /\r\ncontent-type: application\/json\r\n/);
    assert.match(request, /\r\nwebhook-id: evt_1\r\n/);
    assert.match(request, /\r\ncontent-length: 8\r\n\r\n/, 'the length in bytes, not characters');
    assert.equal(Buffer.from(request, 'latin1').subarray(-8).toString('utf8'), '{"é":1}');
  });

  it('reads chunked bodies (with extensions and trailers) and skips interim answers; keeps the first 1024 bytes', async (t) => {
    const long = 'x'.repeat(3000);
    const rx = await rawServer((n) => n === 0
      ? 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\nretry-after: 120\r\n\r\n'
        + '4;ext=1\r\nbusy\r\n3\r\n...\r\n0\r\nX-Trailer: 1\r\n\r\n'
      : `HTTP/1.1 202 Accepted\r\nContent-Length: ${long.length}\r\n\r\n${long}`);
    t.after(() => rx.close());
    assert.deepEqual(await post(rx.url), { status: 503, error: 'answered 503', response: 'busy...', retryAfter: '120' });
    const big = await post(rx.url);
    assert.equal(big.status, 202);
    assert.equal(big.response, 'x'.repeat(1024));
    assert.equal(rx.connections, 1);
  });

  it('a redirect and a 410 are failures with their status; 204 has no body', async (t) => {
    const rx = await rawServer((n) => [
      'HTTP/1.1 301 Moved Permanently\r\nLocation: http://elsewhere/\r\nContent-Length: 0\r\n\r\n',
      'HTTP/1.1 410 Gone\r\nContent-Length: 4\r\n\r\ngone',
      'HTTP/1.1 204 No Content\r\n\r\n',
    ][n]);
    t.after(() => rx.close());
    assert.deepEqual(await post(rx.url), { status: 301, error: 'answered 301: redirects are not followed (update the URL)', response: '', retryAfter: undefined });
    assert.deepEqual(await post(rx.url), { status: 410, error: 'answered 410', response: 'gone', retryAfter: undefined });
    assert.deepEqual(await post(rx.url), { status: 204, error: null, response: '', retryAfter: undefined });
    assert.equal(rx.requests[0].length, 3);
  });

  it('an answer without length ends at the close; Connection: close and HTTP/1.0 are not reused', async (t) => {
    const rx = await rawServer((n) => [
      'HTTP/1.1 200 OK\r\n\r\nuntil the end',
      'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    ][n], (socket, n) => { if (n === 0) socket.end(); });
    t.after(() => rx.close());
    assert.equal((await post(rx.url)).response, 'until the end');
    assert.equal((await post(rx.url)).status, 200);
    assert.equal((await post(rx.url)).status, 200);
    assert.equal((await post(rx.url)).status, 200);
    assert.deepEqual(rx.requests.map((r) => r.length), [1, 1, 1, 1], 'a new connection after each that was not to be kept');
  });

  it('a kept connection the receiver closed is replaced, and the delivery goes on the new one', async (t) => {
    const rx = await rawServer(() => 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', (socket) => {
      // closed after a moment, without a word: the client finds out only when it writes the next request
      setTimeout(() => socket.destroy(), 20);
    });
    t.after(() => rx.close());
    assert.equal((await post(rx.url)).status, 200);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await post(rx.url)).status, 200);
    assert.equal(rx.connections, 2);
  });

  it('a connection closed before the answer, a malformed answer and a silent one are failures without a status', async (t) => {
    const rx = await rawServer((n) => ['', 'SMTP ready\r\n\r\n', 'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n', undefined][n], (socket, n) => { if (n === 0) socket.destroy(); });
    t.after(() => rx.close());
    const closed = await post(rx.url);
    assert.equal(closed.status, null);
    assert.match(closed.error!, /^ECONNRESET: socket hang up$/);
    assert.deepEqual(await post(rx.url), { status: null, error: 'EBADANSWER: not an HTTP/1.x answer', response: null });
    assert.deepEqual(await post(rx.url), { status: null, error: 'EBADANSWER: a malformed content-length in the answer', response: null });
    assert.deepEqual(await post(rx.url, '{}', 50), { status: null, error: 'no complete answer within 0.05 s', response: null });
    const refused = await post('http://127.0.0.1:9/');
    assert.match(refused.error!, /^ECONNREFUSED: /);
  });

  it('https goes over TLS, and a certificate the system does not trust is refused', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-tls-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    let handshakes = 0;
    const server = tls.createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (socket) => {
      handshakes++;
      socket.on('data', () => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    });
    server.on('tlsClientError', () => { handshakes++; });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => server.close(() => r())));
    const result = await post(`https://localhost:${(server.address() as net.AddressInfo).port}/hook`);
    assert.equal(result.status, null);
    assert.match(result.error!, /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN): /);
    for (let i = 0; i < 50 && handshakes === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(handshakes, 1, 'the client spoke TLS (the server saw its handshake end)');
  });
});

/**
 * Property test of the answer parser: answers made at random (status, header names in any case, a body by length,
 * chunked in random chunks, or up to the close), and adversarial ones (random bytes, cut heads, malformed lengths and
 * chunk sizes, NULs, a head past any sane size), each written in random fragments. Every POST must settle (no throw, no
 * hang past its timeout); a well-formed answer gives its status and the first RESPONSE_BYTES of its body.
 */
describe('webhook client: random and adversarial answers', () => {
  const SEEDS = [1, 2, 3];
  const CASES = 60;

  /** an answer made, with its status and body when it is well-formed; `refused`: it must be a failure */
  interface Made { bytes: Buffer; status?: number; body?: string; closes: boolean; refused?: boolean }

  function wellFormed(random: () => number): Made {
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const status = pick([200, 201, 202, 204, 400, 404, 410, 429, 500, 503]);
    const caseOf = (name: string) => [...name].map((c) => (random() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
    const body = status === 204 ? '' : Array.from({ length: Math.floor(random() * 2500) }, () => String.fromCharCode(32 + Math.floor(random() * 95))).join('');
    const framing = status === 204 ? 'none' : pick(['length', 'chunked', 'close'] as const);
    const head = [`HTTP/1.1 ${status} Whatever`, `${caseOf('x-noise')}: ${'n'.repeat(Math.floor(random() * 200))}`];
    let content = body;
    if (framing === 'length') head.push(`${caseOf('content-length')}: ${Buffer.byteLength(body)}`);
    if (framing === 'chunked') {
      head.push(`${caseOf('transfer-encoding')}: chunked`);
      content = '';
      for (let at = 0; at < body.length;) {
        const n = 1 + Math.floor(random() * 700);
        const piece = body.slice(at, at + n);
        content += `${piece.length.toString(16)}${random() < 0.2 ? ';x=y' : ''}\r\n${piece}\r\n`;
        at += n;
      }
      content += '0\r\n\r\n';
    }
    if (framing === 'close') head.push('Connection: close');
    const interim = random() < 0.2 ? 'HTTP/1.1 100 Continue\r\n\r\n' : '';
    return { bytes: Buffer.from(`${interim}${head.join('\r\n')}\r\n\r\n${content}`, 'latin1'), status, body, closes: framing === 'close' };
  }

  function adversarial(random: () => number): Made {
    const good = wellFormed(random).bytes;
    const kind = Math.floor(random() * 7);
    const bytes = kind === 0 ? Buffer.from(Array.from({ length: Math.floor(random() * 300) }, () => Math.floor(random() * 256)))
      : kind === 1 ? good.subarray(0, Math.floor(random() * good.length))
      : kind === 2 ? Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${pickOf(random, ['-1', '1e3', '99999999999999999999', '0x10', ' ', '3, 4'])}\r\n\r\nabc`)
      : kind === 3 ? Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${pickOf(random, ['zz', '-5', 'fffffffffffffffff', ''])}\r\nabc\r\n0\r\n\r\n`)
      : kind === 4 ? Buffer.concat([good.subarray(0, 20), Buffer.from([0, 0, 0]), good.subarray(20)])
      : kind === 5 ? Buffer.from(`HTTP/1.1 200 OK\r\nX: ${'h'.repeat(200_000)}\r\n\r\n`)
      : Buffer.from(`HTTP/1.1 ${pickOf(random, ['2000', 'abc', '', '99'])} OK\r\nContent-Length: 0\r\n\r\n`);
    // a random cut (1) may leave a whole answer read up to the close; random bytes (0) are not checked for sense
    return { bytes, closes: true, refused: kind >= 2 };
  }

  function pickOf<T>(random: () => number, xs: readonly T[]): T {
    return xs[Math.floor(random() * xs.length)]!;
  }

  /**
   * A server that answers each request with the made answer its body names ({"i":N}: a request the client sends again
   * after a kept connection closed under it gets the same answer), in random fragments; closes after those that say so.
   */
  async function fragmentingServer(random: () => number, answers: Made[]): Promise<{ url: string; close(): Promise<void> }> {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
      let buf = '';
      socket.on('data', async (chunk) => {
        buf += chunk.toString('latin1');
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const made = answers[(JSON.parse(buf.slice(end + 4, end + 4 + length)) as { i: number }).i];
        buf = buf.slice(end + 4 + length);
        if (made === undefined) { socket.destroy(); return; }
        for (let at = 0; at < made.bytes.length && !socket.destroyed;) {
          const size = 1 + Math.floor(random() * 400);
          socket.write(made.bytes.subarray(at, at + size));
          at += size;
          if (random() < 0.3) await new Promise((r) => setImmediate(r));
        }
        if (made.closes && !socket.destroyed) socket.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook`,
      close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }),
    };
  }

  for (const seed of SEEDS) {
    it(`seed ${seed}: every POST settles; well-formed answers give their status and body`, async (t) => {
      const random = mulberry32(seed);
      const answers = Array.from({ length: CASES }, () => (random() < 0.6 ? wellFormed(random) : adversarial(random)));
      const rx = await fragmentingServer(random, answers);
      t.after(() => rx.close());
      for (const [i, made] of answers.entries()) {
        const got = await post(rx.url, JSON.stringify({ i }), 2000);
        const what = `answer ${i} of seed ${seed}: ${JSON.stringify(made.bytes.subarray(0, 80).toString('latin1'))}`;
        if (made.status !== undefined) {
          assert.equal(got.status, made.status, what);
          assert.equal(got.response, made.body!.slice(0, RESPONSE_BYTES), what);
        } else {
          assert.ok(got.status === null ? typeof got.error === 'string' && got.error.length > 0 : Number.isInteger(got.status), what);
          if (made.refused) assert.equal(got.status, null, `${what}: must be refused`);
          assert.ok(!/within 2 s/.test(got.error ?? ''), `${what}: it waited for the timeout instead of failing`);
        }
      }
    });
  }
});
