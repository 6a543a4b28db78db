// A local webhook receiver for the tests: records every request (headers and raw body) and answers what the test
// asks for, request by request. Listens on 127.0.0.1 only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { TestApp } from '../support/app.ts';

export interface Received {
  headers: Record<string, string>;
  body: string;
  json: any;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** the answers to give, in order; after them 204 */
  answers: { status: number; headers?: Record<string, string>; body?: string }[];
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const answers: Receiver['answers'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers as Record<string, string>, body, json: body ? JSON.parse(body) : undefined });
      const answer = answers.shift() ?? { status: 204 };
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/hook`,
    received,
    answers,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The app's deliveries, oldest first: state, attempts, next_at and the event's type. */
export async function deliveries(t: TestApp): Promise<{ id: number; subscription_id: number; state: string; attempts: number; next_at: number; type: string; last_error: string | null }[]> {
  return t.deps.db.all(sql<{ id: number; subscription_id: number; state: string; attempts: number; next_at: number; type: string; last_error: string | null }>`
    SELECT d.id, d.subscription_id, d.state, d.attempts, d.next_at, e.type, d.last_error FROM event_deliveries d JOIN events e ON e.id = d.event_id ORDER BY d.id`);
}
