// The pure pieces of delivery: where a webhook may point (properties over random addresses, in every spelling), the
// retry schedule, Retry-After, and the signature against the specification's own library.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { refusedAddress, refusedWebhookUrl } from '../../src/events/address-rules.ts';
import { MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS, retryAfterMs } from '../../src/events/retry.ts';
import { newWebhookSecret, signatureHeader, webhookSecretKey } from '../../src/events/signing.ts';

const octet = fc.integer({ min: 0, max: 255 });
const v4 = (a: number, b: number, c: number, d: number) => `${a}.${b}.${c}.${d}`;
const hex = (a: number, b: number) => ((a << 8) | b).toString(16);

describe('events: where a webhook may point', () => {
  it('loopback, link-local, metadata, unspecified and multicast are refused; private and public allowed (property)', () => {
    fc.assert(fc.property(octet, octet, octet, (b, c, d) => {
      assert.match(refusedAddress(v4(127, b, c, d))!, /loopback/);
      assert.match(refusedAddress(v4(169, 254, c, d))!, /link-local/);
      assert.match(refusedAddress(v4(0, b, c, d))!, /unspecified/);
      assert.match(refusedAddress(v4(224 + (b % 16), b, c, d))!, /multicast/);
      assert.equal(refusedAddress(v4(10, b, c, d)), undefined);
      assert.equal(refusedAddress(v4(192, 168, c, d)), undefined);
      assert.equal(refusedAddress(v4(172, 16 + (b % 16), c, d)), undefined);
    }), { seed: 40, numRuns: 500 });
  });

  it('an IPv4 address inside an IPv6 one is judged as itself, in every spelling (property)', () => {
    fc.assert(fc.property(octet, octet, octet, octet, (a, b, c, d) => {
      const plain = refusedAddress(v4(a, b, c, d));
      for (const spelled of [`::ffff:${v4(a, b, c, d)}`, `::ffff:${hex(a, b)}:${hex(c, d)}`, `0:0:0:0:0:ffff:${v4(a, b, c, d)}`, `64:ff9b::${v4(a, b, c, d)}`]) {
        assert.equal(refusedAddress(spelled), plain, spelled);
      }
    }), { seed: 40, numRuns: 500 });
    for (const a of ['::1', '0:0:0:0:0:0:0:1', '::', 'fe80::1', 'fe80::1%eth0', 'fd00:ec2::254', 'ff02::1']) assert.notEqual(refusedAddress(a), undefined, a);
    for (const a of ['fd12:3456::1', '2001:db8::1']) assert.equal(refusedAddress(a), undefined, a);
  });

  it('URLs: http(s) only, no credentials, no refused literal address in any spelling, unless allowed', () => {
    for (const url of ['http://127.1/', 'http://2130706433/', 'http://0x7f.0.0.1/', 'http://[::ffff:7f00:1]/', 'http://LOCALHOST/', 'http://a.localhost/']) {
      assert.notEqual(refusedWebhookUrl(url, false), undefined, url);
      assert.equal(refusedWebhookUrl(url, true), undefined, url);
    }
    assert.equal(refusedWebhookUrl('https://bms.example.com/hook?x=1', false), undefined);
    assert.match(refusedWebhookUrl('file:///etc/passwd', true)!, /http/);
    assert.match(refusedWebhookUrl('https://u:p@example.com/', true)!, /credentials/);
  });
});

describe('events: retries', () => {
  it('follows the schedule with at most 20 % jitter, ten attempts in all, about three days', () => {
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    assert.ok(total > 3 * 24 * 3600_000 && total < 3.3 * 24 * 3600_000);
    assert.equal(MAX_ATTEMPTS, 10);
    fc.assert(fc.property(fc.integer({ min: 1, max: 9 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (n, r) => {
      const at = nextAttemptAt(n, 0, r)!;
      assert.ok(at >= RETRY_DELAYS_MS[n - 1] * 0.8 - 1 && at <= RETRY_DELAYS_MS[n - 1] * 1.2 + 1);
    }), { seed: 40 });
    assert.equal(nextAttemptAt(10, 0, 0.5), undefined);
    assert.equal(nextAttemptAt(1, 0, 0.5, 3600_000), 3600_000, 'Retry-After wins when later');
    assert.equal(nextAttemptAt(1, 0, 0.5, 10 * 24 * 3600_000), 24 * 3600_000, 'at most a day');
  });

  it('reads Retry-After as seconds or an HTTP-date', () => {
    assert.equal(retryAfterMs('120', 0), 120_000);
    assert.equal(retryAfterMs('Thu, 01 Jan 1970 00:01:00 GMT', 0), 60_000);
    assert.equal(retryAfterMs('soon', 0), undefined);
    assert.equal(retryAfterMs(undefined, 0), undefined);
  });
});

describe('events: signatures', () => {
  it('verify with the standardwebhooks library, for any body and secret (property)', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 24, maxLength: 64 }), fc.string({ maxLength: 200 }), (key, text) => {
      const secret = `whsec_${Buffer.from(key).toString('base64')}`;
      assert.ok(webhookSecretKey(secret));
      const body = JSON.stringify({ text });
      const ts = Math.floor(Date.now() / 1000);
      const headers = { 'webhook-id': 'evt_test', 'webhook-timestamp': String(ts), 'webhook-signature': signatureHeader([newWebhookSecret(), secret], 'evt_test', ts, body) };
      assert.deepEqual(new Webhook(secret).verify(body, headers), { text });
    }), { seed: 40, numRuns: 200 });
    assert.equal(webhookSecretKey(`whsec_${Buffer.alloc(16).toString('base64')}`), undefined, 'too short');
    assert.equal(webhookSecretKey('secret'), undefined);
  });
});
