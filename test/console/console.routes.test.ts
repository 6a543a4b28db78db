// The console's routes in process: redirects, the HTML page and its policy, hashed assets with their cache headers.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { makeTestApp, assertError } from '../support/app.ts';

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; "
  + "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** the asset names the page links, in order: style sheet, script */
function linkedAssets(html: string): { css: string; js: string } {
  const css = /<link rel="stylesheet" href="\/console\/assets\/(app\.[0-9a-f]{12}\.css)">/.exec(html);
  const js = /<script type="module" src="\/console\/assets\/(app\.[0-9a-f]{12}\.js)"><\/script>/.exec(html);
  assert.ok(css && js, `page links a hashed style sheet and script: ${html}`);
  return { css: css[1], js: js[1] };
}

describe('console routes', () => {
  test('/ and /console redirect to /console/', async () => {
    const t = await makeTestApp();
    for (const path of ['/', '/console']) {
      const res = await t.request('GET', path);
      assert.equal(res.status, 302, path);
      assert.equal(res.headers.get('location'), '/console/');
    }
    await t.close();
  });

  test('every page under /console/ is the same HTML document, with a strict policy and no inline script', async () => {
    const t = await makeTestApp();
    const pages = await Promise.all(['/console/', '/console/devices/12', '/console/roles?x=1'].map((p) => t.request('GET', p)));
    for (const res of pages) {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=UTF-8');
      assert.equal(res.headers.get('content-security-policy'), CSP);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.equal(res.text, pages[0].text);
    }
    const html = pages[0].text;
    // the only script is the external module; no inline code, no style attribute, no other origin
    assert.deepEqual(html.match(/<script[^>]*>/g), [`<script type="module" src="/console/assets/${linkedAssets(html).js}">`]);
    assert.doesNotMatch(html, /\sstyle=|https?:\/\/|\son[a-z]+=/);
    await t.close();
  });

  test('assets: hashed names, immutable caching, gzip when asked, 304 on a matching ETag', async () => {
    const t = await makeTestApp();
    const { css, js } = linkedAssets((await t.request('GET', '/console/')).text);
    const plain = await t.request('GET', `/console/assets/${js}`);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(plain.headers.get('content-security-policy'), CSP);
    assert.match(plain.text, /preact|__H|createElement|uplot/i);
    assert.doesNotMatch(plain.text, /https?:\/\/(?!www\.w3\.org)[a-z]/i, 'no external origin in the script');

    const raw = await fetchBytes(t, `/console/assets/${js}`, { 'accept-encoding': 'gzip, deflate' });
    assert.equal(raw.headers.get('content-encoding'), 'gzip');
    assert.equal(raw.headers.get('vary'), 'Accept-Encoding');
    assert.equal(gunzipSync(raw.bytes).toString('utf8'), plain.text);

    const style = await t.request('GET', `/console/assets/${css}`);
    assert.equal(style.status, 200);
    assert.equal(style.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.match(style.text, /\.u-legend/, 'uPlot styles are bundled');

    const again = await t.request('GET', `/console/assets/${js}`, { headers: { 'if-none-match': plain.headers.get('etag')! } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    await t.close();
  });

  test('an unknown or malformed asset name is a 404 or 400 in the error shape', async () => {
    const t = await makeTestApp();
    const body = assertError(await t.request('GET', '/console/assets/app.000000000000.js'), 404, 'NOT_FOUND');
    assert.equal(body.message, 'no console asset named app.000000000000.js');
    assertError(await t.request('GET', '/console/assets/a%20b.js'), 400, 'BAD_REQUEST');
    assertError(await t.request('GET', '/console/assets/app.js?x=1'), 400, 'BAD_REQUEST');
    await t.close();
  });
});

async function fetchBytes(t: Awaited<ReturnType<typeof makeTestApp>>, path: string, headers: Record<string, string>) {
  const { app } = await import('../../src/boot/app.ts').then((m) => m.createApp(t.deps));
  const res = await app.request(path, { headers });
  return { headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}
