import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { applyPatch, parsePatchOps, touchedProperties, type PatchOp, type PatchResult } from '../../src/devices/patch.ts';

const device = () => ({
  nodeId: 'n-1',
  name: 'Meter',
  info: { manufacturer: 'Acme', serialNumber: 'SN-1' },
  nodeParentsIds: ['p0', 'p1', 'p2'],
  nested: { deep: { list: [{ x: 1 }] } },
});

/** Parses then applies, failing the test if the body does not parse. */
function patch(properties: object, body: unknown, deviceId = 2): PatchResult {
  const parsed = parsePatchOps(body);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
  return applyPatch(properties, parsed.ok ? parsed.ops : [], deviceId);
}

function failure(index: number, op: string, path: string, reason: string, deviceId = 2): PatchResult {
  return { ok: false, index, op, path, message: `Operation ${index} (${op}) failed for device ${deviceId} at path ${JSON.stringify(path)}`, reason };
}

const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
const assertPrototypesClean = () => assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeKeys);

describe('patch: parsePatchOps happy', () => {
  it('normalises each op to the members it uses', () => {
    assert.deepEqual(parsePatchOps([
      { op: 'add', path: '/a', value: 1 },
      { op: 'remove', path: '/a', value: 'ignored' },
      { op: 'replace', path: '/a', value: null },
      { op: 'move', from: '/a', path: '/b' },
      { op: 'copy', from: '/b', path: '/c' },
      { op: 'test', path: '/c', value: { k: [1] }, from: '/ignored/but/valid' },
    ]), {
      ok: true,
      ops: [{ op: 'add', path: '/a', value: 1 }, { op: 'remove', path: '/a' }, { op: 'replace', path: '/a', value: null },
        { op: 'move', path: '/b', from: '/a' }, { op: 'copy', path: '/c', from: '/b' }, { op: 'test', path: '/c', value: { k: [1] } }],
    });
  });

  it('accepts an empty patch, 1000 operations, escaped segments and the empty key', () => {
    assert.deepEqual(parsePatchOps([]), { ok: true, ops: [] });
    const many = Array.from({ length: 1000 }, () => ({ op: 'test', path: '/a', value: 1 }));
    assert.equal((parsePatchOps(many) as { ops: unknown[] }).ops.length, 1000);
    assert.equal(parsePatchOps([{ op: 'remove', path: '/a~1b/~0c/' }]).ok, true);
  });
});

describe('patch: parsePatchOps validation', () => {
  const refused = (body: unknown, message: string) => assert.deepEqual(parsePatchOps(body), { ok: false, message });

  it('needs an array of at most 1000 objects', () => {
    refused({ op: 'add', path: '/a', value: 1 }, 'expected an array of JSON Patch operations');
    refused(null, 'expected an array of JSON Patch operations');
    refused(Array.from({ length: 1001 }, () => ({ op: 'remove', path: '/a' })), 'at most 1000 operations are allowed, got 1001');
    refused([{ op: 'remove', path: '/a' }, 'remove /a'], '[1]: expected an operation object');
    refused([[]], '[0]: expected an operation object');
  });

  it('names the index and member of the first problem', () => {
    refused([{ op: 'add', path: '/a', value: 1 }, { op: 'add', path: '/a', value: 1, extra: true }], '[1].extra: unknown field');
    refused([{ op: 'upsert', path: '/a', value: 1 }], '[0].op: expected one of add, remove, replace, move, copy, test');
    refused([{ op: '_get', path: '/a' }], '[0].op: expected one of add, remove, replace, move, copy, test');
    refused([{ path: '/a' }], '[0].op: expected one of add, remove, replace, move, copy, test');
    refused([{ op: 'remove' }], '[0].path: expected a JSON pointer string');
    refused([{ op: 'remove', path: 3 }], '[0].path: expected a JSON pointer string');
    refused([{ op: 'remove', path: 'a/b' }], '[0].path: a JSON pointer must start with "/"');
    refused([{ op: 'remove', path: '/a~2' }], '[0].path: "~" must be escaped as "~0" ("~1" stands for "/")');
    refused([{ op: 'remove', path: '/a~' }], '[0].path: "~" must be escaped as "~0" ("~1" stands for "/")');
    refused([{ op: 'add', path: '/a', value: 1 }, { op: 'add', path: '/b', value: 1 }, { op: 'move', path: '/c' }], '[2].from: required for move');
    refused([{ op: 'copy', path: '/c' }], '[0].from: required for copy');
    refused([{ op: 'copy', path: '/c', from: 'b' }], '[0].from: a JSON pointer must start with "/"');
    refused([{ op: 'add', path: '/c', from: 5, value: 1 }], '[0].from: expected a JSON pointer string');
    for (const op of ['add', 'replace', 'test']) refused([{ op, path: '/a' }], `[0].value: required for ${op}`);
    refused([{ op: 'add', path: '/a', value: undefined }], '[0].value: required for add');
  });

  it('refuses the whole document as path or from: properties are never replaced wholesale', () => {
    const message = 'the whole document cannot be targeted; name a property (e.g. "/name")';
    for (const op of ['add', 'replace', 'remove', 'test']) refused([{ op, path: '', value: {} }], `[0].path: ${message}`);
    refused([{ op: 'copy', from: '', path: '/backup' }], `[0].from: ${message}`);
    refused([{ op: 'move', from: '/a', path: '' }], `[0].path: ${message}`);
  });

  it('refuses values that are not plain JSON', () => {
    refused([{ op: 'add', path: '/a', value: { b: [1, Number.NaN] } }], '[0].value.b[1]: expected a finite number');
    refused([{ op: 'add', path: '/a', value: { f: () => 1 } }], '[0].value.f: expected a JSON value');
    refused([{ op: 'add', path: '/a', value: [undefined] }], '[0].value[0]: expected a JSON value');
    refused([{ op: 'add', path: '/a', value: new Date(0) }], '[0].value: expected a JSON value');
  });
});

