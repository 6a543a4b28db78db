// POST /v1/telemetry: line protocol in, 204 out; all-or-nothing (400 LINE_PROTOCOL with the line, 403 naming the
// nodeId), gzip, limits, namespaces from the query parameters, overwrite semantics.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { makeTestApp, assertError, T0, type TestApp } from '../support/app.ts';
import { assertRequiresAuth } from '../support/auth-helpers.ts';
import {
  FROM_V1, V1, countPoints, deviceOf, iso, ns, queryOk, tableNames, userWithNodes, write, writeGzip, writeOk, writer,
} from './fixtures.ts';

const MIB = 1024 * 1024;

/** Every point of nodeId n1 in measurement `power` of the default test namespace, as [time, ...fields]. */
async function pointsOf(t: TestApp, token: string, select: string[], nodeId = 'n1', from: object = FROM_V1): Promise<unknown[][]> {
  const body = await queryOk(t, token, { select, from, where: { tags: { nodeId }, time: [{ operator: '>=', value: T0 - 86_400_000 * 3 }] } });
  return (body.series ?? []).flatMap((s: { values: unknown[][] }) => s.values);
}

function storedPoints(t: TestApp): number {
  return tableNames(t).length === 0 ? 0 : countPoints(t);
}

describe('telemetry write: happy', () => {
  it('stores every field type and answers 204 with an empty body', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    const res = await write(t, u.token, `power,nodeId=n1 f=1.5,i=-7i,u=7u,s="a, b=c",b=true ${ns(T0 - 1000)}\n`);
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    assert.deepEqual(await pointsOf(t, u.token, ['f', 'i', 'u', 's', 'b']), [[iso(T0 - 1000), 1.5, -7, 7, 'a, b=c', true]]);
    t.close();
  });

  it('keeps int64 values exact end to end', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    await writeOk(t, u.token, `power,nodeId=n1 big=9223372036854775807i,small=-9223372036854775808i,u=9223372036854775807u ${ns(T0 - 1000)}`);
    const res = await t.request('POST', '/v1/telemetry/query', { token: u.token, body: { select: ['big', 'small', 'u'], from: FROM_V1, where: { tags: { nodeId: 'n1' } }, limit: 1 } });
    assert.equal(res.status, 200);
    assert.match(res.text, /,9223372036854775807,-9223372036854775808,9223372036854775807\]/);
    t.close();
  });

  it('accepts each precision and points without a timestamp (the server time)', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    const at = T0 - 60_000;
    await writeOk(t, u.token, `power,nodeId=n1 p=1 ${at}000000`, `${V1}&precision=ns`);
    await writeOk(t, u.token, `power,nodeId=n1 p=2 ${at + 1}000`, `${V1}&precision=us`);
    await writeOk(t, u.token, `power,nodeId=n1 p=3 ${at + 2}`, `${V1}&precision=ms`);
    await writeOk(t, u.token, `power,nodeId=n1 p=4 ${(at + 3000) / 1000}`, `${V1}&precision=s`);
    t.clock.set(T0 - 10_000);
    await writeOk(t, u.token, 'power,nodeId=n1 p=5');
    t.clock.set(T0);
    assert.deepEqual(await pointsOf(t, u.token, ['p']), [
      [iso(at), 1], [iso(at + 1), 2], [iso(at + 2), 3], [iso(at + 3000), 4], [iso(T0 - 10_000), 5],
    ]);
    t.close();
  });

  it('keeps nanoseconds: two points within one millisecond stay two points', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    await writeOk(t, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 5)}\npower,nodeId=n1 p=2 ${BigInt(T0 - 5) * 1_000_000n + 1234n}`);
    assert.deepEqual(await pointsOf(t, u.token, ['p']), [[iso(T0 - 5), 1], ['2025-12-31T23:59:59.995001234Z', 2]]);
    t.close();
  });

  it('re-writing a (series, time) overwrites the given fields and keeps the others', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    const at = ns(T0 - 1000);
    await writeOk(t, u.token, `power,nodeId=n1 a=1,b=2 ${at}`);
    await writeOk(t, u.token, `power,nodeId=n1 b=20,c=30 ${at}`);
    // within one request the last line wins, whatever the order of the rest of the body
    await writeOk(t, u.token, `power,nodeId=n1 c=31 ${at}\npower,nodeId=n1 a=0 ${ns(T0 - 2000)}\npower,nodeId=n1 c=32 ${at}`);
    assert.deepEqual(await pointsOf(t, u.token, ['a', 'b', 'c']), [[iso(T0 - 2000), 0, null, null], [iso(T0 - 1000), 1, 20, 32]]);
    t.close();
  });

  it('a series is its measurement and full tag set, whatever the tag order', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    await writeOk(t, u.token, [
      `power,nodeId=n1,phase=L1 p=1 ${ns(T0 - 3000)}`,
      `power,phase=L1,nodeId=n1 p=2 ${ns(T0 - 2000)}`,
      `power,nodeId=n1,phase=L2 p=3 ${ns(T0 - 1000)}`,
    ].join('\n'));
    assert.equal(t.deps.db.sqlite.prepare('SELECT count(*) FROM telemetry_series').pluck().get(), 2);
    const body = await queryOk(t, u.token, { select: ['p'], from: FROM_V1, where: { tags: { nodeId: 'n1' } } });
    assert.deepEqual(body.series.map((s: { tags: object; values: unknown[][] }) => [s.tags, s.values.length]), [
      [{ nodeId: 'n1', phase: 'L1' }, 2], [{ nodeId: 'n1', phase: 'L2' }, 1],
    ]);
    t.close();
  });

  it('accepts gzip, CRLF, comments, blank lines and a missing Content-Type', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    const body = `# comment\r\n\r\npower,nodeId=n1 p=1 ${ns(T0 - 2000)}\r\npower,nodeId=n1 p=2 ${ns(T0 - 1000)}\r\n`;
    assert.equal((await writeGzip(t, u.token, body)).status, 204);
    const plain = await t.request('POST', `/v1/telemetry?${V1}`, { token: u.token, raw: `power,nodeId=n1 p=3 ${ns(T0 - 500)}` });
    assert.equal(plain.status, 204, plain.text);
    assert.deepEqual(await pointsOf(t, u.token, ['p']), [[iso(T0 - 2000), 1], [iso(T0 - 1000), 2], [iso(T0 - 500), 3]]);
    t.close();
  });

  it('ignores the InfluxDB parameters it does not use', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    await writeOk(t, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`, `${V1}&u=someone&p=secret&consistency=one`);
    await writeOk(t, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`, 'org=o&bucket=b&orgID=0123');
    t.close();
  });

  it('allows writing with nodeInfluxSeries editable, without monitorManagement', async () => {
    const t = await makeTestApp();
    const u = await userWithNodes(t, { n1: { edits: ['nodeInfluxSeries'] } });
    await writeOk(t, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 1000)}`);
    t.close();
  });

  it('an empty body stores nothing and creates no namespace', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    assert.equal((await write(t, u.token, '')).status, 204);
    assert.equal((await write(t, u.token, '# only a comment\n\n')).status, 204);
    assert.equal(t.deps.db.sqlite.prepare('SELECT count(*) FROM telemetry_namespaces').pluck().get(), 0);
    t.close();
  });

  it('counts the points written in /metrics', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    await writeOk(t, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 2000)}\npower,nodeId=n1 p=2 ${ns(T0 - 1000)}`);
    const metrics = await t.request('GET', '/metrics');
    assert.match(metrics.text, /gridkeeper_telemetry_points_written_total 2/);
    t.close();
  });
});

