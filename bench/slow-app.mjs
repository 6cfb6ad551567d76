// The slowest app the companion can meet, for its worst burst (bench/burst.mjs): an HTTP server on `http` that
// reads each request and never answers, and a TCP server on `grpc` that accepts and never says a word (no HTTP/2
// preface: a gRPC health check waits out its deadline). Held sockets close when the client gives up.
//   node bench/slow-app.mjs <http port> <grpc port>    (prints `listening` once both do)

import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';

const [http, grpc] = process.argv.slice(2).map(Number);
const listening = (server, port) => new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));

await Promise.all([
  listening(
    createHttpServer(() => {}),
    http,
  ),
  listening(
    createTcpServer((socket) => socket.on('error', () => {})),
    grpc,
  ),
]);
process.stdout.write('listening\n');
