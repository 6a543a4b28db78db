import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyPut, PUT_MODES, putTouchedProperties } from '../../src/devices/put-modes.ts';

const stored = () => ({
  nodeId: 'n-1',
  name: 'Meter',
  info: { manufacturer: 'Acme', model: 'X1', address: { city: 'Ghent', zip: '9000' } },
  nodeParentsIds: ['p0', 'p1'],
  tariff: 0.3,
});

function assertPrototypesClean(): void {
  assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
}

describe('put modes: happy', () => {
  it('lists the three modes', () => {
    assert.deepEqual(PUT_MODES, ['legacy', 'merge', 'strict']);
  });

  it('legacy replaces the given top-level properties and keeps the others', () => {
    assert.deepEqual(applyPut(stored(), { info: { model: 'X2' }, nodeParentsIds: [], isActive: true }, 'legacy'), {
      ok: true,
      properties: { nodeId: 'n-1', name: 'Meter', info: { model: 'X2' }, nodeParentsIds: [], tariff: 0.3, isActive: true },
    });
  });

  it('merge merges objects recursively, replaces arrays and scalars, and stores null', () => {
    assert.deepEqual(applyPut(stored(), {
      info: { model: 'X2', address: { zip: '9050' }, serialNumber: 'SN' },
      nodeParentsIds: ['p9'],
      tariff: null,
      isActive: false,
    }, 'merge'), {
      ok: true,
      properties: {
        nodeId: 'n-1', name: 'Meter',
        info: { manufacturer: 'Acme', model: 'X2', address: { city: 'Ghent', zip: '9050' }, serialNumber: 'SN' },
        nodeParentsIds: ['p9'], tariff: null, isActive: false,
      },
    });
  });

  it('merge replaces when either side is not an object', () => {
    assert.deepEqual(applyPut({ a: [1, 2], b: 'text', c: { x: 1 }, d: { x: 1 } }, { a: { k: 1 }, b: { k: 2 }, c: [3], d: 'flat' }, 'merge'), {
      ok: true, properties: { a: { k: 1 }, b: { k: 2 }, c: [3], d: 'flat' },
    });
    assert.deepEqual(applyPut({ info: { a: 1 } }, { info: {} }, 'merge'), { ok: true, properties: { info: { a: 1 } } });
  });

  it('strict replaces everything', () => {
    assert.deepEqual(applyPut(stored(), { name: 'Only' }, 'strict'), { ok: true, properties: { name: 'Only' } });
    assert.deepEqual(applyPut(stored(), {}, 'strict'), { ok: true, properties: {} });
  });

  it('an empty body changes nothing in legacy and merge', () => {
    for (const mode of ['legacy', 'merge'] as const) assert.deepEqual(applyPut(stored(), {}, mode), { ok: true, properties: stored() });
  });
});

describe('put modes: no mutation', () => {
  for (const mode of PUT_MODES) {
    it(`${mode}: leaves both inputs untouched and shares no objects with them`, () => {
      const current = stored();
      const incoming = { info: { address: { city: 'Bruges' } }, list: [{ a: 1 }] };
      const result = applyPut(current, incoming, mode);
      assert.ok(result.ok);
      assert.deepEqual(current, stored());
      assert.deepEqual(incoming, { info: { address: { city: 'Bruges' } }, list: [{ a: 1 }] });
      (result.properties.list as { a: number }[])[0].a = 2;
      (result.properties.info as { address: { city: string } }).address.city = 'changed';
      assert.equal(incoming.list[0].a, 1);
      assert.equal(incoming.info.address.city, 'Bruges');
      assert.equal(current.info.address.city, 'Ghent');
    });
  }
});

describe('put modes: security', () => {
  for (const mode of PUT_MODES) {
    it(`${mode}: refuses __proto__, constructor and prototype keys anywhere without throwing`, () => {
      assert.deepEqual(applyPut(stored(), JSON.parse('{"__proto__":{"polluted":1}}'), mode), {
        ok: false, path: '__proto__', message: 'key "__proto__" is refused (prototype pollution)',
      });
      assert.deepEqual(applyPut(stored(), JSON.parse('{"info":{"__proto__":{"polluted":1}}}'), mode), {
        ok: false, path: 'info.__proto__', message: 'key "__proto__" is refused (prototype pollution)',
      });
      assert.deepEqual(applyPut(stored(), { info: { constructor: { prototype: { polluted: 1 } } } }, mode), {
        ok: false, path: 'info.constructor', message: 'key "constructor" is refused (prototype pollution)',
      });
      assert.deepEqual(applyPut(stored(), { list: [{}, { prototype: 1 }] }, mode), {
        ok: false, path: 'list[1].prototype', message: 'key "prototype" is refused (prototype pollution)',
      });
      assert.deepEqual(applyPut(stored(), JSON.parse('{"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":1}}'), mode), {
        ok: false, path: '__proto__', message: 'key "__proto__" is refused (prototype pollution)',
      });
      assertPrototypesClean();
    });
  }

  it('refuses bodies that are not plain JSON objects', () => {
    assert.deepEqual(applyPut({}, [] as unknown as Record<string, unknown>, 'legacy'), { ok: false, path: '', message: 'expected an object' });
    assert.deepEqual(applyPut({}, { a: Number.POSITIVE_INFINITY }, 'merge'), { ok: false, path: 'a', message: 'expected a finite number' });
    assert.deepEqual(applyPut({}, { a: { when: new Date(0) } }, 'strict'), { ok: false, path: 'a.when', message: 'expected a JSON value' });
  });

  it('merges safely into stored data that already holds an own "__proto__" key', () => {
    const current = JSON.parse('{"__proto__":{"x":1},"a":{"b":1}}') as Record<string, unknown>;
    const result = applyPut(current, { a: { c: 2 } }, 'merge');
    assert.ok(result.ok);
    assert.deepEqual(Object.keys(result.properties), ['__proto__', 'a']);
    assert.equal(Object.getPrototypeOf(result.properties), Object.prototype);
    assert.deepEqual(result.properties.a, { b: 1, c: 2 });
    assertPrototypesClean();
  });

  it('stores keys named like Object.prototype members as own data', () => {
    const result = applyPut({ toString: { a: 1 } }, { toString: { b: 2 }, hasOwnProperty: 1, valueOf: [1] }, 'merge');
    assert.deepEqual(result, { ok: true, properties: { toString: { a: 1, b: 2 }, hasOwnProperty: 1, valueOf: [1] } });
  });
});

describe('put modes: touched properties', () => {
  it('legacy and merge touch the keys of the body; strict also every stored key', () => {
    const current = { a: 1, b: { x: 1 }, c: 3 };
    const incoming = { b: { y: 2 }, d: 4 };
    assert.deepEqual([...putTouchedProperties(current, incoming, 'legacy')].sort(), ['b', 'd']);
    assert.deepEqual([...putTouchedProperties(current, incoming, 'merge')].sort(), ['b', 'd']);
    assert.deepEqual([...putTouchedProperties(current, incoming, 'strict')].sort(), ['a', 'b', 'c', 'd']);
    assert.deepEqual([...putTouchedProperties(current, {}, 'strict')].sort(), ['a', 'b', 'c']);
    assert.deepEqual([...putTouchedProperties(current, {}, 'merge')], []);
  });

  it('counts only own keys', () => {
    assert.deepEqual([...putTouchedProperties(Object.create({ inherited: 1 }), { a: 1 }, 'strict')], ['a']);
  });
});