describe('telemetry write: validation', () => {
  it('a malformed line is 400 LINE_PROTOCOL naming it, and nothing of the request is stored', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    const body = `power,nodeId=n1 p=1 ${ns(T0 - 3000)}\n\n# comment\npower,nodeId=n1 p= ${ns(T0 - 2000)}\npower,nodeId=n1 p=3`;
    const err = assertError(await write(t, u.token, body), 400, 'LINE_PROTOCOL');
    assert.match(err.message, /^line 4: missing value for field "p"/);
    assert.equal(storedPoints(t), 0);
    assert.equal(t.deps.db.sqlite.prepare('SELECT count(*) FROM telemetry_namespaces').pluck().get(), 0);
    t.close();
  });

  it('refuses lines without a nodeId tag, and the other malformed lines', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
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
      assert.match(assertError(await write(t, u.token, `${line}\npower,nodeId=n1 ok=1 ${ns(T0)}`), 400, 'LINE_PROTOCOL').message, message, line);
    }
    assert.equal(storedPoints(t), 0);
    t.close();
  });

  it('refuses a field whose type differs from the stored one (and within one request)', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    await writeOk(t, u.token, `power,nodeId=n1 p=1 ${ns(T0 - 2000)}`);
    const err = assertError(await write(t, u.token, `power,nodeId=n1 q=1 ${ns(T0 - 1500)}\npower,nodeId=n1 p=1i ${ns(T0 - 1000)}`), 400, 'LINE_PROTOCOL');
    assert.equal(err.message, 'line 2: field type conflict: "p" of measurement "power" is float, got integer; nothing was stored');
    const again = assertError(await write(t, u.token, `power,nodeId=n1 r="x" ${ns(T0 - 900)}\npower,nodeId=n1 r=true ${ns(T0 - 800)}`), 400, 'LINE_PROTOCOL');
    assert.match(again.message, /^line 2: field type conflict: "r" of measurement "power" is string, got boolean/);
    // the refused requests left no trace: q and r are unknown fields, one point stored
    assert.equal(storedPoints(t), 1);
    const fields = t.deps.db.sqlite.prepare('SELECT field FROM telemetry_fields ORDER BY ordinal').pluck().all();
    assert.deepEqual(fields, ['p']);
    // and the store still works after the rollbacks
    await writeOk(t, u.token, `power,nodeId=n1 q=2 ${ns(T0 - 700)}`);
    assert.deepEqual(await pointsOf(t, u.token, ['p', 'q']), [[iso(T0 - 2000), 1, null], [iso(T0 - 700), null, 2]]);
    t.close();
  });

  it('needs a namespace, one form only; unknown parameters are 400', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    const line = `power,nodeId=n1 p=1 ${ns(T0)}`;
    assert.match(assertError(await write(t, u.token, line, ''), 400, 'BAD_REQUEST').message, /missing db/);
    assert.match(assertError(await write(t, u.token, line, 'db=a&org=b&bucket=c'), 400, 'BAD_REQUEST').message, /not several/);
    assert.match(assertError(await write(t, u.token, line, 'org=b'), 400, 'BAD_REQUEST').message, /together/);
    assert.match(assertError(await write(t, u.token, line, `${V1}&precison=ms`), 400, 'BAD_REQUEST').message, /precison/);
    assert.match(assertError(await write(t, u.token, line, `${V1}&precision=m`), 400, 'BAD_REQUEST').message, /precision/);
    t.close();
  });

  it('refuses bodies over 32 MiB, also after gzip decompression (a gzip bomb allocates no more)', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    const big = Buffer.alloc(32 * MIB + 1, 0x61);
    assertError(await write(t, u.token, big), 413, 'PAYLOAD_TOO_LARGE');
    const bomb = gzipSync(Buffer.alloc(64 * MIB, 0x61));
    assert.ok(bomb.length < MIB);
    const before = process.memoryUsage().arrayBuffers;
    const err = assertError(await write(t, u.token, bomb, V1, { 'content-encoding': 'gzip' }), 413, 'PAYLOAD_TOO_LARGE');
    assert.match(err.message, /after gzip decompression/);
    assert.ok(process.memoryUsage().arrayBuffers - before < 40 * MIB);
    t.close();
  });

  it('refuses broken gzip, unknown encodings and invalid UTF-8', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    assertError(await write(t, u.token, 'not gzip at all', V1, { 'content-encoding': 'gzip' }), 400, 'BAD_REQUEST');
    assertError(await write(t, u.token, 'power,nodeId=n1 p=1', V1, { 'content-encoding': 'br' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assertError(await write(t, u.token, new Uint8Array([0x70, 0xff, 0xfe])), 400, 'BAD_REQUEST');
    t.close();
  });
});

