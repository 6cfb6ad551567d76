// An app that takes longer to stop than the companion's drain: from SIGTERM on its readiness answers 503 while it
// finishes its work, and it closes its port and exits only when the test says its work is done ("close" on stdin).
// Prints "listening <port>", then "stopping" on SIGTERM. Exits when stdin ends, so it never outlives the test.

import { createServer } from 'node:http';
import { createInterface } from 'node:readline';

let stopping = false;

const server = createServer((req, res) => {
  if (req.url !== '/ready') {
    res.writeHead(404).end('not found\n');
    return;
  }
  res.writeHead(stopping ? 503 : 200).end(stopping ? 'stopping\n' : 'ready\n');
});

server.listen({ port: 0, host: '127.0.0.1' }, () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});

process.on('SIGTERM', () => {
  stopping = true;
  process.stdout.write('stopping\n');
});

createInterface({ input: process.stdin })
  .on('line', (line) => {
    if (line !== 'close') return;
    server.close(() => process.exit(0));
    server.closeAllConnections();
  })
  .on('close', () => process.exit(0));
