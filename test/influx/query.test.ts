// The InfluxDB 1.x door, queries: GET|POST /query with InfluxQL — SHOW and SELECT answers in InfluxDB's shape,
// rights (other series are as if absent), Grafana's query shape, fill modes, functions, epoch, params, several
// statements, errors, and the cost limiter.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appOpener, type TestApp } from '../support/app.ts';

import { sql } from 'kysely';
import { setTier, userWithNodes, writer } from '../telemetry/fixtures.ts';

const openApp = appOpener();

const T = Date.UTC(2025, 11, 31, 23, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const s10 = (i: number) => T + i * 10_000;

/** Node a: power = i, node b: power = 10 i, at T + 10 i s (i = 0..5); b also writes `other`. */
async function fixture() {
  const t = await openApp();
  const w = await writer(t, 'a', 'b');
  let body = '';
  for (let i = 0; i < 6; i++) {
    body += `energy,nodeId=a,phase=L1 power=${i},n=${i}i ${s10(i)}\n`;
    body += `energy,nodeId=b power=${10 * i} ${s10(i)}\n`;
  }
  body += `other,nodeId=b v=1 ${T}\n`;
  const res = await t.request('POST', '/write?db=site&precision=ms', { raw: body, headers: { authorization: `Bearer ${w.token}` } });
  assert.equal(res.status, 204, res.text);
  const reader = await userWithNodes(t, { a: { reads: [] } });
  return { t, writerToken: w.token, readerToken: reader.token };
}

async function influxQuery(t: TestApp, token: string, q: string, extra = '', method = 'GET') {
  return t.request(method, `/query?db=site${extra}&q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${token}` } });
}

async function results(t: TestApp, token: string, q: string, extra = ''): Promise<any[]> {
  const res = await influxQuery(t, token, q, extra);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get('x-influxdb-version'), '1.8.10');
  return res.body.results;
}

const range = `time >= ${T}ms AND time <= ${s10(6)}ms`;

