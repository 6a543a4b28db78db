// Serves the app over HTTP and stops gracefully: on SIGTERM/SIGINT stop accepting, let in-flight requests finish
// (at most 10 s), close the database cleanly, exit 0.
import { serve } from '@hono/node-server';
import net, { type AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createApp } from './app.ts';
import type { Deps } from '../context/deps.ts';
import { startSealing } from '../telemetry/seal.ts';
import { readWorkersOn } from '../telemetry/read-workers.ts';

export interface Running {
  url: string;
  stop(): Promise<void>;
}

export function startServer(deps: Deps, onListening: (url: string) => void): Promise<Running> {
  const { app } = createApp(deps);
  const drain: Drain = { stopping: false, connections: new Set() };
  const stopSealing = startSealing(deps.db, deps.now, deps.log, deps.config.telemetrySealInterval);
  const stopReadWorkers = deps.config.databaseUrl !== undefined ? readWorkersOn(deps.db, deps.config.databaseUrl) : async () => {};
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: deps.config.port, hostname: deps.config.host }, (info: AddressInfo) => {
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      const url = `http://${host}:${info.port}`;
      onListening(url);
      deps.events.start();
      deps.alarms.start();
      resolve({ url, stop: async () => { await stopSealing(); await stopServer(server as Server, deps, drain); await stopReadWorkers(); } });
    }) as Server;
    server.once('error', reject);
    // While stopping, every answer closes its connection. Without this a keep-alive client keeps sending requests on
    // its open connection after the signal, the drain never ends, and at the 10 s limit the requests then in flight are
    // cut off.
    // Each connection notes the response it is on (a keep-alive connection serves one request at a time): no listener
    // per request, only one per connection.
    server.on('connection', (socket: net.Socket) => {
      drain.connections.add(socket);
      socket.once('close', () => drain.connections.delete(socket));
    });
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      if (drain.stopping) res.setHeader('Connection', 'close');
      else (req.socket as Connection)[CURRENT] = res;
    });
    // Slow or stalled clients cannot hold a connection forever.
    server.headersTimeout = 20_000;
    server.requestTimeout = 60_000;
    server.keepAliveTimeout = 5_000;
  });
}

const CURRENT = Symbol('the response a connection is on');
type Connection = net.Socket & { [CURRENT]?: ServerResponse };

interface Drain {
  stopping: boolean;
  /** open connections, each with the response it is on (finished ones have sent their head) */
  connections: Set<Connection>;
}

async function stopServer(server: Server, deps: Deps, drain: Drain): Promise<void> {
  drain.stopping = true;
  for (const socket of drain.connections) {
    const res = socket[CURRENT];
    if (res !== undefined && !res.headersSent) res.setHeader('Connection', 'close');
  }
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => { server.closeAllConnections(); resolve(); }, 10_000);
    force.unref();
    // An idle keep-alive connection gets a moment for a request already on its way (answered with Connection: close),
    // then it is closed. http.Server#close would drop idle connections at once: a client sending its next request on
    // one at that instant gets a reset and cannot know whether the request was applied.
    const idle = setInterval(() => server.closeIdleConnections(), 250);
    idle.unref();
    // net.Server#close: stop accepting; the callback runs once every connection has ended.
    net.Server.prototype.close.call(server, () => { clearTimeout(force); clearInterval(idle); resolve(); });
  });
  // writes already told are evaluated, then their events delivered with the rest
  await deps.alarms.stop();
  // deliveries in flight end and their outcomes are recorded; what is left waits in the outbox for the next start
  await deps.events.stop();
  await deps.db.close();
}
