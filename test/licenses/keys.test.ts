// License keys: format, alphabet, entropy and uniqueness.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { GENERATED_KEY, KEY_ALPHABET, KEY_BITS, generateLicenseKey } from '../../src/licenses/license-keys.ts';
import { makeTestApp } from '../support/app.ts';
import { createLicenses } from './fixtures.ts';

describe('license keys', () => {
  test('carry at least 100 bits and use an alphabet without look-alikes', () => {
    assert.ok(KEY_BITS >= 100, `only ${KEY_BITS} bits`);
    assert.equal(KEY_BITS, 125);
    assert.equal(new Set(KEY_ALPHABET).size, 32);
    for (const ambiguous of ['0', 'O', '1', 'I']) assert.ok(!KEY_ALPHABET.includes(ambiguous), ambiguous);
    assert.match(KEY_ALPHABET, /^[2-9A-Z]+$/);
  });

  test('every byte maps to one symbol by its low five bits (no modulo bias)', () => {
    assert.equal(generateLicenseKey(() => new Uint8Array(25)), 'GK-22222-22222-22222-22222-22222');
    assert.equal(generateLicenseKey(() => new Uint8Array(25).fill(0xff)), 'GK-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ');
    const counting = generateLicenseKey(() => Uint8Array.from({ length: 25 }, (_, i) => i + 32 * (i % 8)));
    assert.equal(counting, 'GK-23456-789AB-CDEFG-HJKLM-NPQRS');
    assert.throws(() => generateLicenseKey(() => new Uint8Array(24)));
  });

  test('10,000 keys: format, uniqueness, and every symbol about equally often at every position', () => {
    const keys = Array.from({ length: 10_000 }, () => generateLicenseKey());
    for (const key of keys) {
      assert.match(key, GENERATED_KEY);
      assert.equal(key.length, 32);
    }
    assert.equal(new Set(keys).size, keys.length);
    const symbols = keys.map((k) => k.slice(3).replaceAll('-', ''));
    // Per symbol over all positions: expected 250000/32 = 7812.5, standard deviation ~87; 600 is ~7 sigma, while a
    // biased mapping (e.g. modulo 30) is off by ~1000.
    const total = new Map<string, number>();
    for (const s of symbols) for (const ch of s) total.set(ch, (total.get(ch) ?? 0) + 1);
    assert.equal(total.size, 32);
    for (const [ch, n] of total) assert.ok(Math.abs(n - 7812.5) < 600, `symbol ${ch} appeared ${n} times`);
    // Per position: every symbol shows up (expected 312 each), so no position is stuck or narrowed.
    for (let pos = 0; pos < 25; pos++) assert.equal(new Set(symbols.map((s) => s[pos])).size, 32, `position ${pos}`);
  });

  test('POST /v1/license generates keys of this format, all distinct', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const licenses = await createLicenses(app, { count: 1000 });
    assert.equal(licenses.length, 1000);
    for (const l of licenses) assert.match(l.key, GENERATED_KEY);
    assert.equal(new Set(licenses.map((l) => l.key)).size, 1000);
    assert.equal(new Set(licenses.map((l) => l.id)).size, 1000);
  });
});
