// An example app for the demo: HTTP /live on 14001, a TCP port on 14002 and a gRPC health service on 14003.
// Ports can be moved with APP_HTTP_PORT / APP_TCP_PORT / APP_GRPC_PORT.

import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';

const httpPort = Number(process.env.APP_HTTP_PORT ?? 14001);
const tcpPort = Number(process.env.APP_TCP_PORT ?? 14002);
const grpcPort = Number(process.env.APP_GRPC_PORT ?? 14003);

const http = createServer((req, res) => {
  if (req.url === '/live') return res.end(`alive (X-Probe: ${req.headers['x-probe'] ?? 'none'})\n`);
  res.writeHead(404).end('not found\n');
});
const tcp = createTcpServer((socket) => socket.end());
const health = new HealthImplementation({ '': 'SERVING' });
const grpcServer = new grpc.Server();
health.addToServer(grpcServer);

await new Promise((resolve) => http.listen(httpPort, '127.0.0.1', resolve));
await new Promise((resolve) => tcp.listen(tcpPort, '127.0.0.1', resolve));
await new Promise((resolve, reject) =>
  grpcServer.bindAsync(`127.0.0.1:${grpcPort}`, grpc.ServerCredentials.createInsecure(), (err) =>
    err ? reject(err) : resolve(),
  ),
);
process.stdout.write(`example app: http :${httpPort}/live, tcp :${tcpPort}, grpc health :${grpcPort}\n`);

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    http.close();
    tcp.close();
    grpcServer.forceShutdown();
  });
}
