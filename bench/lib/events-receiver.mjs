// A webhook receiver for bench/events.mjs, in its own process: answers 204 at once and tells its parent, per event,
// the id, the new name (when the change set one), the alarm's id (alarm events) and the arrival time (ms since the epoch, with fractions).
import http from 'node:http';

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    res.writeHead(204).end();
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    process.send({ id: event.id, after: event.data?.changes?.name?.after, alarm: event.data?.alarm?.id, at });
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}/hook` }));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
