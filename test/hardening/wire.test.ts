// Hostile clients at the socket level, against the executable — what the in-process fuzzer (fuzz.test.ts) cannot send:
// slow clients (trickled headers, stalled bodies) that must not hold up anyone else or the database, bodies over the
// limit without a Content-Length (streamed, chunked) and with a lying one, a gzip bomb on the telemetry write,
// malformed HTTP, many idle connections. The server stays responsive, answers in the contract's shape, and its
// memory stays bounded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { isolatedBinary, type RunningBinary } from '../support/binary.ts';
import { httpClient, type HttpClient } from '../support/http-client.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, dropDatabases, envInt, loginOver, sleep, startGridkeeper } from '../support/harness.ts';

const SLOW = envInt('SLOW_CLIENTS', 200);

let dir: string;
let run: RunningBinary;
let http: HttpClient;
let token: string;
let port: number;
const sockets: net.Socket[] = [];

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? NaN) / 1024;
}

function open(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', () => {});
    s.once('error', reject);
    sockets.push(s);
  });
}

/** Sends raw bytes and collects everything until the server closes (or `ms` pass). */
async function raw(bytes: string | Buffer | (string | Buffer)[], ms = 10_000): Promise<string> {
  const s = await open();
  return new Promise((resolve) => {
    let text = '';
    const timer = setTimeout(() => { s.destroy(); resolve(text); }, ms);
    s.on('data', (c) => { text += c.toString('latin1'); });
    s.on('close', () => { clearTimeout(timer); resolve(text); });
    for (const b of Array.isArray(bytes) ? bytes : [bytes]) s.write(b);
  });
}

function statusOf(text: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
}

function jsonOf(text: string): any {
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  const chunked = /transfer-encoding: chunked/i.test(text.slice(0, text.indexOf('\r\n\r\n')));
  return JSON.parse(chunked ? body.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n$/, '') : body);
}

before(async () => {
  const bin = isolatedBinary();
  dir = bin.dir;
  run = await startGridkeeper(bin.exe, join(dir, 'data'));
  port = Number(new URL(run.url).port);
  http = httpClient(run.url);
  token = (await loginOver(http, ADMIN_EMAIL, ADMIN_PASSWORD)).access;
  const d = await http.request('POST', '/v1/device?roleId=1', { token, body: { properties: { nodeId: 'wire', nodeType: 'powerMeter' } } });
  assert.equal(d.status, 200, d.text);
});