describe('patch: security', () => {
  const refused = (body: unknown, message: string) => assert.deepEqual(parsePatchOps(body), { ok: false, message });

  it('refuses __proto__, constructor and prototype segments in path and from', () => {
    refused([{ op: 'add', path: '/__proto__/x', value: 1 }], '[0].path: segment "__proto__" is refused (prototype pollution)');
    refused([{ op: 'add', path: '/a/constructor/prototype', value: 1 }], '[0].path: segment "constructor" is refused (prototype pollution)');
    refused([{ op: 'add', path: '/prototype', value: 1 }], '[0].path: segment "prototype" is refused (prototype pollution)');
    refused([{ op: 'replace', path: '/info/__proto__', value: {} }], '[0].path: segment "__proto__" is refused (prototype pollution)');
    refused([{ op: 'copy', from: '/__proto__', path: '/x' }], '[0].from: segment "__proto__" is refused (prototype pollution)');
    refused([{ op: 'move', from: '/constructor', path: '/x' }], '[0].from: segment "constructor" is refused (prototype pollution)');
    assertPrototypesClean();
  });

  it('refuses the same segments written with JSON unicode escapes', () => {
    const body = JSON.parse('[{"op":"add","path":"/\\u005f\\u005fproto\\u005f\\u005f/polluted","value":1}]');
    refused(body, '[0].path: segment "__proto__" is refused (prototype pollution)');
    const nested = JSON.parse('[{"op":"add","path":"/a/\\u0063onstructor/prototype/polluted","value":1}]');
    refused(nested, '[0].path: segment "constructor" is refused (prototype pollution)');
  });

  it('refuses refused keys as op members and inside values', () => {
    refused(JSON.parse('[{"op":"add","path":"/a","value":1,"__proto__":{"polluted":1}}]'), '[0].__proto__: key "__proto__" is refused (prototype pollution)');
    refused(JSON.parse('[{"op":"add","path":"/a","value":{"b":{"__proto__":{"polluted":1}}}}]'), '[0].value.b.__proto__: key "__proto__" is refused (prototype pollution)');
    refused([{ op: 'add', path: '/a', value: [{ constructor: { prototype: 1 } }] }], '[0].value[0].constructor: key "constructor" is refused (prototype pollution)');
    refused([{ op: 'test', path: '/a', value: { prototype: 1 } }], '[0].value.prototype: key "prototype" is refused (prototype pollution)');
    assertPrototypesClean();
  });

  it('treats escaped look-alikes as ordinary keys and leaves prototypes alone', () => {
    // "~1" unescapes to "/", so these name the single keys "a/__proto__" and "__proto__~", never a prototype
    const result = patch({}, [
      { op: 'add', path: '/a~1__proto__', value: { polluted: 1 } },
      { op: 'add', path: '/__proto__~0', value: 1 },
      { op: 'add', path: '/x', value: {} },
      { op: 'add', path: '/x/__proto__~1polluted', value: 1 },
    ]);
    assert.deepEqual(result, { ok: true, properties: { 'a/__proto__': { polluted: 1 }, '__proto__~': 1, x: { '__proto__/polluted': 1 } } });
    assertPrototypesClean();
  });

  it('refuses dangerous paths even when applyPatch is called without parsePatchOps', () => {
    const ops = [{ op: 'add', path: '/__proto__/polluted', value: 1 }] as PatchOp[];
    assert.deepEqual(applyPatch({}, ops, 9), failure(0, 'add', '/__proto__/polluted', '[0].path: segment "__proto__" is refused (prototype pollution)', 9));
    const nested = [{ op: 'add', path: '/a', value: {} }, { op: 'add', path: '/a/constructor/prototype/polluted', value: 1 }] as PatchOp[];
    assert.equal(applyPatch({}, nested, 9).ok, false);
    assertPrototypesClean();
  });

  it('does not treat inherited members as existing values', () => {
    for (const op of ['remove', 'replace', 'test'] as const) {
      const body = op === 'remove' ? [{ op, path: '/toString' }] : [{ op, path: '/toString', value: 1 }];
      assert.deepEqual(patch({ a: 1 }, body), failure(0, op, '/toString', 'path does not exist'));
    }
    assert.deepEqual(patch({ a: 1 }, [{ op: 'copy', from: '/valueOf', path: '/b' }]), failure(0, 'copy', '/b', 'from does not exist'));
    assert.deepEqual(patch({ a: 1 }, [{ op: 'add', path: '/hasOwnProperty/x', value: 1 }]), failure(0, 'add', '/hasOwnProperty/x', 'parent of path does not exist'));
    assert.deepEqual(patch({ a: [] }, [{ op: 'test', path: '/a/length', value: 0 }]), failure(0, 'test', '/a/length', 'path does not exist'));
  });

  it('stores keys named like Object.prototype members as plain data', () => {
    const result = patch({}, [
      { op: 'add', path: '/toString', value: 'x' },
      { op: 'add', path: '/hasOwnProperty', value: { hasOwnProperty: 1 } },
      // fast-json-patch's own test compares with b.hasOwnProperty(), which this value shadows
      { op: 'test', path: '/hasOwnProperty', value: { hasOwnProperty: 1 } },
    ]);
    assert.deepEqual(result, { ok: true, properties: { toString: 'x', hasOwnProperty: { hasOwnProperty: 1 } } });
  });
});

