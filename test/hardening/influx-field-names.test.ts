// Field names are another tenant's metadata: through the InfluxDB door, SHOW FIELD KEYS and the columns of SELECT *
// (with GROUP BY *, beside a selector, and fn(*)) name only the fields present in series the caller may read. Two
// tenants write the same measurement; each has fields only its own devices write. A caller who may read every
// series of the measurement (root) sees every field, as InfluxDB answers. A decision against InfluxDB, which lists the
// measurement's schema to anyone who may read the database (docs/influxdb.md: known differences). Runs on both backends.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appOpener, type TestApp } from '../support/app.ts';
import { userWithNodes, writer } from '../telemetry/fixtures.ts';

const openApp = appOpener();
const T = Date.UTC(2026, 0, 5, 10, 0, 0);
const range = `time >= ${T}ms AND time < ${T + 60_000}ms`;

/** Tenant a writes power and aSecret on node a1; tenant b writes power and bSecret (and a string bState) on b1. */
async function fixture() {
  const t = await openApp();
  const w = await writer(t, 'a1', 'b1');
  let body = '';
  for (let i = 0; i < 3; i++) {
    body += `meter,nodeId=a1 power=${i},aSecret=${i}i ${T + i * 10_000}\n`;
    body += `meter,nodeId=b1,site=hidden power=${10 * i},bSecret=${i}.5,bState="on" ${T + i * 10_000}\n`;
  }
  const res = await t.request('POST', '/write?db=site&precision=ms', { raw: body, headers: { authorization: `Bearer ${w.token}` } });
  assert.equal(res.status, 204, res.text);
  const a = await userWithNodes(t, { a1: { reads: [] } });
  const b = await userWithNodes(t, { b1: { reads: [] } });
  return { t, a: a.token, b: b.token };
}

async function results(t: TestApp, token: string, q: string): Promise<any[]> {
  const res = await t.request('GET', `/query?db=site&q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, res.text);
  return res.body.results;
}

const columnsOf = (r: any): string[][] => (r.series ?? []).map((s: any) => s.columns);

describe('influx door: field names of other tenants stay unnamed', () => {
  test('SHOW FIELD KEYS lists only the fields of series the caller may read; root lists all', async () => {
    const { t, a, b } = await fixture();
    const q = 'SHOW FIELD KEYS; SHOW FIELD KEYS FROM meter';
    const mine = [{ name: 'meter', columns: ['fieldKey', 'fieldType'], values: [['aSecret', 'integer'], ['power', 'float']] }];
    assert.deepEqual(await results(t, a, q), [{ statement_id: 0, series: mine }, { statement_id: 1, series: mine }]);
    const theirs = [{ name: 'meter', columns: ['fieldKey', 'fieldType'], values: [['bSecret', 'float'], ['bState', 'string'], ['power', 'float']] }];
    assert.deepEqual(await results(t, b, q), [{ statement_id: 0, series: theirs }, { statement_id: 1, series: theirs }]);
    const all = [{ name: 'meter', columns: ['fieldKey', 'fieldType'], values: [['aSecret', 'integer'], ['bSecret', 'float'], ['bState', 'string'], ['power', 'float']] }];
    assert.deepEqual(await results(t, t.adminToken, q), [{ statement_id: 0, series: all }, { statement_id: 1, series: all }]);
  });

  test('SELECT *, SELECT * GROUP BY *, a selector beside * and fn(*) answer only the caller\'s fields as columns', async () => {
    const { t, a, b } = await fixture();
    const [star, grouped, beside, counts] = await results(t, a,
      `SELECT * FROM meter WHERE ${range}; SELECT * FROM meter WHERE ${range} GROUP BY *; SELECT max(power), * FROM meter WHERE ${range}; SELECT count(*) FROM meter WHERE ${range}`);
    assert.deepEqual(star.series, [{ name: 'meter', columns: ['time', 'aSecret', 'nodeId', 'power'], values: [
      ['2026-01-05T10:00:00Z', 0, 'a1', 0], ['2026-01-05T10:00:10Z', 1, 'a1', 1], ['2026-01-05T10:00:20Z', 2, 'a1', 2]] }]);
    assert.deepEqual(columnsOf(grouped), [['time', 'aSecret', 'power']]);
    assert.deepEqual(grouped.series[0].tags, { nodeId: 'a1' });
    assert.deepEqual(beside.series, [{ name: 'meter', columns: ['time', 'max', 'aSecret', 'nodeId', 'power'], values: [['2026-01-05T10:00:20Z', 2, 2, 'a1', 2]] }]);
    assert.deepEqual(counts.series, [{ name: 'meter', columns: ['time', 'count_aSecret', 'count_power'], values: [['2026-01-05T10:00:00Z', 3, 3]] }]);
    // nothing of b's schema (field names, tag keys) appears in any of a's answers
    const text = JSON.stringify([star, grouped, beside, counts]);
    for (const secret of ['bSecret', 'bState', 'site', 'hidden', 'b1']) assert.ok(!text.includes(secret), `${secret} leaked: ${text}`);
    // b sees its own, and root every field of the measurement
    const [bStar] = await results(t, b, `SELECT * FROM meter WHERE ${range} LIMIT 1`);
    assert.deepEqual(columnsOf(bStar), [['time', 'bSecret', 'bState', 'nodeId', 'power', 'site']]);
    const [rootStar, rootCounts] = await results(t, t.adminToken, `SELECT * FROM meter WHERE ${range} LIMIT 1; SELECT count(*) FROM meter WHERE ${range}`);
    assert.deepEqual(columnsOf(rootStar), [['time', 'aSecret', 'bSecret', 'bState', 'nodeId', 'power', 'site']]);
    assert.deepEqual(columnsOf(rootCounts), [['time', 'count_aSecret', 'count_bSecret', 'count_bState', 'count_power']]);
  });

  test('a field of the other tenant named explicitly answers as an absent field (nulls), never its values', async () => {
    const { t, a } = await fixture();
    const [r] = await results(t, a, `SELECT power, bSecret FROM meter WHERE ${range}`);
    assert.deepEqual(r.series, [{ name: 'meter', columns: ['time', 'power', 'bSecret'], values: [
      ['2026-01-05T10:00:00Z', 0, null], ['2026-01-05T10:00:10Z', 1, null], ['2026-01-05T10:00:20Z', 2, null]] }]);
  });
});