after(async () => {
  for (const s of sockets) s.destroy();
  http?.close();
  try {
    if (run) assert.equal(await run.stop(), 0, 'still stops gracefully after all that');
  } finally {
    await dropDatabases();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('hostile clients on the wire', () => {
  it(`${SLOW} slow clients (trickled headers, stalled bodies) hold up neither other clients nor the database`, { timeout: 60_000 }, async () => {
    const rssBefore = rssMb(run.child.pid!);
    const trickle: net.Socket[] = [];
    for (let i = 0; i < SLOW; i++) {
      const s = await open();
      if (i % 2 === 0) s.write('POST /v1/device/query HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      else {
        // a write whose body never comes: the handler waits for it outside any transaction
        s.write(`PATCH /v1/device/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{"op":`);
      }
      trickle.push(s);
    }
    const drip = setInterval(() => { for (const s of trickle) if (!s.destroyed) s.write('a'); }, 200);
    try {
      // meanwhile, writes to the very device the stalled PATCHes target go through, promptly
      for (let i = 0; i < 40; i++) {
        const t0 = performance.now();
        const r = await http.request('PATCH', '/v1/device/1', { token, body: [{ op: 'add', path: `/ok${i}`, value: i }], timeoutMs: 10_000 });
        assert.equal(r.status, 200, r.text);
        // a stalled body holding a lock would hold this write for the server's 60 s request timeout
        assert.ok(performance.now() - t0 < 5_000, `write ${i} took ${Math.round(performance.now() - t0)} ms`);
      }
      assert.equal((await http.request('GET', '/healthz', { timeoutMs: 5_000 })).status, 200);
    } finally {
      clearInterval(drip);
      for (const s of trickle) s.destroy();
    }
    await sleep(200);
    const grown = rssMb(run.child.pid!) - rssBefore;
    assert.ok(grown < 100, `RSS grew ${grown.toFixed(0)} MB with ${SLOW} slow clients`);
  });

  it('bodies over the limit: streamed without a Content-Length, chunked, and with a lying Content-Length -> 413, memory bounded', { timeout: 60_000 }, async () => {
    const rssBefore = rssMb(run.child.pid!);
    // 64 MiB announced: refused from the header, before a byte of the body is read
    const declared = await raw('POST /v1/device/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 67108864\r\n\r\n{', 5_000);
    assert.equal(statusOf(declared), 413, declared.slice(0, 200));
    assert.equal(jsonOf(declared).code, 'PAYLOAD_TOO_LARGE');
    // 8 MiB chunked to a JSON route (limit 1 MiB), 4 at once
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const chunked = () => raw([
      'POST /v1/device/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      ...Array.from({ length: 128 }, () => Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])),
      '0\r\n\r\n',
    ], 10_000);
    for (const text of await Promise.all([chunked(), chunked(), chunked(), chunked()])) {
      assert.equal(statusOf(text), 413, text.slice(0, 200));
      assert.deepEqual(Object.keys(jsonOf(text)).sort(), ['code', 'error', 'message', 'statusCode']);
    }
    // a Content-Length shorter than what follows: the body ends where it says; the rest is the next request
    const pipelined = await raw(`POST /v1/device/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`
      + 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 5_000);
    assert.deepEqual([...pipelined.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]), ['200', '200'], pipelined.slice(0, 300));
    assert.match(pipelined, /"status":"ok"/);
    await sleep(200);
    const grown = rssMb(run.child.pid!) - rssBefore;
    assert.ok(grown < 150, `RSS grew ${grown.toFixed(0)} MB`);
    assert.equal((await http.request('GET', '/healthz')).status, 200);
  });

  it('a gzip bomb on the telemetry write is refused after 32 MiB of output, memory bounded', { timeout: 60_000 }, async () => {
    const rssBefore = rssMb(run.child.pid!);
    const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024, 'a'), { level: 9 });
    assert.ok(bomb.length < 1024 * 1024, 'a small request');
    const r = await http.request('POST', '/v1/telemetry?db=bomb&rp=autogen', { token, raw: bomb, headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, timeoutMs: 30_000 });
    assert.equal(r.status, 413, r.text);
    assert.equal(r.body.code, 'PAYLOAD_TOO_LARGE');
    await sleep(200);
    const grown = rssMb(run.child.pid!) - rssBefore;
    assert.ok(grown < 200, `RSS grew ${grown.toFixed(0)} MB inflating a bomb`);
  });

  it('malformed HTTP is answered by the server and leaves it healthy', { timeout: 60_000 }, async () => {
    const cases: [string, string | Buffer, number[]][] = [
      ['garbage', Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0d, 0x0a, 0x0d, 0x0a]), [400]],
      ['no version (HTTP/0.9 style)', 'GET /healthz\r\n\r\n', [200, 400]],
      ['bad header name', 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', [400]],
      ['a 64 KiB header', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(64 * 1024)}\r\n\r\n`, [431]],
      ['both Content-Length and chunked', 'POST /v1/device/query HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', [400]],
      ['a bad chunk size', 'POST /v1/device/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', [400]],
      ['invalid UTF-8 in the path', Buffer.concat([Buffer.from('GET /v1/role/'), Buffer.from([0xc3, 0x28]), Buffer.from(' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]), [400, 401, 404]],
      ['a percent-encoded NUL in the path', 'GET /v1/device/%00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', [401, 404]],
      ['an unknown method', 'BREW /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', [400, 404, 405]],
    ];
    for (const [what, bytes, statuses] of cases) {
      const text = await raw(bytes, 5_000);
      assert.ok(statuses.includes(statusOf(text)), `${what}: ${text.slice(0, 120)}`);
    }
    // 500 idle connections at once, then a normal request
    const idle = await Promise.all(Array.from({ length: 500 }, () => open()));
    const h = await http.request('GET', '/healthz', { timeoutMs: 5_000 });
    assert.equal(h.status, 200);
    for (const s of idle) s.destroy();
    const w = await http.request('PATCH', '/v1/device/1', { token, body: [{ op: 'add', path: '/after', value: true }] });
    assert.equal(w.status, 200);
  });
});
