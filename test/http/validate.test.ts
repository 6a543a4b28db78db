// Request bodies (src/http/validate.ts): the fast paths (no reviver when no forbidden key can be in the text, no path
// strings when no NUL is in the value) must answer exactly as the full checks do, whatever the keys and escapes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseJsonBody, refuseUnstorableText } from '../../src/http/validate.ts';
import { ApiError } from '../../src/http/errors.ts';

const FORBIDDEN = ['__proto__', 'constructor', 'prototype'];

/** The full check: every key seen by a reviver. */
function reference(text: string): { value?: unknown; error?: string } {
  let forbidden: string | undefined;
  try {
    const value = JSON.parse(text, function (this: unknown, key, val) {
      if (FORBIDDEN.includes(key) && !Array.isArray(this)) forbidden ??= key;
      return val;
    });
    return forbidden === undefined ? { value } : { error: `body: the key "${forbidden}" is not allowed` };
  } catch {
    return { error: 'malformed' };
  }
}

const outcome = (text: string): { value?: unknown; error?: string } => {
  try {
    return { value: parseJsonBody(text) };
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return { error: err.message.startsWith('body: malformed JSON') ? 'malformed' : err.message };
  }
};

const key = fc.oneof(fc.constantFrom(...FORBIDDEN, 'a', 'nodeId', 'proto', '__proto', 'ü', 'a\u0000b'), fc.string({ maxLength: 5 }));
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 0 }), fc.constantFrom(...FORBIDDEN, 'x\u0000'), fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 })),
})).value;
/** Writes some characters of the JSON text as \u escapes, as a client may. */
const escaped = (text: string, every: number) => text.replace(/[a-z_]/g, (ch, at: number) => (at % every === 0 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch));

describe('request bodies', () => {
  it('parseJsonBody refuses forbidden keys exactly as a reviver over every key does, escaped or not', () => {
    fc.assert(fc.property(json, fc.integer({ min: 1, max: 7 }), fc.boolean(), (value, every, escape) => {
      // keys are written with JSON.stringify, so a forbidden key made of escapes is still that key once parsed
      const text = escape ? escaped(JSON.stringify({ v: value }), every) : JSON.stringify({ v: value });
      assert.deepEqual(outcome(text), reference(text));
    }), { numRuns: 3000, seed: 21 });
    assert.equal(outcome('{"\\u005f_proto__":1}').error, 'body: the key "__proto__" is not allowed');
    assert.equal(outcome('{"a":["constructor"]}').error, undefined);
    assert.equal(outcome('[{"prototype":1}]').error, 'body: the key "prototype" is not allowed');
  });

  it('refuseUnstorableText names the first NUL or unpaired surrogate by its path, and passes values without one', () => {
    const at = (value: unknown) => {
      try {
        refuseUnstorableText(value);
        return 'ok';
      } catch (err) {
        return (err as Error).message;
      }
    };
    assert.equal(at({ a: [1, 'x', { b: 'ok' }], c: null }), 'ok');
    assert.equal(at(JSON.parse('{"a":"\\\\u0000"}')), 'ok'); // a backslash and "u0000", not a NUL
    assert.equal(at({ a: [1, { b: 'x\u0000' }] }), 'a[1].b: text must not contain the NUL character (U+0000)');
    assert.equal(at({ a: { 'k\u0000': 1 } }), 'a: a key must not contain the NUL character (U+0000)');
    assert.equal(at('\u0000'), 'body: text must not contain the NUL character (U+0000)');
    assert.equal(at({ a: ['\ud83d\ude00', 'x\udfff'] }), 'a[1]: text must not contain an unpaired UTF-16 surrogate');
    assert.equal(at({ a: { ['\ud800']: 1 } }), 'a: a key must not contain an unpaired UTF-16 surrogate');
    assert.equal(at(JSON.parse('{"a":"\\ud800"}')), 'a: text must not contain an unpaired UTF-16 surrogate');
    assert.equal(at({ a: '\ud83d\ude00 \u{1F50B}' }), 'ok');
  });

  it('refuseUnstorableText refuses exactly the strings with a NUL or an unpaired surrogate (random UTF-16)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 8 }), (text, key) => {
      let refused = false;
      try {
        refuseUnstorableText({ [key]: [text] });
      } catch {
        refused = true;
      }
      const bad = (s: string) => s.includes('\u0000') || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
      assert.equal(refused, bad(text) || bad(key));
    }), { seed: 44, numRuns: 2000 });
  });
});