describe('influx door: /query SHOW', () => {
  test('SHOW statements list only what the caller may read; root sees everything', async () => {
    const { t, readerToken } = await fixture();
    const q = 'SHOW DATABASES; SHOW MEASUREMENTS; SHOW TAG KEYS; SHOW TAG VALUES WITH KEY = "nodeId"; SHOW FIELD KEYS; SHOW SERIES; SHOW RETENTION POLICIES';
    assert.deepEqual(await results(t, readerToken, q), [
      { statement_id: 0, series: [{ name: 'databases', columns: ['name'], values: [['site']] }] },
      { statement_id: 1, series: [{ name: 'measurements', columns: ['name'], values: [['energy']] }] },
      { statement_id: 2, series: [{ name: 'energy', columns: ['tagKey'], values: [['nodeId'], ['phase']] }] },
      { statement_id: 3, series: [{ name: 'energy', columns: ['key', 'value'], values: [['nodeId', 'a']] }] },
      { statement_id: 4, series: [{ name: 'energy', columns: ['fieldKey', 'fieldType'], values: [['n', 'integer'], ['power', 'float']] }] },
      { statement_id: 5, series: [{ columns: ['key'], values: [['energy,nodeId=a,phase=L1']] }] },
      { statement_id: 6, series: [{ columns: ['name', 'duration', 'shardGroupDuration', 'replicaN', 'default'], values: [['autogen', '0s', '24h0m0s', 1, true]] }] },
    ]);
    const root = await results(t, t.adminToken, 'SHOW MEASUREMENTS; SHOW TAG VALUES FROM energy WITH KEY =~ /node/; SHOW SERIES');
    assert.deepEqual(root, [
      { statement_id: 0, series: [{ name: 'measurements', columns: ['name'], values: [['energy'], ['other']] }] },
      { statement_id: 1, series: [{ name: 'energy', columns: ['key', 'value'], values: [['nodeId', 'a'], ['nodeId', 'b']] }] },
      { statement_id: 2, series: [{ columns: ['key'], values: [['energy,nodeId=a,phase=L1'], ['energy,nodeId=b'], ['other,nodeId=b']] }] },
    ]);
  });

  test("the SHOW statements Grafana's query editor sends", async () => {
    const { t, readerToken } = await fixture();
    const q = 'SHOW RETENTION POLICIES on "site"; SHOW MEASUREMENTS WITH MEASUREMENT =~ /ener/ LIMIT 100; SHOW FIELD KEYS FROM "energy"; '
      + 'SHOW TAG KEYS FROM "energy"; SHOW TAG VALUES FROM "energy" WITH KEY = "nodeId" WHERE "phase" =~ /^L1$/; SHOW MEASUREMENTS LIMIT 1 OFFSET 1';
    assert.deepEqual(await results(t, t.adminToken, q), [
      { statement_id: 0, series: [{ columns: ['name', 'duration', 'shardGroupDuration', 'replicaN', 'default'], values: [['autogen', '0s', '24h0m0s', 1, true]] }] },
      { statement_id: 1, series: [{ name: 'measurements', columns: ['name'], values: [['energy']] }] },
      { statement_id: 2, series: [{ name: 'energy', columns: ['fieldKey', 'fieldType'], values: [['n', 'integer'], ['power', 'float']] }] },
      { statement_id: 3, series: [{ name: 'energy', columns: ['tagKey'], values: [['nodeId'], ['phase']] }] },
      { statement_id: 4, series: [{ name: 'energy', columns: ['key', 'value'], values: [['nodeId', 'a']] }] },
      { statement_id: 5, series: [{ name: 'measurements', columns: ['name'], values: [['other']] }] },
    ]);
    // the reader sees neither `other` nor node b
    assert.deepEqual(await results(t, readerToken, 'SHOW MEASUREMENTS LIMIT 1 OFFSET 1; SHOW TAG VALUES FROM "energy" WITH KEY = "nodeId"'), [
      { statement_id: 0 },
      { statement_id: 1, series: [{ name: 'energy', columns: ['key', 'value'], values: [['nodeId', 'a']] }] },
    ]);
  });

  test('a user without devices sees no database', async () => {
    const { t } = await fixture();
    const nobody = await t.createUser('nobody@test');
    assert.deepEqual(await results(t, nobody.token, 'SHOW DATABASES; SHOW MEASUREMENTS'), [
      { statement_id: 0, series: [{ name: 'databases', columns: ['name'] }] },
      { statement_id: 1 },
    ]);
  });
});

