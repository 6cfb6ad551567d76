// An app that takes longer to stop than the companion's drain: on SIGTERM its readiness answers 503 while it
// finishes its work, and only after `stopAfterMs` (argv[2]; "never": not at all) does it close its port and exit.
// Prints "listening <port>", then "stopping" on SIGTERM and "closing" just before its port closes.

import { createServer } from 'node:http';

const stopAfterMs = process.argv[2] === 'never' ? undefined : Number(process.argv[2]);
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
  if (stopping) return;
  stopping = true;
  process.stdout.write('stopping\n');
  if (stopAfterMs === undefined) return;
  setTimeout(() => {
    process.stdout.write('closing\n');
    server.close(() => process.exit(0));
    server.closeAllConnections();
  }, stopAfterMs);
});
// Never outlive the test that started it.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
