// Cost (docs/api.md#cost) and the namespace figures it rests on (docs/api.md#namespaces). Every expected value is worked out by hand
// in the comment above it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ceilDiv, floorDiv, listShardWindows, namespaceFromWriteParams, namespaceKey, namespaceProfile, shardWindow,
  shardWindowsOverlapping,
} from '../../src/telemetry/namespaces.ts';
import type { Namespace } from '../../src/telemetry/namespaces.ts';
import { estimateQuery, estimateRequest, parseIsoTime, queryRange } from '../../src/telemetry/cost.ts';
import type { CostQuery, TimeCondition } from '../../src/telemetry/cost.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 15, 12); // 2026-01-15T12:00:00Z = day 20468 + 12 h
const v1 = (retentionPolicy: string): Namespace => ({ version: '1', database: 'db', retentionPolicy });
const q = (rp: string, time: TimeCondition[] = [], limit?: number): CostQuery => ({
  from: { namespace: v1(rp) },
  where: { time },
  ...(limit === undefined ? {} : { limit }),
});

describe('namespaces: identity', () => {
  it('gives each namespace a canonical key; legacy equals version 1', () => {
    assert.equal(namespaceKey({ version: '1', database: 'db', retentionPolicy: 'autogen' }), 'v1/db/autogen');
    assert.equal(namespaceKey({ database: 'db', retentionPolicy: 'autogen' }), 'v1/db/autogen');
    assert.equal(namespaceKey({ version: '2', organization: 'org', bucket: 'b' }), 'v2/org/b');
    assert.equal(namespaceKey({ version: 'IOx', value: 'x_one_s' }), 'iox/x_one_s');
    // A slash inside a name cannot collide with the separator.
    assert.notEqual(namespaceKey({ version: '1', database: 'a/b', retentionPolicy: 'c' }), namespaceKey({ version: '1', database: 'a', retentionPolicy: 'b/c' }));
    assert.equal(namespaceKey({ version: '1', database: 'a/b', retentionPolicy: 'c d' }), 'v1/a%2Fb/c%20d');
  });

  it('reads the namespace of a write from its query parameters', () => {
    assert.deepEqual(namespaceFromWriteParams({ db: 'site' }), { ok: true, namespace: { version: '1', database: 'site', retentionPolicy: 'autogen' } });
    assert.deepEqual(namespaceFromWriteParams({ db: 'site', rp: '' }), { ok: true, namespace: { version: '1', database: 'site', retentionPolicy: 'autogen' } });
    assert.deepEqual(namespaceFromWriteParams({ db: 'site', rp: 'r_one_m' }), { ok: true, namespace: { version: '1', database: 'site', retentionPolicy: 'r_one_m' } });
    assert.deepEqual(namespaceFromWriteParams({ org: 'o', bucket: 'b' }), { ok: true, namespace: { version: '2', organization: 'o', bucket: 'b' } });
    assert.deepEqual(namespaceFromWriteParams({ namespace: 'n' }), { ok: true, namespace: { version: 'IOx', value: 'n' } });
  });

  it('refuses missing, partial and mixed write parameters', () => {
    assert.deepEqual(namespaceFromWriteParams({}), { ok: false, message: 'missing db (or org and bucket, or namespace)' });
    assert.deepEqual(namespaceFromWriteParams({ db: '' }), { ok: false, message: 'missing db (or org and bucket, or namespace)' });
    assert.deepEqual(namespaceFromWriteParams({ rp: 'x' }), { ok: false, message: 'rp needs db' });
    assert.deepEqual(namespaceFromWriteParams({ org: 'o' }), { ok: false, message: 'org and bucket must be given together' });
    assert.deepEqual(namespaceFromWriteParams({ bucket: 'b' }), { ok: false, message: 'org and bucket must be given together' });
    assert.equal(namespaceFromWriteParams({ db: 'd', bucket: 'b' }).ok, false);
    assert.equal(namespaceFromWriteParams({ db: 'd', namespace: 'n' }).ok, false);
    assert.equal(namespaceFromWriteParams({ org: 'o', bucket: 'b', namespace: 'n' }).ok, false);
  });
});

