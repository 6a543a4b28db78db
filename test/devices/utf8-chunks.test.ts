// The listing's bytes (device-query.ts Utf8Chunks): texts of any size and script encoded across fixed-size chunks give
// exactly Buffer.from of their concatenation, and chunks given back to the pool never carry an earlier answer's bytes
// into a later one — checked in process and over a real socket, with many large listings at once. (The route gives an
// answer's chunks back when its response closes; a loopback socket's buffers take a whole answer at once, so releasing
// them too early cannot be provoked here.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { serve } from '@hono/node-server';
import { Utf8Chunks } from '../../src/devices/device-query.ts';
import { createApp } from '../../src/boot/app.ts';
import { makeTestApp } from '../support/app.ts';
import { addDevice, addMonitors, addRole, userIn } from './fixtures.ts';

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 30, unit: 'grapheme' }),
  fc.constantFrom('é', '€', '😀', 'x'.repeat(70_000), '😀'.repeat(30_000), 'ü'.repeat(Utf8Chunks.SIZE)),
);

describe('Utf8Chunks', () => {
  it('encodes texts across chunk boundaries exactly as Buffer.from of the whole', () => {
    fc.assert(fc.property(fc.array(text, { maxLength: 60 }), (texts) => {
      const out = new Utf8Chunks();
      for (const t of texts) out.write(t);
      const whole = Buffer.from(texts.join(''));
      assert.equal(out.length, whole.length);
      assert.ok(out.parts().every((p) => p.length <= Utf8Chunks.SIZE));
      assert.ok(Buffer.concat(out.parts()).equals(whole));
      out.release();
    }), { numRuns: 300, seed: 11 });
  });

  it('reuses released chunks: a later answer holds only its own bytes', () => {
    const first = new Utf8Chunks();
    first.write('a'.repeat(3 * Utf8Chunks.SIZE));
    const used = new Set(first.parts().map((p) => p.buffer));
    first.release();
    first.release(); // once only: a second release gives nothing back twice
    const second = new Utf8Chunks();
    second.write('b'.repeat(2 * Utf8Chunks.SIZE + 5));
    assert.ok(second.parts().some((p) => used.has(p.buffer)), 'a released chunk is taken again');
    assert.ok(Buffer.concat(second.parts()).equals(Buffer.from('b'.repeat(2 * Utf8Chunks.SIZE + 5))));
    const third = new Utf8Chunks();
    assert.notEqual(third.parts()[0]!.buffer, second.parts()[0]!.buffer, 'a chunk in use is not handed out');
  });

  it('many large listings at once over a socket, chunks reused from answer to answer: each equals the listing answered in process, with its Content-Length', async (t) => {
    const app = await makeTestApp();
    t.after(() => app.close());
    const [r1, r2] = [await addRole(app, 'one'), await addRole(app, 'two')];
    for (let i = 0; i < 240; i++) {
      const id = await addDevice(app, { n: i, note: `${i % 2 ? 'ünï' : 'plain'} ${'x'.repeat(2000)}`, emoji: '😀'.repeat(i % 5) });
      await addMonitors(app, i % 3 === 0 ? r2 : r1, id, { mm: true });
      if (i % 4 === 0) await addMonitors(app, r2, id, { reads: ['n'] }).catch(() => undefined);
    }
    const users = [await userIn(app, r1), await userIn(app, r2)];
    const expected = await Promise.all(users.map(async (u) => {
      const res = await app.request('POST', '/v1/device/query', { token: u.token, body: {} });
      assert.equal(res.status, 200);
      assert.ok(res.text.length > 2 * Utf8Chunks.SIZE, 'answers span several chunks');
      return res.text;
    }));
    assert.notEqual(expected[0], expected[1]);
    const { app: hono } = createApp(app.deps);
    const server = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' });
    t.after(() => new Promise<void>((done) => { server.close(() => done()); }));
    await new Promise((ready) => { server.once('listening', ready); });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/device/query`;
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
        const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${users[i % 2]!.token}`, 'content-type': 'application/json' }, body: '{}' });
        assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(expected[i % 2]!)));
        return res.text();
      }));
      answers.forEach((answer, i) => assert.equal(answer, expected[i % 2], `answer ${i} of round ${round}`));
    }
  });
});
