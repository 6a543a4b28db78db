// The console's pure pieces, outside the browser: property edits as JSON Patch (and their rebase after a 412), and the
// Prometheus text reader of the operations screen.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { applyOps, diffProperties, rebaseOps } from '../../src/console/ui/properties.ts';
import { parseMetrics } from '../../src/console/ui/metrics-text.ts';
import { alarmOrder } from '../../src/console/ui/alarm-order.ts';

describe('console property edits', () => {
  test('one operation per changed top-level property, keys escaped as JSON pointers', () => {
    const base = { name: 'a', info: { model: 'x' }, gone: 1, same: [1, { b: 2, a: 1 }], 'a/b~c': 1 };
    const draft = { name: 'b', info: { model: 'x' }, same: [1, { a: 1, b: 2 }], added: true, 'a/b~c': 2 };
    assert.deepEqual(diffProperties(base, draft), [
      { op: 'replace', path: '/name', value: 'b' },
      { op: 'add', path: '/added', value: true },
      { op: 'replace', path: '/a~1b~0c', value: 2 },
      { op: 'remove', path: '/gone' },
    ]);
    assert.deepEqual(applyOps(base, diffProperties(base, draft)), draft);
    assert.deepEqual(diffProperties(base, { ...base }), []);
  });

  test('reapplying on a newer version: replace of a property removed meanwhile becomes add, a remove of one gone is dropped', () => {
    const mine = diffProperties({ name: 'a', x: 1, y: 1 }, { name: 'mine', y: 1 });
    assert.deepEqual(mine, [{ op: 'replace', path: '/name', value: 'mine' }, { op: 'remove', path: '/x' }]);
    const latest = { y: 2, other: 'theirs' }; // name and x were deleted by someone else
    assert.deepEqual(rebaseOps(latest, mine), [{ op: 'add', path: '/name', value: 'mine' }]);
    assert.deepEqual(applyOps(latest, rebaseOps(latest, mine)), { y: 2, other: 'theirs', name: 'mine' });
    assert.deepEqual(rebaseOps({ name: 'z', x: 0 }, mine), mine);
  });
});

describe('console metrics reader', () => {
  test('reads samples with labels and skips comments', () => {
    const text = [
      '# HELP gridkeeper_http_requests_total HTTP requests',
      '# TYPE gridkeeper_http_requests_total counter',
      'gridkeeper_http_requests_total{method="GET",route="/healthz",status="200"} 12',
      'gridkeeper_database_size_bytes 4096',
      '',
    ].join('\n');
    assert.deepEqual([...parseMetrics(text)], [
      ['gridkeeper_http_requests_total{method="GET",route="/healthz",status="200"}', 12],
      ['gridkeeper_database_size_bytes', 4096],
    ]);
  });
});

describe('console alarm list', () => {
  test('active before cleared, then by severity, then newest first', () => {
    const list = [
      { id: 1, severity: 'critical', state: 'cleared_unack' }, { id: 2, severity: 'warning', state: 'active_unack' },
      { id: 3, severity: 'critical', state: 'active_ack' }, { id: 4, severity: 'major', state: 'active_unack' },
      { id: 5, severity: 'critical', state: 'active_unack' }, { id: 6, severity: 'minor', state: 'cleared_ack' },
    ] as const;
    assert.deepEqual([...list].sort(alarmOrder).map((a) => a.id), [5, 3, 4, 2, 1, 6]);
  });
});
