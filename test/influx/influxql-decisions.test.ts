// InfluxQL answers where gridkeeper decides differently from InfluxDB 1.6.7 on purpose (docs/influxdb.md: known differences),
// each pinned here so that the decision is kept: the order of points of several series at one instant, transformations
// of aggregates without a lower time bound, integral() of several series, SOFFSET skipping answered series, and a range
// across InfluxDB's weekly shard groups answered as one. The differential test (differential.test.ts) covers everything else against influxd.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appOpener, type TestApp } from '../support/app.ts';
import { writer } from '../telemetry/fixtures.ts';

const openApp = appOpener();
const T = Date.UTC(2026, 0, 7, 8, 0, 0);
const range = `time >= ${T}ms AND time < ${T + 60_000}ms`;

async function fixture(): Promise<{ t: TestApp; token: string }> {
  const t = await openApp();
  const w = await writer(t, 'x', 'y', 'z');
  // three series writing at the same instants, written in another order than their keys (x < y < z,phase=L9)
  const body = [
    `m,nodeId=z,phase=L9 power=1,state="a" ${T}`, `m,nodeId=y power=5,state="c" ${T}`, `m,nodeId=x power=3,state="b" ${T}`,
    `m,nodeId=z,phase=L9 power=9,state="a" ${T + 10_000}`, `m,nodeId=y power=2,state="c" ${T + 10_000}`, `m,nodeId=x power=7,state="b" ${T + 10_000}`,
  ].join('\n');
  const res = await t.request('POST', '/write?db=site&precision=ms', { raw: body, headers: { authorization: `Bearer ${w.token}` } });
  assert.equal(res.status, 204, res.text);
  return { t, token: w.token };
}

