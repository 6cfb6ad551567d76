// An example app for the demo or a pod: HTTP /live on 14001, a TCP port on 14002 and a gRPC health service on 14003,
// on all interfaces, since in a pod kubelet and the companion dial the pod IP. Ports can be moved with
// APP_HTTP_PORT / APP_TCP_PORT / APP_GRPC_PORT, the address with APP_HOST (default :: dual stack, else 0.0.0.0).

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

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ipv6Only: false }, () => {
      server.off('error', reject);
      resolve(host);
    });
  });
}

/** APP_HOST, else `::` (IPv6 and IPv4), else 0.0.0.0 where the kernel has no IPv6: the first server decides. */
async function listenHttp() {
  if (process.env.APP_HOST) return listen(http, httpPort, process.env.APP_HOST);
  try {
    return await listen(http, httpPort, '::');
  } catch (err) {
    if (err.code !== 'EAFNOSUPPORT' && err.code !== 'EADDRNOTAVAIL') throw err;
    return listen(http, httpPort, '0.0.0.0');
  }
}

const host = await listenHttp();
const shownHost = host.includes(':') ? `[${host}]` : host;
await listen(tcp, tcpPort, host);
await new Promise((resolve, reject) =>
  grpcServer.bindAsync(`${shownHost}:${grpcPort}`, grpc.ServerCredentials.createInsecure(), (err) =>
    err ? reject(err) : resolve(),
  ),
);
process.stdout.write(
  `example app on ${shownHost}: http :${httpPort}/live, tcp :${tcpPort}, grpc health :${grpcPort}\n`,
);

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    http.close();
    tcp.close();
    grpcServer.forceShutdown();
  });
}
