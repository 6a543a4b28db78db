// toDeviceJson (the text fast path of large listings) must produce exactly JSON.stringify(toDevice(...)) for every
// device and every access, including partial reads, `fields`, and keys that need escaping.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { DeviceAccess } from '../../src/access/rights.ts';
import { toDevice, toDeviceJson } from '../../src/devices/serialize.ts';
import { findDevices } from '../../src/devices/devices.store.ts';
import { openDatabase } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';

const key = fc.oneof(fc.constantFrom('a', 'b', 'c', 'nodeId', 'info', '1', '10', 'with "quote"', 'ü', 'a/b~c', ''), fc.string({ maxLength: 6 }))
  .filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k));
const properties = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 })
  // stored text is always JSON.stringify of a parsed object (what the service writes)
  .map((p) => JSON.parse(JSON.stringify(p)) as Record<string, unknown>);
const names = fc.uniqueArray(key, { maxLength: 6 });
const access = fc.record({ mm: fc.boolean(), reads: names, edits: names }).map(({ mm, reads, edits }): DeviceAccess => ({
  deviceId: 7, canRead: true, monitorManagement: mm, reads: new Set([...reads, ...edits]), edits: new Set(edits),
}));

describe('toDeviceJson', () => {
  it('equals JSON.stringify(toDevice()) on random devices, accesses and fields', () => {
    fc.assert(fc.property(properties, access, fc.option(names, { nil: undefined }), fc.nat(2 ** 42), (props, acc, fields, at) => {
      const row = { id: 7, properties: JSON.stringify(props), last_update: at };
      const only = fields ? new Set(fields) : undefined;
      const text = toDeviceJson(row, acc, only);
      assert.equal(text, JSON.stringify(toDevice(row, acc, only)));
      JSON.parse(text);
    }), { numRuns: 2000, seed: 5 });
  });

  it('reads the key list off stored texts exactly as a parse would, nested objects, arrays and escapes included', () => {
    // a full editor's editabilities: every top-level key of the stored text, true
    const editableKeysText = (properties: string) => JSON.stringify(JSON.parse(toDeviceJson({ id: 1, properties, last_update: 0 },
      { deviceId: 1, canRead: true, monitorManagement: true, reads: new Set(), edits: new Set() })).userRights.propertyEditabilities);
    const tricky = fc.oneof(key, fc.constantFrom('"', '\\', '\\"', '{', '}', '[', ',', ':', '"a":1,"b"', '\u0000', '\n'), fc.string({ maxLength: 8, unit: 'binary' }));
    const nested = fc.dictionary(tricky, fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.dictionary(tricky, tricky), fc.array(tricky)), { maxKeys: 10 });
    fc.assert(fc.property(nested, (props) => {
      const text = JSON.stringify(props);
      const expected = JSON.stringify(Object.fromEntries(Object.keys(JSON.parse(text) as object).map((k) => [k, true])));
      assert.equal(editableKeysText(text), expected);
    }), { numRuns: 3000, seed: 7 });
    assert.equal(editableKeysText('{}'), '{}');
    assert.equal(editableKeysText('{"a":{"b":[{"c":1}]},"d\\\\":"x\\\\\\"y","e":[]}'), '{"a":true,"d\\\\":true,"e":true}');
  });

  it('on stored devices read back from the database, too', async (t) => {
    const db = openDatabase({ file: ':memory:' });
    t.after(() => db.close());
    await migrate(db, 0);
    await fc.assert(fc.asyncProperty(properties, access, fc.option(names, { nil: undefined }), async (props, acc, fields) => {
      const { nodeId: _, ...stored } = props; // nodeId is unique among devices; not the point here
      const { id } = (await db.get(db.qb.insertInto('devices')
        .values({ properties: JSON.stringify(stored), last_update: 1767225600123, created_at: 0 }).returning('id')))!;
      const [row] = await findDevices(db, [id]);
      const only = fields ? new Set(fields) : undefined;
      assert.equal(toDeviceJson(row, { ...acc, deviceId: id }, only), JSON.stringify(toDevice(row, { ...acc, deviceId: id }, only)));
    }), { numRuns: 1000, seed: 6 });
  });

  it('splices the stored text for monitorManagement without fields, and never when something is hidden', () => {
    const row = { id: 1, properties: '{"a":1,"c":"hidden"}', last_update: 0 };
    const full: DeviceAccess = { deviceId: 1, canRead: true, monitorManagement: true, reads: new Set(), edits: new Set() };
    assert.equal(toDeviceJson(row, full),
      '{"id":1,"lastUpdate":"1970-01-01T00:00:00.000Z","properties":{"a":1,"c":"hidden"},"userRights":{"propertyEditabilities":{"a":true,"c":true},"monitorManagement":true}}');
    const partial: DeviceAccess = { deviceId: 1, canRead: true, monitorManagement: false, reads: new Set(['a']), edits: new Set() };
    assert.ok(!toDeviceJson(row, partial).includes('hidden'));
    assert.ok(!toDeviceJson(row, full, new Set(['a'])).includes('hidden'));
  });
});