async function results(t: TestApp, token: string, q: string): Promise<any[]> {
  const res = await t.request('GET', `/query?db=site&q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, res.text);
  return res.body.results;
}

describe('InfluxQL decisions', () => {
  test('points of several series at one instant come in series-key order, whatever the fields selected', async () => {
    const { t, token } = await fixture();
    const [a, b] = await results(t, token, `SELECT power FROM m WHERE ${range}; SELECT state, power, "nodeId" FROM m WHERE ${range}`);
    assert.deepEqual(a.series[0].values, [
      ['2026-01-07T08:00:00Z', 3], ['2026-01-07T08:00:00Z', 5], ['2026-01-07T08:00:00Z', 1],
      ['2026-01-07T08:00:10Z', 7], ['2026-01-07T08:00:10Z', 2], ['2026-01-07T08:00:10Z', 9],
    ]);
    assert.deepEqual(b.series[0].values.map((v: unknown[]) => v[3]), ['x', 'y', 'z', 'x', 'y', 'z']);
  });

  test('first() and last() among points of one instant take the larger value (InfluxDB\'s reducer rule)', async () => {
    const { t, token } = await fixture();
    const r = await results(t, token, `SELECT first(power) FROM m WHERE ${range}; SELECT last(power) FROM m WHERE ${range}; SELECT last(state) FROM m WHERE ${range}`);
    assert.deepEqual(r.map((x: any) => x.series[0].values[0]), [['2026-01-07T08:00:00Z', 5], ['2026-01-07T08:00:10Z', 9], ['2026-01-07T08:00:10Z', 'c']]);
  });

  test('a transformation of an aggregate over GROUP BY time without a lower time bound answers over all data', async () => {
    const { t, token } = await fixture();
    // InfluxDB 1.6 answers no series here; every other form without a lower bound reads all data, and so does this
    const upper = `time < ${T + 30_000}ms`;
    const [d, c] = await results(t, token, `SELECT difference(max(power)) FROM m WHERE ${upper} GROUP BY time(10s); SELECT cumulative_sum(sum(power)) FROM m WHERE ${upper} GROUP BY time(10s)`);
    assert.deepEqual(d.series, [{ name: 'm', columns: ['time', 'difference'], values: [['2026-01-07T08:00:10Z', 4]] }]);
    assert.deepEqual(c.series, [{ name: 'm', columns: ['time', 'cumulative_sum'], values: [['2026-01-07T08:00:00Z', 9], ['2026-01-07T08:00:10Z', 27]] }]);
  });

  test('integral() of several series answers each series whole, in series order', async () => {
    const { t, token } = await fixture();
    // InfluxDB 1.6 answers each series' last window apart, as extra series in Go's map order
    const [g, w] = await results(t, token, `SELECT integral(power) FROM m WHERE ${range} GROUP BY "nodeId"; `
      + `SELECT integral(power) FROM m WHERE ${range} GROUP BY time(5s), "nodeId" ORDER BY time DESC`);
    assert.deepEqual(g.series.map((s: any) => [s.tags.nodeId, s.values]), [
      ['x', [['1970-01-01T00:00:00Z', 50]]], ['y', [['1970-01-01T00:00:00Z', 35]]], ['z', [['1970-01-01T00:00:00Z', 50]]],
    ]);
    // newest first: negative areas keyed by each window's end (the last point closes its window with no area), every
    // window in its own series
    assert.deepEqual(w.series.map((s: any) => [s.tags.nodeId, s.values]), [
      ['z', [['2026-01-07T08:00:15Z', 0], ['2026-01-07T08:00:05Z', -50]]],
      ['y', [['2026-01-07T08:00:15Z', 0], ['2026-01-07T08:00:05Z', -35]]],
      ['x', [['2026-01-07T08:00:15Z', 0], ['2026-01-07T08:00:05Z', -50]]],
    ]);
  });

  test('SOFFSET skips the first answered series', async () => {
    const { t, token } = await fixture();
    const [r] = await results(t, token, `SELECT last(power) FROM m WHERE ${range} GROUP BY "nodeId" SLIMIT 2 SOFFSET 1`);
    assert.deepEqual(r.series.map((s: any) => s.tags.nodeId), ['y', 'z']);
  });

  test('a range across InfluxDB\'s weekly shard groups answers as one: * names every measurement, top() under LIMIT spans it', async () => {
    const t = await openApp();
    const w = await writer(t, 'x');
    // InfluxDB keeps an infinite retention policy in week-long shard groups from Monday 00:00 UTC (2026-01-12 is one)
    const monday = Date.UTC(2026, 0, 12);
    const minute = 60_000;
    const body = [
      `battery,nodeId=x soc=50 ${monday - 7 * 86_400_000}`,
      ...[-2, -1, 0, 1].map((k, i) => `m,nodeId=x power=${10 + i} ${monday + k * minute}`),
    ].join('\n');
    const written = await t.request('POST', '/write?db=site&precision=ms', { raw: body, headers: { authorization: `Bearer ${w.token}` } });
    assert.equal(written.status, 204, written.text);
    const span = `time >= ${monday - 2 * minute}ms AND time < ${monday + 2 * minute}ms`;
    const [all, top] = await results(t, w.token, `SELECT * FROM /^(m|battery)$/ WHERE ${span}; `
      + `SELECT top(power, 1) FROM m WHERE ${span} GROUP BY time(1m) LIMIT 2 OFFSET 1`);
    // InfluxDB names only the measurements with points in the shard groups the range touches (not battery here)
    assert.deepEqual(all.series.map((s: any) => [s.name, s.columns]), [['m', ['time', 'nodeId', 'power', 'soc']]]);
    // InfluxDB chooses top()'s points within each shard group; here across the range: Sunday's last minute, Monday's first
    assert.deepEqual(top.series[0].values, [['2026-01-11T23:59:00Z', 11], ['2026-01-12T00:00:00Z', 12]]);
  });

  test('integers beyond 2^53 keep every digit in raw answers; functions answer them as the nearest double', async () => {
    const t = await openApp();
    const w = await writer(t, 'x');
    const body = [`big,nodeId=x i=9007199254740993i ${T}`, `big,nodeId=x i=9007199254740995i ${T + 10_000}`].join('\n');
    const written = await t.request('POST', '/write?db=site&precision=ms', { raw: body, headers: { authorization: `Bearer ${w.token}` } });
    assert.equal(written.status, 204, written.text);
    const text = async (q: string) => {
      const res = await t.request('GET', `/query?db=site&epoch=ms&q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${w.token}` } });
      assert.equal(res.status, 200, res.text);
      return res.text;
    };
    assert.match(await text(`SELECT i FROM big WHERE ${range}`), /\[\[1767772800000,9007199254740993\],\[1767772810000,9007199254740995\]\]/);
    // InfluxDB answers 9007199254740995 (int64); the engine computes on doubles
    assert.match(await text(`SELECT max(i) FROM big WHERE ${range}`), /\[\[1767772810000,9007199254740996\]\]/);
  });
});
