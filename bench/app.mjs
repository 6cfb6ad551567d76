// The app behind the companion: an HTTP endpoint, a TCP port that accepts and closes, a gRPC health server.
// Prints its ports as one JSON line on stdout once all three listen.

import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';

const listen = (server, backlog = 511) =>
  new Promise((resolve) =>
    server.listen({ port: 0, host: '127.0.0.1', backlog }, () => resolve(server.address().port)),
  );

const http = await listen(
  createHttpServer({ keepAliveTimeout: 5_000 }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('alive\n');
  }),
);
// This process shares its core with the load generator: a deep accept queue keeps its slower accepts from
// dropping SYNs (which a 1 s probe budget would see as a timeout).
const tcp = await listen(
  createTcpServer((socket) => socket.on('error', () => {}).end()),
  4096,
);

const server = new grpc.Server();
new HealthImplementation({ '': 'SERVING' }).addToServer(server);
const grpcPort = await new Promise((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
    err ? reject(err) : resolve(port),
  ),
);

process.stdout.write(`${JSON.stringify({ http, tcp, grpc: grpcPort })}\n`);
