// POST /v1/telemetry: line protocol in, 204 out; all-or-nothing (400 LINE_PROTOCOL with the line, 403 naming the
// nodeId), gzip, limits, namespaces from the query parameters, overwrite semantics.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createApp } from '../../src/boot/app.ts';
import { sql } from 'kysely';
import { compileQuery, type Db, type Query } from '../../src/db/open.ts';
import { makeTestApp, assertError, T0, type TestApp } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import { testBackend } from '../support/postgres.ts';
import {
  FROM_V1, V1, addMonitors, countPoints, countRows, deviceOf, iso, ns, queryOk, tableNames, userWithNodes, write, writeGzip, writeOk, writer,
} from './fixtures.ts';

const MIB = 1024 * 1024;

/** Every point of nodeId n1 in measurement `power` of the default test namespace, as [time, ...fields]. */
async function pointsOf(t: TestApp, token: string, select: string[], nodeId = 'n1', from: object = FROM_V1): Promise<unknown[][]> {
  const body = await queryOk(t, token, { select, from, where: { tags: { nodeId }, time: [{ operator: '>=', value: T0 - 86_400_000 * 3 }] } });
  return (body.series ?? []).flatMap((s: { values: unknown[][] }) => s.values);
}

async function storedPoints(t: TestApp): Promise<number> {
  return (await tableNames(t)).length === 0 ? 0 : countPoints(t);
}

describe('telemetry write: happy', () => {
  it('stores every field type and answers 204 with an empty body', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const res = await write(app, u.token, `power,nodeId=n1 f=1.5,i=-7i,u=7u,s="a, b=c",b=true ${ns(T0 - 1000)}\n`);
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    assert.deepEqual(await pointsOf(app, u.token, ['f', 'i', 'u', 's', 'b']), [[iso(T0 - 1000), 1.5, -7, 7, 'a, b=c', true]]);
  });

  it('keeps int64 values exact end to end', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 big=9223372036854775807i,small=-9223372036854775808i,u=9223372036854775807u ${ns(T0 - 1000)}`);
    const res = await app.request('POST', '/v1/telemetry/query', { token: u.token, body: { select: ['big', 'small', 'u'], from: FROM_V1, where: { tags: { nodeId: 'n1' } }, limit: 1 } });
    assert.equal(res.status, 200);
    assert.match(res.text, /,9223372036854775807,-9223372036854775808,9223372036854775807\]/);
  });

  it('accepts each precision and points without a timestamp (the server time)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const at = T0 - 60_000;
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${at}000000`, `${V1}&precision=ns`);
    await writeOk(app, u.token, `power,nodeId=n1 p=2 ${at + 1}000`, `${V1}&precision=us`);
    await writeOk(app, u.token, `power,nodeId=n1 p=3 ${at + 2}`, `${V1}&precision=ms`);
    await writeOk(app, u.token, `power,nodeId=n1 p=4 ${(at + 3000) / 1000}`, `${V1}&precision=s`);
    app.clock.set(T0 - 10_000);
    await writeOk(app, u.token, 'power,nodeId=n1 p=5');
    app.clock.set(T0);
    assert.deepEqual(await pointsOf(app, u.token, ['p']), [
      [iso(at), 1], [iso(at + 1), 2], [iso(at + 2), 3], [iso(at + 3000), 4], [iso(T0 - 10_000), 5],
    ]);
  });

  it('keeps nanoseconds: two points within one millisecond stay two points', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 5)}\npower,nodeId=n1 p=2 ${BigInt(T0 - 5) * 1_000_000n + 1234n}`);
    assert.deepEqual(await pointsOf(app, u.token, ['p']), [[iso(T0 - 5), 1], ['2025-12-31T23:59:59.995001234Z', 2]]);
  });

  it('re-writing a (series, time) overwrites the given fields and keeps the others', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const at = ns(T0 - 1000);
    await writeOk(app, u.token, `power,nodeId=n1 a=1,b=2 ${at}`);
    await writeOk(app, u.token, `power,nodeId=n1 b=20,c=30 ${at}`);
    // within one request the last line wins, whatever the order of the rest of the body
    await writeOk(app, u.token, `power,nodeId=n1 c=31 ${at}\npower,nodeId=n1 a=0 ${ns(T0 - 2000)}\npower,nodeId=n1 c=32 ${at}`);
    assert.deepEqual(await pointsOf(app, u.token, ['a', 'b', 'c']), [[iso(T0 - 2000), 0, null, null], [iso(T0 - 1000), 1, 20, 32]]);
  });

  it('a series is its measurement and full tag set, whatever the tag order', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, [
      `power,nodeId=n1,phase=L1 p=1 ${ns(T0 - 3000)}`,
      `power,phase=L1,nodeId=n1 p=2 ${ns(T0 - 2000)}`,
      `power,nodeId=n1,phase=L2 p=3 ${ns(T0 - 1000)}`,
    ].join('\n'));
    assert.equal(await countRows(app, 'telemetry_series'), 2);
    const body = await queryOk(app, u.token, { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.deepEqual(body.series.map((s: { tags: object; values: unknown[][] }) => [s.tags, s.values.length]), [
      [{ nodeId: 'n1', phase: 'L1' }, 2], [{ nodeId: 'n1', phase: 'L2' }, 1],
    ]);
  });

  it('accepts gzip, CRLF, comments, blank lines and a missing Content-Type', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const body = `# comment\r\n\r\npower,nodeId=n1 p=1 ${ns(T0 - 2000)}\r\npower,nodeId=n1 p=2 ${ns(T0 - 1000)}\r\n`;
    assert.equal((await writeGzip(app, u.token, body)).status, 204);
    const plain = await app.request('POST', `/v1/telemetry?${V1}`, { token: u.token, raw: `power,nodeId=n1 p=3 ${ns(T0 - 500)}` });
    assert.equal(plain.status, 204, plain.text);
    assert.deepEqual(await pointsOf(app, u.token, ['p']), [[iso(T0 - 2000), 1], [iso(T0 - 1000), 2], [iso(T0 - 500), 3]]);
  });

  it('ignores the InfluxDB parameters it does not use', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`, `${V1}&u=someone&p=secret&consistency=one`);
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`, 'org=o&bucket=b&orgID=0123');
  });

  it('allows writing with nodeInfluxSeries editable, without monitorManagement', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await userWithNodes(app, { n1: { edits: ['nodeInfluxSeries'] } });
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`);
  });

  it('an empty body stores nothing and creates no namespace', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    assert.equal((await write(app, u.token, '')).status, 204);
    assert.equal((await write(app, u.token, '# only a comment\n\n')).status, 204);
    assert.equal(await countRows(app, 'telemetry_namespaces'), 0);
  });

  it('counts the points written in /metrics', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 2000)}\npower,nodeId=n1 p=2 ${ns(T0 - 1000)}`);
    const metrics = await app.request('GET', '/metrics');
    assert.match(metrics.text, /gridkeeper_telemetry_points_written_total 2/);
  });
});

