// The sending thread of bench/events-send-floor.ts: receives batches of prepared webhook POSTs, sends them through
// postWebhook (all of a batch at once) and answers with how many went.
import { parentPort, workerData } from 'node:worker_threads';
import { postWebhook } from '../../src/events/webhook-sender.ts';

const { url } = workerData as { url: string };
parentPort!.on('message', async (batch: { headers: Record<string, string>; body: string }[]) => {
  const results = await Promise.all(batch.map((b) => postWebhook(url, b.headers, b.body, { allowInternal: true })));
  for (const r of results) if (r.error !== null) throw new Error(r.error);
  parentPort!.postMessage(batch.length);
});
parentPort!.postMessage('ready');