describe('telemetry write: security', () => {
  it('requires authentication', async () => {
    const t = await makeTestApp();
    await assertRequiresAuth(t, 'POST', `/v1/telemetry?${V1}`);
    t.close();
  });

  it('an unauthorized nodeId is 403 naming it, and nothing of the request is stored', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    deviceOf(t, 'other');
    const body = `power,nodeId=n1 p=1 ${ns(T0 - 2000)}\npower,nodeId=other p=2 ${ns(T0 - 1000)}\npower,nodeId=n1 p=3 ${ns(T0 - 500)}`;
    const err = assertError(await write(t, u.token, body), 403, 'FORBIDDEN');
    assert.match(err.message, /nodeId "other"/);
    assert.equal(storedPoints(t), 0);
    t.close();
  });

  it('a nodeId of no device is unauthorized', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    assert.match(assertError(await write(t, u.token, `power,nodeId=ghost p=1 ${ns(T0)}`), 403, 'FORBIDDEN').message, /"ghost"/);
    // admin (root role) has no monitors relation to the device either
    deviceOf(t, 'n2');
    assertError(await write(t, t.adminToken, `power,nodeId=n2 p=1 ${ns(T0)}`), 403, 'FORBIDDEN');
    t.close();
  });

  it('read access, or other editable properties, are not enough to write', async () => {
    const t = await makeTestApp();
    const reader = await userWithNodes(t, { n1: { reads: ['nodeInfluxSeries'], edits: ['name'] } });
    assertError(await write(t, reader.token, `power,nodeId=n1 p=1 ${ns(T0)}`), 403, 'FORBIDDEN');
    t.close();
  });

  it('a malformed line anywhere is reported before an unauthorized nodeId (400 before 403)', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1');
    const err = assertError(await write(t, u.token, `power,nodeId=ghost p=1 ${ns(T0)}\npower,nodeId=n1 p=`), 400, 'LINE_PROTOCOL');
    assert.match(err.message, /^line 2:/);
    t.close();
  });

  it('checks each distinct nodeId once per request, not once per line', async () => {
    const t = await makeTestApp();
    const u = await writer(t, 'n1', 'n2');
    const lines = Array.from({ length: 500 }, (_, i) => `power,nodeId=n${1 + (i % 2)},k=${i % 7} p=${i} ${ns(T0 - 10_000 + i)}`);
    const db = t.deps.db;
    const prepare = db.prepare;
    let deviceLookups = 0;
    db.prepare = (sql: string) => {
      if (/FROM devices WHERE node_id/.test(sql)) deviceLookups++;
      return prepare(sql);
    };
    try {
      await writeOk(t, u.token, lines.join('\n'));
    } finally {
      db.prepare = prepare;
    }
    assert.equal(deviceLookups, 1);
    assert.equal(storedPoints(t), 500);
    t.close();
  });
});
