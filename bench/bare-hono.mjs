// The baseline for ratios: a bare @hono/node-server hello world, printing the same kind of startup line.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/healthz', (c) => c.json({ status: 'ok' }));
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${info.port}` }));
});
process.on('SIGTERM', () => process.exit(0));