describe('patch: touchedProperties', () => {
  it('splits edits from reads by top-level key', () => {
    const parsed = parsePatchOps([
      { op: 'add', path: '/info/currency', value: 'EUR' },
      { op: 'remove', path: '/nodeParentsIds/0' },
      { op: 'replace', path: '/name', value: 'x' },
      { op: 'test', path: '/isActive', value: true },
      { op: 'move', from: '/old/inner', path: '/moved' },
      { op: 'copy', from: '/source/a', path: '/target/b' },
      { op: 'add', path: '/a~1b/c', value: 1 },
      { op: 'add', path: '/m~0n', value: 1 },
      { op: 'add', path: '/', value: 1 },
      { op: 'add', path: '/ignored', from: '/notRead', value: 1 },
    ]);
    assert.ok(parsed.ok);
    const { edits, reads } = touchedProperties(parsed.ops);
    assert.deepEqual([...edits].sort(), ['', 'a/b', 'ignored', 'info', 'm~n', 'moved', 'name', 'nodeParentsIds', 'old', 'target'].sort());
    assert.deepEqual([...reads].sort(), ['isActive', 'source']);
  });

  it('counts a tested property that is also edited in both sets', () => {
    const { edits, reads } = touchedProperties([{ op: 'test', path: '/a', value: 1 }, { op: 'replace', path: '/a/b', value: 2 }]);
    assert.deepEqual([...edits], ['a']);
    assert.deepEqual([...reads], ['a']);
  });
});

