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
