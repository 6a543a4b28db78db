// The web console: one HTML page and its hashed assets, served by the same process from the bundle.
// The console is a client of the public API like any other: these routes serve files only and need no token.
import * as v from 'valibot';
import type { Context } from 'hono';
import type { RouteContext } from '../context/route-context.ts';
import type { AppEnv } from '../http/env.ts';
import { ApiError } from '../http/errors.ts';
import { CONSOLE_CSP, consoleAssets } from './assets.ts';

const TAG = 'console';
const AssetParams = v.strictObject({ file: v.pipe(v.string(), v.regex(/^[\w.-]{1,100}$/, 'expected an asset file name')) });

function secure(c: Context<AppEnv>): void {
  c.header('Content-Security-Policy', CONSOLE_CSP);
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Frame-Options', 'DENY');
}

export function registerConsoleRoutes({ api }: RouteContext): void {
  api.route({
    method: 'get', path: '/', tag: TAG, summary: 'Redirects to the web console',
    responses: { 302: { description: 'to /console/' } },
  }, (c) => c.redirect('/console/', 302));

  api.route({
    method: 'get', path: '/console', tag: TAG, summary: 'Redirects to the web console',
    responses: { 302: { description: 'to /console/' } },
  }, (c) => c.redirect('/console/', 302));

  api.route({
    method: 'get', path: '/console/assets/:file', tag: TAG, summary: 'A script or style sheet of the console (hashed name, cached forever)',
    params: AssetParams,
    responses: { 200: { description: 'the file', contentType: 'text/javascript' }, 404: { description: 'no such asset' } },
  }, async (c, { params }) => {
    const file = (await consoleAssets()).files.get(params.file);
    if (!file) throw new ApiError('NOT_FOUND', `no console asset named ${params.file}`);
    secure(c);
    c.header('Cache-Control', 'public, max-age=31536000, immutable');
    c.header('ETag', file.etag);
    c.header('Vary', 'Accept-Encoding');
    if (c.req.header('if-none-match') === file.etag) return c.body(null, 304);
    const gzip = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
    if (gzip) c.header('Content-Encoding', 'gzip');
    return c.body(new Uint8Array(gzip ? file.gzip : file.body), 200, { 'Content-Type': file.type });
  });

  api.route({
    method: 'get', path: '/console/*', tag: TAG, summary: 'The web console: every page under /console/ is the same HTML document',
    looseQuery: true,
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
  }, async (c) => {
    const { page } = await consoleAssets();
    secure(c);
    // The page names the current hashed assets, so it is revalidated on every load.
    c.header('Cache-Control', 'no-cache');
    return c.html(page);
  });
}