describe('patch: applyPatch happy', () => {
  it('add: new key, nested key, overwrite, array insert and append', () => {
    assert.deepEqual(patch(device(), [
      { op: 'add', path: '/isActive', value: true },
      { op: 'add', path: '/info/currency', value: 'EUR' },
      { op: 'add', path: '/name', value: null },
      { op: 'add', path: '/nodeParentsIds/1', value: 'new' },
      { op: 'add', path: '/nodeParentsIds/-', value: 'last' },
      { op: 'add', path: '/nodeParentsIds/5', value: 'end' },
      { op: 'add', path: '/nested/deep/list/0/y', value: [2] },
    ]), {
      ok: true,
      properties: {
        nodeId: 'n-1', name: null, isActive: true,
        info: { manufacturer: 'Acme', serialNumber: 'SN-1', currency: 'EUR' },
        nodeParentsIds: ['p0', 'new', 'p1', 'p2', 'last', 'end'],
        nested: { deep: { list: [{ x: 1, y: [2] }] } },
      },
    });
  });

  it('remove and replace on objects and arrays', () => {
    assert.deepEqual(patch(device(), [
      { op: 'remove', path: '/info/serialNumber' },
      { op: 'remove', path: '/nodeParentsIds/1' },
      { op: 'replace', path: '/nodeParentsIds/0', value: 'q0' },
      { op: 'replace', path: '/nested', value: 'flat' },
      { op: 'remove', path: '/nodeId' },
    ]), { ok: true, properties: { name: 'Meter', info: { manufacturer: 'Acme' }, nodeParentsIds: ['q0', 'p2'], nested: 'flat' } });
  });

  it('move between properties and within an array (target index counted after the removal)', () => {
    assert.deepEqual(patch(device(), [
      { op: 'move', from: '/info/serialNumber', path: '/serial' },
      { op: 'move', from: '/nodeParentsIds/0', path: '/nodeParentsIds/2' },
      { op: 'move', from: '/name', path: '/name' },
    ]), {
      ok: true,
      properties: {
        nodeId: 'n-1', name: 'Meter', info: { manufacturer: 'Acme' }, serial: 'SN-1',
        nodeParentsIds: ['p1', 'p2', 'p0'], nested: { deep: { list: [{ x: 1 }] } },
      },
    });
  });

  it('copy is by value: later edits of the copy leave the source alone', () => {
    assert.deepEqual(patch({ a: { b: [1] } }, [
      { op: 'copy', from: '/a', path: '/c' },
      { op: 'add', path: '/c/b/-', value: 2 },
      { op: 'copy', from: '/a/b/0', path: '/a/b/0' },
    ]), { ok: true, properties: { a: { b: [1, 1] }, c: { b: [1, 2] } } });
  });

  it('test compares JSON values deeply, ignoring key order', () => {
    assert.deepEqual(patch(device(), [
      { op: 'test', path: '/info', value: { serialNumber: 'SN-1', manufacturer: 'Acme' } },
      { op: 'test', path: '/nodeParentsIds/2', value: 'p2' },
      { op: 'test', path: '/nested/deep/list', value: [{ x: 1 }] },
    ]), { ok: true, properties: device() });
  });

  it('returns a fresh object even for an empty patch', () => {
    const input = device();
    const result = applyPatch(input, [], 1);
    assert.deepEqual(result, { ok: true, properties: device() });
    assert.notEqual((result as { properties: object }).properties, input);
  });
});