describe('influx door: /query SELECT', () => {
  test("Grafana's generated query: one series per nodeId the caller may read, fill(null)", async () => {
    const { t, readerToken } = await fixture();
    const q = `SELECT mean("power") FROM "energy" WHERE ("nodeId" =~ /^(a|b)$/) AND time >= ${T}ms and time <= ${s10(6)}ms GROUP BY time(20s), "nodeId" fill(null)`;
    const series = (node: string, values: unknown[][]) => ({ name: 'energy', tags: { nodeId: node }, columns: ['time', 'mean'], values });
    const a = series('a', [[iso(T), 0.5], [iso(s10(2)), 2.5], [iso(s10(4)), 4.5], [iso(s10(6)), null]]);
    assert.deepEqual(await results(t, readerToken, q), [{ statement_id: 0, series: [a] }]);
    const b = series('b', [[iso(T), 5], [iso(s10(2)), 25], [iso(s10(4)), 45], [iso(s10(6)), null]]);
    assert.deepEqual(await results(t, t.adminToken, q), [{ statement_id: 0, series: [a, b] }]);
  });

  test('GROUP BY time over two shards and two fields: each window sums both days\' points of each field', async () => {
    const t = await openApp();
    const w = await writer(t, 'a');
    // 23:00, 23:30, 00:00 and 00:30 UTC: two days, so two shards of the 1-day default
    const HALF_HOUR = 1_800_000;
    const body = [1, 2, 4, 8].map((p, k) => `energy,nodeId=a power=${p},n=${10 * p}i ${T + k * HALF_HOUR}`).join('\n');
    const res = await t.request('POST', '/write?db=site&precision=ms', { raw: body, headers: { authorization: `Bearer ${w.token}` } });
    assert.equal(res.status, 204, res.text);
    assert.deepEqual(await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM telemetry_shards`), { n: 2 });
    const q = `SELECT mean(power), sum(n), count(power) FROM energy WHERE nodeId = 'a' AND time >= ${T}ms AND time < ${T + 4 * HALF_HOUR}ms GROUP BY time(1h)`;
    assert.deepEqual(await results(t, t.adminToken, q), [{ statement_id: 0, series: [{ name: 'energy', columns: ['time', 'mean', 'sum', 'count'],
      values: [[iso(T), 1.5, 30, 2], [iso(T + 2 * HALF_HOUR), 6, 120, 2]] }] }]);
  });

  test('series the caller may not read are as if absent', async () => {
    const { t, readerToken } = await fixture();
    assert.deepEqual(await results(t, readerToken, `SELECT * FROM energy WHERE nodeId = 'b'; SELECT * FROM other; SELECT count(power) FROM energy WHERE ${range}`), [
      { statement_id: 0 }, { statement_id: 1 },
      { statement_id: 2, series: [{ name: 'energy', columns: ['time', 'count'], values: [[iso(T), 6]] }] },
    ]);
    // a WHERE naming one nodeId reads only that nodeId's series: the same rule (b unreadable, a readable; an OR or a
    // cast to a field is no such WHERE), and the same answers as without the shortcut
    const pick = (where: string) => `SELECT power FROM energy WHERE ${where} AND ${range}`;
    assert.deepEqual(await results(t, readerToken, `${pick(`nodeId = 'b'`)}; ${pick(`'b' = nodeId AND power > 0`)}; ${pick(`nodeId = 'nobody'`)}`),
      [{ statement_id: 0 }, { statement_id: 1 }, { statement_id: 2 }]);
    const onlyA = await results(t, readerToken, `${pick(`nodeId = 'a'`)}; ${pick(`(nodeId = 'a' OR nodeId = 'b')`)}; ${pick(`nodeId =~ /^a$/`)}`);
    assert.equal(onlyA[0].series[0].values.length, 6);
    assert.deepEqual(onlyA.map((r: { series: unknown }) => r.series), [onlyA[0].series, onlyA[0].series, onlyA[0].series]);
    const both = await results(t, t.adminToken, `${pick(`nodeId = 'b'`)}; ${pick(`nodeId =~ /^b$/`)}; ${pick(`nodeId::field = 'b'`)}`);
    assert.deepEqual([both[0].series[0].values.length, both[1].series, both[2].series], [6, both[0].series, undefined]);
  });

  test('raw SELECT *: fields and tags as columns, series merged in time order, LIMIT/OFFSET, ORDER BY time DESC (the ascending order reversed)', async () => {
    const { t } = await fixture();
    const [r] = await results(t, t.adminToken, `SELECT * FROM energy WHERE ${range} ORDER BY time DESC LIMIT 3 OFFSET 1`);
    assert.deepEqual(r, { statement_id: 0, series: [{ name: 'energy', columns: ['time', 'n', 'nodeId', 'phase', 'power'], values: [
      [iso(s10(5)), 5, 'a', 'L1', 5], [iso(s10(4)), null, 'b', null, 40], [iso(s10(4)), 4, 'a', 'L1', 4],
    ] }] });
  });

  test('RFC3339 times keep nanoseconds without trailing zeros, whether SQLite or the engine writes the rows', async () => {
    const { t, writerToken } = await fixture();
    const body = `ns,nodeId=a v=1 ${T + 123}456789\nns,nodeId=a v=2 ${T + 1}500000\nns,nodeId=a v=3 ${T + 2}000001\nns,nodeId=a v=true ${T + 3}000000`;
    // a field keeps its first type: the boolean line refuses the whole body
    assert.equal((await t.request('POST', '/write?db=site', { raw: `ns,nodeId=a v=0 ${T}\n${body}`, headers: { authorization: `Bearer ${writerToken}` } })).status, 400);
    const ok = body.split('\n').slice(0, 3).join('\n');
    assert.equal((await t.request('POST', '/write?db=site', { raw: ok, headers: { authorization: `Bearer ${writerToken}` } })).status, 204);
    const expected = [['2025-12-31T23:00:00.0015Z', 2], ['2025-12-31T23:00:00.002000001Z', 3], ['2025-12-31T23:00:00.123456789Z', 1]];
    // one series, plain fields: SQLite writes the rows; with an expression the engine does
    const [plain, expr, desc] = await results(t, t.adminToken, `SELECT v FROM ns WHERE ${range}; SELECT v * 1 FROM ns WHERE ${range}; SELECT v FROM ns WHERE ${range} ORDER BY time DESC LIMIT 2 OFFSET 1`);
    assert.deepEqual(plain.series[0].values, expected);
    assert.deepEqual(expr.series[0].values, expected);
    assert.deepEqual(desc.series[0].values, [expected[1], expected[0]]);
    assert.equal((await t.deps.db.get(sql<{ n: number }>`SELECT count(*) AS n FROM telemetry_fields WHERE measurement = 'ns'`))!.n, 1);
  });

  test('field filters, arithmetic, aliases, casts', async () => {
    const { t } = await fixture();
    const [r] = await results(t, t.adminToken, `SELECT power * 2 + 1 AS x, "nodeId"::tag, n FROM energy WHERE power > 2 AND power <= 20 AND ${range}`);
    assert.deepEqual(r.series[0].columns, ['time', 'x', 'nodeId', 'n']);
    assert.deepEqual(r.series[0].values, [
      [iso(s10(1)), 21, 'b', null], [iso(s10(2)), 41, 'b', null], [iso(s10(3)), 7, 'a', 3], [iso(s10(4)), 9, 'a', 4], [iso(s10(5)), 11, 'a', 5],
    ]);
  });

  test('aggregates and selectors over the whole range; a lone selector answers with its point\'s time', async () => {
    const { t } = await fixture();
    const [agg, sel, pct] = await results(t, t.adminToken, `SELECT count(power), sum(power), mean(power), median(power), spread(power), stddev(power), mode(n) FROM energy WHERE nodeId = 'a' AND ${range}; `
      + `SELECT max(power) FROM energy WHERE ${range}; SELECT percentile(power, 50) FROM energy WHERE nodeId = 'b' AND ${range}`);
    assert.deepEqual(agg.series[0].columns, ['time', 'count', 'sum', 'mean', 'median', 'spread', 'stddev', 'mode']);
    assert.deepEqual(agg.series[0].values, [[iso(T), 6, 15, 2.5, 2.5, 5, Math.sqrt(17.5 / 5), 0]]);
    assert.deepEqual(sel.series[0].values, [[iso(s10(5)), 50]]);
    assert.deepEqual(pct.series[0].values, [[iso(s10(2)), 20]]);
  });

  test('fill(none), fill(0), fill(previous), fill(linear) over a gap', async () => {
    const { t } = await fixture();
    const q = (fill: string) => `SELECT max(power) FROM energy WHERE nodeId = 'a' AND (power < 2 OR power > 3) AND ${range} GROUP BY time(10s) fill(${fill})`;
    const values = async (fill: string) => (await results(t, t.adminToken, q(fill)))[0].series[0].values;
    assert.deepEqual(await values('none'), [[iso(T), 0], [iso(s10(1)), 1], [iso(s10(4)), 4], [iso(s10(5)), 5]]);
    assert.deepEqual(await values('0'), [[iso(T), 0], [iso(s10(1)), 1], [iso(s10(2)), 0], [iso(s10(3)), 0], [iso(s10(4)), 4], [iso(s10(5)), 5], [iso(s10(6)), 0]]);
    assert.deepEqual(await values('previous'), [[iso(T), 0], [iso(s10(1)), 1], [iso(s10(2)), 1], [iso(s10(3)), 1], [iso(s10(4)), 4], [iso(s10(5)), 5], [iso(s10(6)), 5]]);
    assert.deepEqual(await values('linear'), [[iso(T), 0], [iso(s10(1)), 1], [iso(s10(2)), 2], [iso(s10(3)), 3], [iso(s10(4)), 4], [iso(s10(5)), 5], [iso(s10(6)), null]]);
  });

  test('transformations over raw points and over GROUP BY time', async () => {
    const { t } = await fixture();
    const where = `WHERE nodeId = 'b' AND ${range}`;
    const [d, nd, diff, cs, ma, el, dm] = await results(t, t.adminToken, [
      `SELECT derivative(power, 1s) FROM energy ${where}`, `SELECT non_negative_derivative(power) FROM energy ${where}`,
      `SELECT difference(power) FROM energy ${where}`, `SELECT cumulative_sum(power) FROM energy ${where}`,
      `SELECT moving_average(power, 2) FROM energy ${where}`, `SELECT elapsed(power, 1s) FROM energy ${where}`,
      `SELECT derivative(mean(power), 10s) FROM energy ${where} GROUP BY time(20s)`,
    ].join('; '));
    const at = (f: (i: number) => number, from = 1) => Array.from({ length: 6 - from }, (_, k) => [iso(s10(k + from)), f(k + from)]);
    assert.deepEqual(d.series[0].values, at(() => 1));
    assert.deepEqual(nd.series[0].values, at(() => 1));
    assert.deepEqual(diff.series[0].values, at(() => 10));
    assert.deepEqual(cs.series[0].values, at((i) => 5 * i * (i + 1), 0));
    assert.deepEqual(ma.series[0].values, at((i) => 10 * i - 5));
    assert.deepEqual(el.series[0].values, at(() => 10));
    assert.deepEqual(dm.series[0].values, [[iso(s10(2)), 10], [iso(s10(4)), 10]]);
  });

  test('epoch output, several statements in a POST form body, bound parameters', async () => {
    const { t } = await fixture();
    const form = new URLSearchParams({
      q: `SELECT power FROM energy WHERE nodeId = $node AND ${range} LIMIT 2; SELECT power FROM energy WHERE nodeId = $node AND ${range} LIMIT 1`,
      db: 'site', epoch: 'ms', params: JSON.stringify({ node: 'b' }),
    });
    const res = await t.request('POST', '/query', { raw: form.toString(), headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.results, [
      { statement_id: 0, series: [{ name: 'energy', columns: ['time', 'power'], values: [[T, 0], [s10(1), 10]] }] },
      { statement_id: 1, series: [{ name: 'energy', columns: ['time', 'power'], values: [[T, 0]] }] },
    ]);
    const [ns] = await results(t, t.adminToken, `SELECT power FROM energy WHERE nodeId = 'b' AND ${range} LIMIT 1`, '&epoch=ns');
    assert.equal(ns.series[0].values[0][0], T * 1e6);
    assert.match((await influxQuery(t, t.adminToken, `SELECT power FROM energy WHERE nodeId = 'b' AND ${range} LIMIT 1`, '&epoch=ns')).text, new RegExp(`\\[${T}000000,0\\]`));
  });

  test('per-statement errors leave the other statements alone', async () => {
    const { t } = await fixture();
    const r = await results(t, t.adminToken, `CREATE DATABASE x; SELECT power, mean(power) FROM energy; SELECT count(power) FROM energy WHERE nodeId = 'a' AND ${range}; SELECT v FROM nowhere.m`);
    assert.match(r[0].error, /CREATE DATABASE is not supported/);
    assert.equal(r[1].error, 'mixing aggregate and non-aggregate queries is not supported');
    assert.deepEqual(r[2], { statement_id: 2, series: [{ name: 'energy', columns: ['time', 'count'], values: [[iso(T), 6]] }] });
    assert.deepEqual(r[3], { statement_id: 3 });
  });
});

describe('influx door: /query errors and cost', () => {
  test('a parse error or a missing q is a 400 in InfluxDB\'s shape', async () => {
    const { t } = await fixture();
    const bad = await influxQuery(t, t.adminToken, 'SELECT FROM');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'error parsing query: found FROM, expected identifier, string, number, bool at line 1, char 8' });
    const none = await t.request('GET', '/query?db=site', { headers: { authorization: `Bearer ${t.adminToken}` } });
    assert.deepEqual([none.status, none.body], [400, { error: 'missing required parameter "q"' }]);
  });

  test('credentials: ?u=&p= with a telemetry:read token; a telemetry:write token -> 403; none -> 401', async () => {
    const { t, readerToken } = await fixture();
    const make = async (scopes: string[]) => (await t.request('POST', '/user/tokens', { token: readerToken, body: { name: 'g', scopes } })).body.token;
    const read = await make(['telemetry:read']);
    const write = await make(['telemetry:write']);
    const ok = await t.request('GET', `/query?db=site&u=grafana&p=${read}&q=SHOW%20MEASUREMENTS`);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.results[0].series[0].values, [['energy']]);
    const wrong = await t.request('GET', `/query?db=site&p=${write}&q=SHOW%20MEASUREMENTS`);
    assert.equal(wrong.status, 403);
    assert.match(wrong.body.error, /scope/);
    const anon = await t.request('GET', '/query?db=site&q=SHOW%20MEASUREMENTS');
    assert.equal(anon.status, 401);
    assert.match(anon.body.error, /^authorization failed/);
  });

  test('every request is charged through the bucket: cost headers, 422 beyond capacity, 429 with Retry-After', async () => {
    const { t } = await fixture();
    const user = await userWithNodes(t, { a: { reads: [] } });
    await setTier(t, user.id, 'free');
    // 1 h in a 10 s namespace: 360 datapoints, 1 shard -> ceil((100 + 50 + 360 + 200) / 100) = 8
    const q = `SELECT mean(power) FROM energy WHERE time >= ${T}ms AND time < ${T + 3_600_000}ms`;
    const first = await influxQuery(t, user.token, q);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('x-ratelimit-cost'), '8');
    // no lower bound: the worst-case 30 days -> far more than the free tier's 100
    const huge = await influxQuery(t, user.token, 'SELECT mean(power) FROM energy');
    assert.equal(huge.status, 422);
    assert.match(huge.body.error, /costs \d+, more than the 100/);
    let res = first;
    for (let i = 0; i < 20 && res.status === 200; i++) res = await influxQuery(t, user.token, q);
    assert.equal(res.status, 429);
    assert.deepEqual(Object.keys(res.body), ['error']);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  });
});

describe('influx door: chunked answers (chunked=true, chunk_size)', () => {
  const chunkedText = async (t: TestApp, token: string, q: string, extra: string) => {
    const res = await influxQuery(t, token, q, `&chunked=true${extra}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-type'), 'application/json');
    return res.text;
  };
  const line = (id: number, series: object | undefined, partial = false) =>
    `${JSON.stringify({ results: [{ statement_id: id, ...(series ? { series: [series] } : {}), ...(partial ? { partial: true } : {}) }] })}\n`;
  const power = (node: string, from: number, to: number, partial = false) => ({
    name: 'energy', tags: { nodeId: node }, columns: ['time', 'power'],
    values: Array.from({ length: to - from }, (_, k) => [s10(from + k), (node === 'a' ? 1 : 10) * (from + k)]), ...(partial ? { partial: true } : {}),
  });

  test('one JSON object a line: series cut into chunk_size rows, partial on all but the last; only readable series', async () => {
    const { t, readerToken } = await fixture();
    const q = `SELECT power FROM energy WHERE ${range} GROUP BY "nodeId"`;
    assert.equal(await chunkedText(t, t.adminToken, q, '&chunk_size=4&epoch=ms'), [
      line(0, power('a', 0, 4, true), true), line(0, power('a', 4, 6), true), line(0, power('b', 0, 4, true), true), line(0, power('b', 4, 6)),
    ].join(''));
    // the reader's answer holds node a only: its last line is the statement's last
    assert.equal(await chunkedText(t, readerToken, q, '&chunk_size=4&epoch=ms'), [line(0, power('a', 0, 4, true), true), line(0, power('a', 4, 6))].join(''));
    // chunk_size missing, 0 or not a number: InfluxDB's 10000; a series of exactly chunk_size rows is not cut
    for (const extra of ['', '&chunk_size=0', '&chunk_size=x', '&chunk_size=6']) {
      assert.equal(await chunkedText(t, readerToken, q, `${extra}&epoch=ms`), line(0, power('a', 0, 6)), extra);
    }
    // chunked=false (or anything but "true"): one document
    const whole = await influxQuery(t, readerToken, q, '&chunked=True&chunk_size=1&epoch=ms');
    assert.deepEqual(whole.body, { results: [{ statement_id: 0, series: [power('a', 0, 6)] }] });
  });

  test('several statements in a POST form body: SHOW lines, errors and empty results as their own lines', async () => {
    const { t } = await fixture();
    const form = new URLSearchParams({
      db: 'site', chunked: 'true', chunk_size: '1', epoch: 's',
      q: `SHOW TAG KEYS; SELECT nope(power) FROM energy; SELECT v FROM other WHERE ${range}; SHOW SERIES; SELECT power FROM energy WHERE nodeId = 'nobody' AND ${range}`,
    });
    const res = await t.request('POST', '/query', { raw: form.toString(), headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, [
      line(0, { name: 'energy', columns: ['tagKey'], values: [['nodeId'], ['phase']] }),
      line(0, { name: 'other', columns: ['tagKey'], values: [['nodeId']] }),
      '{"results":[{"statement_id":1,"error":"undefined function nope()"}]}\n',
      line(2, { name: 'other', columns: ['time', 'v'], values: [[T / 1000, 1]] }),
      line(3, { columns: ['key'], values: [['energy,nodeId=a,phase=L1']], partial: true }, true),
      line(3, { columns: ['key'], values: [['energy,nodeId=b']], partial: true }, true),
      line(3, { columns: ['key'], values: [['other,nodeId=b']] }),
      line(4, undefined),
    ].join(''));
  });

  test('pretty=true indents every line as InfluxDB does', async () => {
    const { t, readerToken } = await fixture();
    const text = await chunkedText(t, readerToken, `SELECT power FROM energy WHERE ${range} LIMIT 2`, '&chunk_size=1&epoch=ns&pretty=true');
    const objects = text.split(/(?<=^\}\n)/m);
    assert.equal(objects.length, 2);
    assert.match(objects[0], /^\{\n {4}"results": \[\n {8}\{\n {12}"statement_id": 0,\n/);
    assert.match(objects[0], new RegExp(`\\[\\n {28}${T}000000,\\n {28}0\\n {24}\\]`));
    assert.deepEqual(objects.map((o) => JSON.parse(o).results[0].partial ?? false), [true, false]);
  });

  test('refusals come before any line, with their status in InfluxDB\'s shape', async () => {
    const { t } = await fixture();
    const parse = await influxQuery(t, t.adminToken, 'SELECT FROM energy', '&chunked=true');
    assert.equal(parse.status, 400);
    assert.deepEqual(Object.keys(parse.body), ['error']);
    assert.match(parse.body.error, /^error parsing query: /);
    const anon = await t.request('GET', `/query?db=site&chunked=true&q=${encodeURIComponent('SHOW MEASUREMENTS')}`);
    assert.equal(anon.status, 401);
    const user = await userWithNodes(t, { a: { reads: [] } });
    await setTier(t, user.id, 'free');
    const huge = await influxQuery(t, user.token, 'SELECT mean(power) FROM energy', '&chunked=true&chunk_size=1');
    assert.equal(huge.status, 422);
    assert.match(huge.body.error, /costs \d+, more than the 100/);
  });
});

describe('influx door: /write of lines without a time', () => {
  test('stored at the time of the write cut to the precision, as InfluxDB stores them', async () => {
    const t = await openApp();
    const w = await writer(t, 'a');
    t.clock.set(T + 3_723_456); // 1 h 2 min 3.456 s after T
    const cut: Record<string, number> = { h: T + 3_600_000, m: T + 3_720_000, s: T + 3_723_000, ms: T + 3_723_456, u: T + 3_723_456, ns: T + 3_723_456 };
    for (const precision of Object.keys(cut)) {
      const res = await t.request('POST', `/write?db=site&precision=${precision}`, { raw: `p_${precision},nodeId=a v=1`, headers: { authorization: `Bearer ${w.token}` } });
      assert.equal(res.status, 204, res.text);
    }
    t.clock.advance(1000);
    for (const [precision, ms] of Object.entries(cut)) {
      const [r] = await results(t, t.adminToken, `SELECT v FROM p_${precision} WHERE time >= ${T}ms`, '&epoch=ms');
      assert.deepEqual(r.series?.[0].values, [[ms, 1]], precision);
    }
  });
});