describe('telemetry write: validation', () => {
  it('a malformed line is 400 LINE_PROTOCOL naming it, and nothing of the request is stored', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const body = `power,nodeId=n1 p=1 ${ns(T0 - 3000)}\n\n# comment\npower,nodeId=n1 p= ${ns(T0 - 2000)}\npower,nodeId=n1 p=3`;
    const err = assertError(await write(app, u.token, body), 400, 'LINE_PROTOCOL');
    assert.match(err.message, /^line 4: missing value for field "p"/);
    assert.equal(await storedPoints(app), 0);
    assert.equal(await countRows(app, 'telemetry_namespaces'), 0);
  });

  it('a body of many pieces (decoded 32 KB at a time): every point stored, an error far down named by its line', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const lines = Array.from({ length: 6000 }, (_, i) => `power,nodeId=n1,phase=L${i % 3} p=${i}.25,q=${i}i ${ns(T0 - 100_000 + i)}`);
    assert.ok(Buffer.byteLength(lines.join('\n')) > 8 * 32 * 1024);
    const bad = [...lines];
    bad[5000] = `power,nodeId=n1 p=\u0000 ${ns(T0)}`;
    bad[5500] = 'power,nodeId=n1 p=';
    assert.match(assertError(await write(app, u.token, bad.join('\n')), 400, 'LINE_PROTOCOL').message, /^line 5001: the NUL character/);
    const late = [...lines.slice(0, 5500), '# a comment', 'power,nodeId=n1 p='].join('\n');
    assert.match(assertError(await write(app, u.token, late), 400, 'LINE_PROTOCOL').message, /^line 5502: missing value for field "p"/);
    assert.equal(await storedPoints(app), 0);
    await writeOk(app, u.token, lines.join('\n'));
    assert.equal(await storedPoints(app), 6000);
    const points = await pointsOf(app, u.token, ['p', 'q']);
    assert.equal(points.length, 6000);
    assert.deepEqual(points.map((p) => p[1]).sort((a, b) => Number(a) - Number(b)), lines.map((_, i) => i + 0.25));
  });

  it('refuses lines without a nodeId tag, and the other malformed lines', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const cases: Array<[string, RegExp]> = [
      ['power p=1', /^line 1: missing nodeId tag/],
      ['power,nodeId=n1', /^line 1: no fields/],
      ['power,nodeId=n1 p=1 1.5', /^line 1: bad timestamp/],
      ['power,nodeId=n1 p="open', /^line 1: unterminated string/],
      ['power,nodeId=n1 p=1,p=2', /^line 1: duplicate field "p"/],
      ['power,nodeId=n1 p=99999999999999999999i', /^line 1: integer out of range/],
      ['power,nodeId=n1 p=18446744073709551615u', /^line 1: unsigned value of field "p" is above 9223372036854775807/],
      ['power,nodeId=n1 time=1', /^line 1: the field name "time" is reserved/],
    ];
    for (const [line, message] of cases) {
      // the bad line comes first: line 1
      assert.match(assertError(await write(app, u.token, `${line}\npower,nodeId=n1 ok=1 ${ns(T0)}`), 400, 'LINE_PROTOCOL').message, message, line);
    }
    assert.equal(await storedPoints(app), 0);
  });

  it('refuses a field whose type differs from the stored one (and within one request)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await writeOk(app, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 2000)}`);
    const err = assertError(await write(app, u.token, `power,nodeId=n1 q=1 ${ns(T0 - 1500)}\npower,nodeId=n1 p=1i ${ns(T0 - 1000)}`), 400, 'LINE_PROTOCOL');
    assert.equal(err.message, 'line 2: field type conflict: "p" of measurement "power" is float, got integer; nothing was stored');
    const again = assertError(await write(app, u.token, `power,nodeId=n1 r="x" ${ns(T0 - 900)}\npower,nodeId=n1 r=true ${ns(T0 - 800)}`), 400, 'LINE_PROTOCOL');
    assert.match(again.message, /^line 2: field type conflict: "r" of measurement "power" is string, got boolean/);
    // the refused requests left no trace: q and r are unknown fields, one point stored
    assert.equal(await storedPoints(app), 1);
    const fields = (await app.deps.db.all(sql<{ field: string }>`SELECT field FROM telemetry_fields ORDER BY ordinal`)).map((r) => r.field);
    assert.deepEqual(fields, ['p']);
    // and the store still works after the rollbacks
    await writeOk(app, u.token, `power,nodeId=n1 q=2 ${ns(T0 - 700)}`);
    assert.deepEqual(await pointsOf(app, u.token, ['p', 'q']), [[iso(T0 - 2000), 1, null], [iso(T0 - 700), null, 2]]);
  });

  it('needs a namespace, one form only; unknown parameters are 400', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const line = `power,nodeId=n1 p=1 ${ns(T0)}`;
    assert.match(assertError(await write(app, u.token, line, ''), 400, 'BAD_REQUEST').message, /missing db/);
    assert.match(assertError(await write(app, u.token, line, 'db=a&org=b&bucket=c'), 400, 'BAD_REQUEST').message, /not several/);
    assert.match(assertError(await write(app, u.token, line, 'org=b'), 400, 'BAD_REQUEST').message, /together/);
    assert.match(assertError(await write(app, u.token, line, `${V1}&precison=ms`), 400, 'BAD_REQUEST').message, /precison/);
    assert.match(assertError(await write(app, u.token, line, `${V1}&precision=m`), 400, 'BAD_REQUEST').message, /precision/);
  });

  it('refuses bodies over 32 MiB, also after gzip decompression (a gzip bomb allocates no more)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const big = Buffer.alloc(32 * MIB + 1, 0x61);
    assertError(await write(app, u.token, big), 413, 'PAYLOAD_TOO_LARGE');
    const bomb = gzipSync(Buffer.alloc(64 * MIB, 0x61));
    assert.ok(bomb.length < MIB);
    const before = process.memoryUsage().arrayBuffers;
    const err = assertError(await write(app, u.token, bomb, V1, { 'content-encoding': 'gzip' }), 413, 'PAYLOAD_TOO_LARGE');
    assert.match(err.message, /after gzip decompression/);
    assert.ok(process.memoryUsage().arrayBuffers - before < 40 * MIB);
  });

  it('refuses broken gzip, unknown encodings and invalid UTF-8', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    assertError(await write(app, u.token, 'not gzip at all', V1, { 'content-encoding': 'gzip' }), 400, 'BAD_REQUEST');
    assertError(await write(app, u.token, 'power,nodeId=n1 p=1', V1, { 'content-encoding': 'br' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assertError(await write(app, u.token, new Uint8Array([0x70, 0xff, 0xfe])), 400, 'BAD_REQUEST');
  });
});