describe('patch: applyPatch failures', () => {
  it('uses the contract message', () => {
    const result = patch({ name: 'x' }, [{ op: 'add', path: '/info/currency', value: 'EUR' }]);
    assert.equal((result as { message: string }).message, 'Operation 0 (add) failed for device 2 at path "/info/currency"');
  });

  it('reports the first failing operation and keeps nothing of the earlier ones', () => {
    const input = device();
    assert.deepEqual(applyPatch(input, [
      { op: 'replace', path: '/name', value: 'changed' },
      { op: 'add', path: '/x', value: 1 },
      { op: 'test', path: '/name', value: 'Meter' },
      { op: 'remove', path: '/missing' },
    ], 17), failure(2, 'test', '/name', 'test failed: values differ', 17));
    assert.deepEqual(input, device());
  });

  it('fails on missing paths, bad array indexes and impossible moves', () => {
    const cases: [unknown, PatchResult][] = [
      [{ op: 'remove', path: '/missing' }, failure(0, 'remove', '/missing', 'path does not exist')],
      [{ op: 'replace', path: '/info/model', value: 1 }, failure(0, 'replace', '/info/model', 'path does not exist')],
      [{ op: 'test', path: '/info/model', value: null }, failure(0, 'test', '/info/model', 'path does not exist')],
      [{ op: 'test', path: '/name', value: 'meter' }, failure(0, 'test', '/name', 'test failed: values differ')],
      [{ op: 'test', path: '/nodeParentsIds', value: ['p0', 'p1'] }, failure(0, 'test', '/nodeParentsIds', 'test failed: values differ')],
      [{ op: 'add', path: '/a/b', value: 1 }, failure(0, 'add', '/a/b', 'parent of path does not exist')],
      [{ op: 'add', path: '/name/first', value: 1 }, failure(0, 'add', '/name/first', 'parent of path does not exist')],
      [{ op: 'add', path: '/nodeParentsIds/4', value: 'x' }, failure(0, 'add', '/nodeParentsIds/4', 'array index out of range')],
      [{ op: 'add', path: '/nodeParentsIds/01', value: 'x' }, failure(0, 'add', '/nodeParentsIds/01', 'array index out of range')],
      [{ op: 'add', path: '/nodeParentsIds/x', value: 'x' }, failure(0, 'add', '/nodeParentsIds/x', 'array index out of range')],
      [{ op: 'remove', path: '/nodeParentsIds/3' }, failure(0, 'remove', '/nodeParentsIds/3', 'path does not exist')],
      [{ op: 'remove', path: '/nodeParentsIds/-' }, failure(0, 'remove', '/nodeParentsIds/-', 'path does not exist')],
      [{ op: 'replace', path: '/nodeParentsIds/-1', value: 1 }, failure(0, 'replace', '/nodeParentsIds/-1', 'path does not exist')],
      [{ op: 'move', from: '/missing', path: '/x' }, failure(0, 'move', '/x', 'from does not exist')],
      [{ op: 'move', from: '/info', path: '/info/inner' }, failure(0, 'move', '/info/inner', 'cannot move a value into itself')],
      [{ op: 'move', from: '/nodeParentsIds/0', path: '/nodeParentsIds/3' }, failure(0, 'move', '/nodeParentsIds/3', 'array index out of range')],
      [{ op: 'move', from: '/name', path: '/gone/name' }, failure(0, 'move', '/gone/name', 'parent of path does not exist')],
      [{ op: 'copy', from: '/info/model', path: '/model' }, failure(0, 'copy', '/model', 'from does not exist')],
      [{ op: 'copy', from: '/name', path: '/x/y' }, failure(0, 'copy', '/x/y', 'parent of path does not exist')],
    ];
    for (const [op, expected] of cases) assert.deepEqual(patch(device(), [op]), expected, JSON.stringify(op));
  });

  it('quotes the path as JSON so it stays unambiguous', () => {
    assert.equal((patch({}, [{ op: 'remove', path: '/say "hi"\\' }], 0) as { message: string }).message,
      'Operation 0 (remove) failed for device 0 at path "/say \\"hi\\"\\\\"');
  });

  it('rejects malformed ops given straight to applyPatch instead of throwing', () => {
    const bad = [
      [null, failure(0, 'null', '', '[0]: expected an operation object')],
      [{ op: 'add', path: '', value: [] }, failure(0, 'add', '', '[0].path: the whole document cannot be targeted; name a property (e.g. "/name")')],
      [{ op: 'replace', path: '', value: 5 }, failure(0, 'replace', '', '[0].path: the whole document cannot be targeted; name a property (e.g. "/name")')],
      [{ op: 'remove', path: '' }, failure(0, 'remove', '', '[0].path: the whole document cannot be targeted; name a property (e.g. "/name")')],
      [{ op: '_get', path: '/a' }, failure(0, '_get', '/a', '[0].op: expected one of add, remove, replace, move, copy, test')],
      [{ op: 'move', path: '/a' }, failure(0, 'move', '/a', '[0].from: required for move')],
    ] as const;
    for (const [op, expected] of bad) assert.deepEqual(applyPatch({ a: 1 }, [op as unknown as PatchOp], 2), expected);
  });

  it('throws only for a programmer error: properties that are not a plain object', () => {
    assert.throws(() => applyPatch([] as object, [], 1), TypeError);
  });
});