describe('namespaces: profile and shard windows', () => {
  it('picks the profile from the retention policy, bucket or IOx value suffix', () => {
    const s = { intervalSeconds: 1, intervalMs: 1000, shardDurationMs: DAY, worstCaseRangeMs: 30 * DAY };
    const m = { intervalSeconds: 60, intervalMs: 60_000, shardDurationMs: 7 * DAY, worstCaseRangeMs: 400 * DAY };
    const h = { intervalSeconds: 3600, intervalMs: 3_600_000, shardDurationMs: 90 * DAY, worstCaseRangeMs: 3650 * DAY };
    const d = { intervalSeconds: 10, intervalMs: 10_000, shardDurationMs: DAY, worstCaseRangeMs: 30 * DAY };
    assert.deepEqual(namespaceProfile(v1('rp_one_s')), s);
    assert.deepEqual(namespaceProfile({ version: '2', organization: 'o_one_h', bucket: 'b_one_m' }), m);
    assert.deepEqual(namespaceProfile({ version: 'IOx', value: 'x_one_h' }), h);
    assert.deepEqual(namespaceProfile({ database: 'db_one_s', retentionPolicy: 'autogen' }), d); // the database name does not count
    assert.deepEqual(namespaceProfile(v1('one_s')), d); // needs the underscore
    assert.deepEqual(namespaceProfile(v1('_one_s_x')), d); // must be the end
    assert.deepEqual(namespaceProfile(v1('_one_s')), s);
  });

  it('aligns windows to the epoch, with floor semantics for negative times', () => {
    assert.equal(shardWindow(0, DAY), 0);
    assert.equal(shardWindow(DAY - 1, DAY), 0);
    assert.equal(shardWindow(DAY, DAY), 1);
    assert.equal(shardWindow(-1, DAY), -1);
    assert.equal(shardWindow(-DAY, DAY), -1);
    assert.equal(shardWindow(-DAY - 1, DAY), -2);
    assert.equal(shardWindow(NOW, DAY), 20468);
    assert.equal(shardWindow(NOW, 7 * DAY), 2924); // 20468 / 7 = 2924
    assert.equal(shardWindow(NOW, 90 * DAY), 227); // 20468 / 90 = 227.4
  });

  it('counts the windows [from, to) overlaps, boundaries included exactly', () => {
    assert.deepEqual(shardWindowsOverlapping(0, DAY, DAY), { first: 0, last: 0, count: 1 });
    assert.deepEqual(shardWindowsOverlapping(0, DAY + 1, DAY), { first: 0, last: 1, count: 2 });
    assert.deepEqual(shardWindowsOverlapping(DAY - 1, DAY + 1, DAY), { first: 0, last: 1, count: 2 });
    assert.deepEqual(shardWindowsOverlapping(5, 6, DAY), { first: 0, last: 0, count: 1 });
    assert.deepEqual(shardWindowsOverlapping(-1, 1, DAY), { first: -1, last: 0, count: 2 });
    assert.deepEqual(shardWindowsOverlapping(-2 * DAY, 0, DAY), { first: -2, last: -1, count: 2 });
    assert.deepEqual(shardWindowsOverlapping(7, 7, DAY), { first: 0, last: -1, count: 0 });
    assert.deepEqual(shardWindowsOverlapping(8, 7, DAY), { first: 0, last: -1, count: 0 });
    assert.deepEqual(listShardWindows(shardWindowsOverlapping(-1, 2 * DAY + 1, DAY)), [-1, 0, 1, 2]);
    assert.deepEqual(listShardWindows(shardWindowsOverlapping(3, 3, DAY)), []);
  });

  it('divides integers with floor and ceiling semantics, also for negatives and near 2^53', () => {
    assert.deepEqual([floorDiv(7, 2), ceilDiv(7, 2), floorDiv(-7, 2), ceilDiv(-7, 2)], [3, 4, -4, -3]);
    assert.deepEqual([floorDiv(8, 2), ceilDiv(8, 2), floorDiv(-8, 2), ceilDiv(-8, 2)], [4, 4, -4, -4]);
    assert.deepEqual([floorDiv(0, 5), ceilDiv(0, 5)], [0, 0]);
    const big = 2 ** 53 - 1;
    assert.deepEqual([floorDiv(big, 2), ceilDiv(big, 2)], [2 ** 52 - 1, 2 ** 52]);
    assert.deepEqual([floorDiv(-big, DAY), ceilDiv(big, DAY), floorDiv(big, DAY)], [-104249992, 104249992, 104249991]);
  });
});