/** Sends a raw HTTP/1.1 request in the given pieces (a pause between them) and returns the whole answer as text. */
function rawExchange(port: number, head: string, pieces: Uint8Array[], endEarly = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => { answer += d.toString('utf8'); });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.on('connect', async () => {
      socket.write(head);
      for (const piece of pieces) {
        socket.write(piece);
        await new Promise((r) => setTimeout(r, 2));
      }
      if (endEarly) socket.destroy();
    });
  });
}

describe('telemetry write: over a socket', () => {
  it('a body arriving in small pieces (characters cut between them) is stored whole; one cut short stores nothing and harms nothing', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const { app: hono } = createApp(app.deps);
    const server = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' });
    t.after(() => new Promise<void>((done) => { server.close(() => done()); }));
    await new Promise((ready) => { server.once('listening', ready); });
    const port = (server.address() as AddressInfo).port;
    const lines = Array.from({ length: 3000 }, (_, i) => `power,nodeId=n1,site=Zürich\\ 😀 p=${i}.5,label="é${i}€" ${ns(T0 - 50_000 + i)}`);
    const body = Buffer.from(lines.join('\n'));
    const head = (length: number) => `POST /v1/telemetry?${V1} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${u.token}\r\n`
      + `Content-Type: text/plain\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
    // pieces of 7, 1000 and 70,001 bytes: multi-byte characters and lines fall across them
    const cut = (size: number) => Array.from({ length: Math.ceil(body.length / size) }, (_, i) => body.subarray(i * size, (i + 1) * size));
    const short = await rawExchange(port, head(body.length), cut(1000).slice(0, 20), true);
    assert.equal(short, '');
    assert.equal(await storedPoints(app), 0);
    for (const size of [70_001, 1000]) assert.match(await rawExchange(port, head(body.length), cut(size)), /^HTTP\/1\.1 204 /);
    const tiny = lines.slice(0, 40).join('\n');
    assert.match(await rawExchange(port, head(Buffer.byteLength(tiny)), cut(7).slice(0, Math.ceil(Buffer.byteLength(tiny) / 7)).map((p, i, all) => i === all.length - 1 ? Buffer.from(tiny).subarray(i * 7) : p)), /^HTTP\/1\.1 204 /);
    assert.equal(await storedPoints(app), 3000);
    const points = await pointsOf(app, u.token, ['p', 'label']);
    assert.deepEqual(points.map((p) => [p[1], p[2]]).sort((a, b) => Number(a[0]) - Number(b[0])), lines.map((_, i) => [i + 0.5, `é${i}€`]));
    // invalid UTF-8 in a later chunk: 400, nothing more stored
    const broken = Buffer.concat([body.subarray(0, 100_000), Buffer.from([0xff]), body.subarray(100_000)]);
    assert.match(await rawExchange(port, head(broken.length), [broken.subarray(0, 50_000), broken.subarray(50_000)]), /^HTTP\/1\.1 400 [\s\S]*invalid UTF-8/);
    assert.equal(await storedPoints(app), 3000);
  });
});

describe('telemetry write: security', () => {
  it('requires authentication', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    await assertRequiresAuth(app, 'POST', `/v1/telemetry?${V1}`);
  });

  it('an unauthorized nodeId is 403 naming it, and nothing of the request is stored', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    await deviceOf(app, 'other');
    const body = `power,nodeId=n1 p=1 ${ns(T0 - 2000)}\npower,nodeId=other p=2 ${ns(T0 - 1000)}\npower,nodeId=n1 p=3 ${ns(T0 - 500)}`;
    const err = assertError(await write(app, u.token, body), 403, 'FORBIDDEN');
    assert.match(err.message, /nodeId "other"/);
    assert.equal(await storedPoints(app), 0);
  });

  it('a nodeId of no device is unauthorized', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    assert.match(assertError(await write(app, u.token, `power,nodeId=ghost p=1 ${ns(T0)}`), 403, 'FORBIDDEN').message, /"ghost"/);
    // admin (root role) has no monitors relation to the device either
    await deviceOf(app, 'n2');
    assertError(await write(app, app.adminToken, `power,nodeId=n2 p=1 ${ns(T0)}`), 403, 'FORBIDDEN');
  });

  it('read access, or other editable properties, are not enough to write', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const reader = await userWithNodes(app, { n1: { reads: ['nodeInfluxSeries'], edits: ['name'] } });
    assertError(await write(app, reader.token, `power,nodeId=n1 p=1 ${ns(T0)}`), 403, 'FORBIDDEN');
  });

  it('a malformed line anywhere is reported before an unauthorized nodeId (400 before 403)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const err = assertError(await write(app, u.token, `power,nodeId=ghost p=1 ${ns(T0)}\npower,nodeId=n1 p=`), 400, 'LINE_PROTOCOL');
    assert.match(err.message, /^line 2:/);
  });

  it('a right taken or given between two requests holds for the next one, writes and queries (on PostgreSQL on every node)', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1');
    const device = await deviceOf(app, 'n1');
    const nodes = [app];
    if (testBackend() === 'postgres') {
      const other = await app.anotherNode();
      t.after(() => other.close());
      nodes.push(other);
    }
    const q = { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } };
    const readable = async (node: TestApp) => {
      const body = await queryOk(node, u.token, q);
      return body.error !== 'Unauthorized' && body.series?.[0]?.values.length > 0;
    };
    // every node writes and reads (and keeps what it learnt of the user's rights)
    for (const [i, node] of nodes.entries()) {
      await writeOk(node, u.token, `power,nodeId=n1 p=${i} ${ns(T0 - 10_000 + i)}`);
      assert.equal(await readable(node), true);
    }
    // monitorManagement taken away: the device stays readable, its telemetry no longer writable
    await app.deps.db.run(sql`UPDATE monitors SET monitor_management = ${0} WHERE role_id = ${u.roleId} AND device_id = ${device}`);
    for (const node of nodes) {
      assertError(await write(node, u.token, `power,nodeId=n1 p=9 ${ns(T0 - 1000)}`), 403, 'FORBIDDEN');
      assert.equal(await readable(node), true);
    }
    // the relation deleted: not readable either
    await app.deps.db.run(sql`DELETE FROM monitors WHERE role_id = ${u.roleId} AND device_id = ${device}`);
    for (const node of nodes) assert.equal(await readable(node), false);
    // and given back: writable and readable again
    await addMonitors(app, u.roleId, device, { mm: true });
    for (const [i, node] of nodes.entries()) {
      await writeOk(node, u.token, `power,nodeId=n1 p=${10 + i} ${ns(T0 - 500 + i)}`);
      assert.equal(await readable(node), true);
    }
    assert.equal(await storedPoints(app), nodes.length * 2);
  });

  it('checks each distinct nodeId once per request, not once per line', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const u = await writer(app, 'n1', 'n2');
    const lines = Array.from({ length: 500 }, (_, i) => `power,nodeId=n${1 + (i % 2)},k=${i % 7} p=${i} ${ns(T0 - 10_000 + i)}`);
    // Counts the device lookups the write's transaction makes (every statement of it goes through its handle).
    const db = app.deps.db;
    const tx = db.tx;
    let deviceLookups = 0;
    const spy = (handle: Db): Db => new Proxy(handle, {
      get(target, key, receiver) {
        if (key !== 'all' && key !== 'get') return Reflect.get(target, key, receiver);
        return (q: Query<unknown>) => {
          if (/FROM devices WHERE node_id/.test(compileQuery(q).sql)) deviceLookups++;
          return key === 'all' ? target.all(q) : target.get(q);
        };
      },
    });
    db.tx = <T>(fn: (handle: Db) => Promise<T>): Promise<T> => tx.call(db, (handle: Db) => fn(spy(handle))) as Promise<T>;
    try {
      await writeOk(app, u.token, lines.join('\n'));
    } finally {
      db.tx = tx;
    }
    assert.equal(deviceLookups, 1);
    assert.equal(await storedPoints(app), 500);
  });
});