describe('patch: no mutation', () => {
  it('leaves the input document and the operations untouched', () => {
    const input = device();
    const ops: PatchOp[] = [
      { op: 'add', path: '/obj', value: { inner: { n: 1 } } },
      { op: 'replace', path: '/obj/inner/n', value: 2 },
      { op: 'add', path: '/info/model', value: 'M' },
      { op: 'remove', path: '/nodeParentsIds/0' },
      { op: 'move', from: '/nested/deep', path: '/deep' },
      { op: 'add', path: '/deep/list/0/x', value: 9 },
    ];
    const opsBefore = structuredClone(ops);
    const result = applyPatch(input, ops, 3);
    assert.deepEqual(result, {
      ok: true,
      properties: {
        nodeId: 'n-1', name: 'Meter', info: { manufacturer: 'Acme', serialNumber: 'SN-1', model: 'M' },
        nodeParentsIds: ['p1', 'p2'], nested: {}, obj: { inner: { n: 2 } }, deep: { list: [{ x: 9 }] },
      },
    });
    assert.deepEqual(input, device());
    assert.deepEqual(ops, opsBefore);
  });
});

/** A deep copy that keeps each object's prototype (fast-check builds some null-prototype objects). */
function snapshot<T>(value: T): T {
  if (Array.isArray(value)) return value.map(snapshot) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy = Object.create(Object.getPrototypeOf(value)) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) Object.defineProperty(copy, key, { value: snapshot(item), enumerable: true, writable: true });
  return copy as T;
}

describe('patch: property test', () => {
  const keyNames = ['a', 'b', 'c', '0', '1', '2', '-', '', '01', 'x~y', 'a/b', 'toString', 'hasOwnProperty', '__proto__', 'constructor', 'prototype'];
  const escape = (k: string) => k.replaceAll('~', '~0').replaceAll('/', '~1');
  const pointer = (keys: fc.Arbitrary<string>) => fc.oneof(
    { weight: 8, arbitrary: fc.array(keys, { maxLength: 4 }).map((s) => s.map((k) => `/${escape(k)}`).join('')) },
    { weight: 1, arbitrary: fc.string() },
  );
  const jsonObject = (keys: fc.Arbitrary<string>) => fc.array(fc.tuple(keys, fc.jsonValue({ maxDepth: 3 })), { maxLength: 6 })
    .map((entries) => Object.fromEntries(entries)); // fromEntries defines own keys, even "__proto__"
  const operation = (keys: fc.Arbitrary<string>, ops: string[]) => fc.record(
    { op: fc.constantFrom(...ops), path: pointer(keys), from: pointer(keys), value: fc.jsonValue({ maxDepth: 2 }) },
    { requiredKeys: ['op', 'path'] },
  );
  const allOps = ['add', 'remove', 'replace', 'move', 'copy', 'test'];

  it('never throws, never mutates its inputs and always yields a plain JSON object', () => {
    const keys = fc.constantFrom(...keyNames);
    const anyOp = fc.oneof({ weight: 9, arbitrary: operation(keys, [...allOps, 'bogus']) }, { weight: 1, arbitrary: fc.anything() });
    fc.assert(fc.property(jsonObject(keys), fc.array(anyOp, { maxLength: 8 }), (doc, ops) => {
      const docBefore = snapshot(doc);
      const opsBefore = snapshot(ops);
      const result = applyPatch(doc, ops as PatchOp[], 1);
      assert.deepStrictEqual(doc, docBefore);
      assert.deepStrictEqual(ops, opsBefore);
      if (result.ok) {
        assert.equal(Object.getPrototypeOf(result.properties), Object.prototype);
        assert.deepStrictEqual(JSON.parse(JSON.stringify(result.properties)), result.properties);
      } else {
        assert.equal(result.message, `Operation ${result.index} (${result.op}) failed for device 1 at path ${JSON.stringify(result.path)}`);
      }
    }), { seed: 20240611, numRuns: 3000 });
    assertPrototypesClean();
  });

  it('agrees with fast-json-patch whenever the patch succeeds', () => {
    // ordinary keys only: the oracle itself resolves inherited members and shadowable hasOwnProperty
    const keys = fc.constantFrom('a', 'b', '0', '1', '-', 'x~y');
    let succeeded = 0;
    fc.assert(fc.property(jsonObject(keys), fc.array(operation(keys, allOps), { maxLength: 6 }), (doc, ops) => {
      const result = applyPatch(doc, ops as PatchOp[], 1);
      if (!result.ok) return;
      succeeded++;
      const expected = jsonpatch.applyPatch(structuredClone(doc), structuredClone(ops) as never, true).newDocument;
      assert.deepStrictEqual(result.properties, expected);
    }), { seed: 7, numRuns: 3000 });
    assert.ok(succeeded > 300, `only ${succeeded} successful patches were compared`);
  });
});
