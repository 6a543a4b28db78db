// The floor of a request's time on this machine: a bare node:http server in a process of its own that answers every
// request at once with fixed bytes (set by a PUT /answer), doing none of a real server's work. Timed the same way as
// a real server, it shows what the machine, the loopback and Node's HTTP stack cost by themselves.
import { startServer } from './spawn.mjs';

const SCRIPT = `
const http = require('node:http');
let answer = Buffer.from('{}');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (d) => chunks.push(d));
  req.on('end', () => {
    if (req.method === 'PUT' && req.url === '/answer') answer = Buffer.concat(chunks);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port })));
`;

export async function startFloorServer() {
  return startServer(process.execPath, ['-e', SCRIPT]);
}
