// A TCP proxy on loopback in front of the test PostgreSQL server, to take the database away from one node without
// touching the server every other test file uses: cut() closes every connection and stops listening (new connections
// are refused, as from a server that is down), restore() listens on the same port again. `sent` sees every byte a
// client sends to the server (to count the statements of a request).
import net from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(target: { host: string; port: number }, sent?: (client: net.Socket, bytes: Buffer) => void): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => { client.destroy(); upstream.destroy(); });
    }
    if (sent !== undefined) client.on('data', (bytes: Buffer) => sent(client, bytes));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listen = (port: number) => new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
  const stop = () => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    if (server.listening) server.close(() => resolve());
    else resolve();
  });
  const port = await listen(0);
  return { port, cut: stop, restore: async () => { await listen(port); }, close: stop };
}

/**
 * What clients send to PostgreSQL, read from the bytes a tcpProxy sees (its `sent`): each simple query by its text,
 * and `(sync)` for the Sync that ends each extended-protocol statement; one entry per round trip.
 */
export function pgStatementsSent(): { statements: string[]; sent: (client: net.Socket, bytes: Buffer) => void } {
  const statements: string[] = [];
  const streams = new Map<net.Socket, { started: boolean; buf: Buffer }>();
  const sent = (client: net.Socket, bytes: Buffer) => {
    const c = streams.get(client) ?? { started: false, buf: Buffer.alloc(0) };
    streams.set(client, c);
    c.buf = Buffer.concat([c.buf, bytes]);
    for (;;) {
      // the startup message has no type byte: its length, then its contents
      const at = c.started ? 1 : 0;
      if (c.buf.length < at + 4 || c.buf.length < at + c.buf.readInt32BE(at)) break;
      const end = at + c.buf.readInt32BE(at);
      if (c.started && c.buf[0] === 0x51) statements.push(c.buf.toString('utf8', 5, end - 1)); // 'Q', its text NUL-ended
      else if (c.started && c.buf[0] === 0x53) statements.push('(sync)'); // 'S'
      c.started = true;
      c.buf = c.buf.subarray(end);
    }
  };
  return { statements, sent };
}