describe('cost: ranges', () => {
  const T = 1_700_000_000_000;
  it('applies each operator as in the contract', () => {
    assert.deepEqual(queryRange(q('x', [{ operator: '>=', value: T }]), NOW), { fromMs: T, toMs: NOW });
    assert.deepEqual(queryRange(q('x', [{ operator: '>', value: T }]), NOW), { fromMs: T + 1, toMs: NOW });
    assert.deepEqual(queryRange(q('x', [{ operator: '<', value: T }]), NOW), { fromMs: T - 30 * DAY, toMs: T });
    assert.deepEqual(queryRange(q('x', [{ operator: '<=', value: T }]), NOW), { fromMs: T + 1 - 30 * DAY, toMs: T + 1 });
    assert.deepEqual(queryRange(q('x', [{ operator: '=', value: T }]), NOW), { fromMs: T, toMs: T + 1 });
    assert.deepEqual(queryRange(q('x'), NOW), { fromMs: NOW - 30 * DAY, toMs: NOW });
    assert.deepEqual(queryRange({ from: { database: 'd', retentionPolicy: 'r_one_h' } }, NOW), { fromMs: NOW - 3650 * DAY, toMs: NOW });
  });

  it('intersects two conditions, in either order and on the same side', () => {
    const both = queryRange(q('x', [{ operator: '<', value: T + 5000 }, { operator: '>=', value: T }]), NOW);
    assert.deepEqual(both, { fromMs: T, toMs: T + 5000 });
    assert.deepEqual(queryRange(q('x', [{ operator: '>=', value: T }, { operator: '>', value: T + 10 }]), NOW), { fromMs: T + 11, toMs: NOW });
    assert.deepEqual(queryRange(q('x', [{ operator: '<', value: T }, { operator: '<=', value: T - 10 }]), NOW), { fromMs: T - 9 - 30 * DAY, toMs: T - 9 });
    assert.deepEqual(queryRange(q('x', [{ operator: '=', value: T }, { operator: '>', value: T }]), NOW), { fromMs: T + 1, toMs: T + 1 });
  });

  it('reads ISO strings in the accepted forms', () => {
    assert.equal(parseIsoTime('2026-01-15T12:00:00Z'), NOW);
    assert.equal(parseIsoTime('2026-01-15T12:00:00.000Z'), NOW);
    assert.equal(parseIsoTime('2026-01-15T12:00:00'), NOW); // no offset = UTC
    assert.equal(parseIsoTime('2026-01-15T12:00'), NOW);
    assert.equal(parseIsoTime('2026-01-15T13:30:00+01:30'), NOW);
    assert.equal(parseIsoTime('2026-01-15T10:00:00-02:00'), NOW);
    assert.equal(parseIsoTime('2026-01-15'), NOW - 12 * 3_600_000);
    assert.equal(parseIsoTime('2026-01-15T12:00:00.1Z'), NOW + 100);
    assert.equal(parseIsoTime('2026-01-15T12:00:00.123999999Z'), NOW + 123); // truncated, not rounded
    assert.equal(parseIsoTime('1970-01-01T00:00:00Z'), 0);
    assert.equal(parseIsoTime('1969-12-31T23:59:59.999Z'), -1);
    assert.equal(parseIsoTime('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
    assert.equal(parseIsoTime('2000-02-29'), Date.UTC(2000, 1, 29));
    assert.equal(parseIsoTime('0000-01-01T00:00:00Z'), -62_167_219_200_000);
    assert.equal(parseIsoTime('0099-03-01'), Date.parse('0099-03-01T00:00:00Z')); // not mapped to 1999 like Date.UTC
    assert.equal(parseIsoTime('9999-12-31T23:59:59.999Z'), 253_402_300_799_999);
  });

  it('refuses strings that are not a real instant in the accepted forms', () => {
    for (const bad of [
      '', '2026', '2026-01', '2026-1-15', '2026-01-15T', '2026-01-15 12:00:00Z', '2026-01-15t12:00:00z',
      '2026-13-01', '2026-00-10', '2026-02-29', '1900-02-29', '2026-04-31', '2026-01-00', '2026-01-15T24:00:00Z',
      '2026-01-15T12:60:00Z', '2026-01-15T12:00:60Z', '2026-01-15T12:00:00+24:00', '2026-01-15T12:00:00+01:60',
      '2026-01-15T12:00:00+0100', '2026-01-15T12:00:00.Z', '2026-01-15T12:00:00.1234567890Z', '+002026-01-15',
      '2026-01-15Z', '0000-01-01T00:00:00+00:01', '9999-12-31T23:59:59.999-00:01', '２０２６-01-15', ' 2026-01-15',
    ]) {
      assert.equal(parseIsoTime(bad), undefined, bad);
    }
  });
});

describe('cost: estimates', () => {
  it('charges an empty range nothing beyond request and query', () => {
    const empty = q('x', [{ operator: '>=', value: 10 }, { operator: '<', value: 10 }]);
    assert.deepEqual(estimateQuery(empty, NOW), { estimatedDatapoints: 0, scannedShards: 0 });
    // 100 + 50 = 150 hundredths → 2
    assert.deepEqual(estimateRequest(empty, NOW), { cost: 2, estimatedDatapoints: 0, scannedShards: 0 });
    // A lower bound after now, without an upper bound, is empty too.
    assert.deepEqual(estimateQuery(q('x', [{ operator: '>', value: NOW }]), NOW), { estimatedDatapoints: 0, scannedShards: 0 });
  });

  it('estimates the worst case of each suffix when there is no lower bound', () => {
    // now is 12 h into a day, so a 30-day range ending at now touches 31 daily windows.
    assert.deepEqual(estimateQuery(q('rp_one_s'), NOW), { estimatedDatapoints: 30 * 86400, scannedShards: 31 });
    assert.deepEqual(estimateQuery(q('autogen'), NOW), { estimatedDatapoints: 30 * 8640, scannedShards: 31 });
    // 400 days / 60 s = 576000; from = day 20068.5 → 7-day window 2866, to-1 → window 2924: 59 windows.
    assert.deepEqual(estimateQuery(q('rp_one_m'), NOW), { estimatedDatapoints: 576_000, scannedShards: 59 });
    // 3650 days / 3600 s = 87600; from = day 16818.5 → 90-day window 186, to → 227: 42 windows.
    assert.deepEqual(estimateQuery(q('rp_one_h'), NOW), { estimatedDatapoints: 87_600, scannedShards: 42 });
  });

  it('rounds datapoints up per interval and caps them by the limit, not the shards', () => {
    const day0 = 20_000 * DAY;
    const range = (ms: number) => [{ operator: '>=', value: day0 } as const, { operator: '<', value: day0 + ms } as const];
    assert.deepEqual(estimateQuery(q('x', range(1)), NOW), { estimatedDatapoints: 1, scannedShards: 1 });
    assert.deepEqual(estimateQuery(q('x', range(10_000)), NOW), { estimatedDatapoints: 1, scannedShards: 1 });
    assert.deepEqual(estimateQuery(q('x', range(10_001)), NOW), { estimatedDatapoints: 2, scannedShards: 1 });
    assert.deepEqual(estimateQuery(q('x', range(DAY)), NOW), { estimatedDatapoints: 8640, scannedShards: 1 });
    assert.deepEqual(estimateQuery(q('x', range(DAY + 1)), NOW), { estimatedDatapoints: 8641, scannedShards: 2 });
    assert.deepEqual(estimateQuery(q('x', range(3 * DAY), 5), NOW), { estimatedDatapoints: 5, scannedShards: 3 });
    assert.deepEqual(estimateQuery(q('x', range(3 * DAY), 1_000_000), NOW), { estimatedDatapoints: 25_920, scannedShards: 3 });
    // `=` reads one millisecond: one datapoint, one shard.
    assert.deepEqual(estimateQuery(q('rp_one_h', [{ operator: '=', value: '2026-01-01T00:00:00Z' }]), NOW), { estimatedDatapoints: 1, scannedShards: 1 });
  });

  it('adds up an array and rounds the total cost up from hundredths', () => {
    const day0 = 20_000 * DAY;
    // 1 h of _one_s: 3600 points, 1 shard.
    const hour = q('r_one_s', [{ operator: '>=', value: day0 }, { operator: '<', value: day0 + 3_600_000 }]);
    // 100 + 50 + 3600 + 200 = 3950 → 40
    assert.deepEqual(estimateRequest(hour, NOW), { cost: 40, estimatedDatapoints: 3600, scannedShards: 1 });
    // 100 + 100 + 7200 + 400 = 7800 → 78 (exact, no rounding up)
    assert.deepEqual(estimateRequest([hour, hour], NOW), { cost: 78, estimatedDatapoints: 7200, scannedShards: 2 });
    // 100 + 50 + 1 + 200 = 351 → 4
    const single = q('x', [{ operator: '=', value: day0 }]);
    assert.deepEqual(estimateRequest(single, NOW), { cost: 4, estimatedDatapoints: 1, scannedShards: 1 });
    // 1000 empty queries: 100 + 50000 = 50100 → 501
    const empty = q('x', [{ operator: '<', value: 0 }, { operator: '>', value: 0 }]);
    assert.deepEqual(estimateRequest(Array.from({ length: 1000 }, () => empty), NOW), { cost: 501, estimatedDatapoints: 0, scannedShards: 0 });
  });

  it('uses ISO strings and numbers alike, and the legacy from', () => {
    const iso = estimateRequest({ from: { database: 'd', retentionPolicy: 'r_one_m' }, where: { time: [{ operator: '>=', value: '2026-01-01' }, { operator: '<=', value: '2026-01-08T00:00:00.000+01:00' }] } }, NOW);
    // [2026-01-01T00:00Z, 2026-01-07T23:00Z + 1 ms): 6 d 23 h + 1 ms → ceil(/60 s) = 10021 points.
    // Days 20454 .. 20460 (+1 ms): 7-day windows 2922 (days 20454–20460) → 1 shard.
    // 100 + 50 + 10021 + 200 = 10371 → 104
    assert.deepEqual(iso, { cost: 104, estimatedDatapoints: 10_021, scannedShards: 1 });
  });
});
