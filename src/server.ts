// Serves the app over HTTP and stops gracefully: on SIGTERM/SIGINT stop accepting, let in-flight requests finish
// (at most 10 s), close the database cleanly, exit 0.
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from './app.ts';
import type { Deps } from './deps.ts';

export interface Running {
  url: string;
  stop(): Promise<void>;
}

export function startServer(deps: Deps, onListening: (url: string) => void): Promise<Running> {
  const { app } = createApp(deps);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: deps.config.port, hostname: deps.config.host }, (info: AddressInfo) => {
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      const url = `http://${host}:${info.port}`;
      onListening(url);
      resolve({ url, stop: () => stopServer(server as Server, deps) });
    }) as Server;
    server.once('error', reject);
    // Slow or stalled clients cannot hold a connection forever.
    server.headersTimeout = 20_000;
    server.requestTimeout = 60_000;
    server.keepAliveTimeout = 5_000;
  });
}

async function stopServer(server: Server, deps: Deps): Promise<void> {
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => { server.closeAllConnections(); resolve(); }, 10_000);
    force.unref();
    server.close(() => { clearTimeout(force); resolve(); });
    server.closeIdleConnections();
  });
  deps.db.close();
}
