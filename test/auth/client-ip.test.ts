// Client address helpers used by the IP throttles (and the telemetry ban).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ipThrottleKey, normalizeIp } from '../../src/http/client-ip.ts';

describe('client ip', () => {
  test('IPv4-mapped IPv6 is the IPv4 address', () => {
    assert.equal(normalizeIp('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(normalizeIp('::FFFF:192.0.2.1'), '192.0.2.1');
    assert.equal(normalizeIp('2001:DB8::1'), '2001:db8::1');
  });

  test('throttle keys: IPv4 as is, IPv6 by /64 whatever the notation', () => {
    assert.equal(ipThrottleKey('192.0.2.1'), '192.0.2.1');
    assert.equal(ipThrottleKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
    assert.equal(ipThrottleKey('2001:0db8:0001:0002:ffff:0:0:1'), '2001:db8:1:2::/64');
    assert.equal(ipThrottleKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(ipThrottleKey('::1'), '0:0:0:0::/64');
    assert.notEqual(ipThrottleKey('2001:db8:1:2::1'), ipThrottleKey('2001:db8:1:3::1'));
  });
});
