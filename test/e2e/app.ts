// An app container of the end-to-end pod, run as a process in the pod's network namespace: serves what
// app-config.ts derived from its probes, on all addresses, with health the test sets over stdin ("healthy <n>",
// "unhealthy <n>"; dead is the test killing it). Prints "ready" once every server listens, "mode <m> <n>" after
// each switch, and exits when stdin closes, so it never outlives the test.

import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { createServer as createTcp, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { AppConfig, AppServer, Header } from './app-config.js';

const config = JSON.parse(process.argv[2] ?? '') as AppConfig;
let healthy = true;
const healthServices: { health: HealthImplementation; services: string[] }[] = [];

function answer(paths: Record<string, Header[]>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const required = paths[req.url ?? ''];
    if (required === undefined) {
      res.writeHead(404).end(`no such path; known: ${Object.keys(paths).join(', ')}\n`);
      return;
    }
    const missing = required.find((h) => req.headers[h.name.toLowerCase()] !== h.value);
    if (missing !== undefined) {
      res.writeHead(400).end(`missing header ${missing.name}: ${missing.value}\n`);
      return;
    }
    res.writeHead(healthy ? 200 : 503).end(healthy ? 'ok\n' : 'unhealthy\n');
  };
}

function listening(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: '::' }, () => resolve());
  });
}

async function serve(spec: AppServer): Promise<void> {
  switch (spec.type) {
    case 'http': {
      const handler = answer(spec.paths);
      const server = spec.tls
        ? createHttps({ key: config.tls?.key, cert: config.tls?.cert }, handler)
        : createHttp(handler);
      return listening(server, spec.port);
    }
    case 'tcp':
      return listening(
        createTcp((socket) => {
          socket.on('error', () => {});
          socket.end();
        }),
        spec.port,
      );
    case 'grpc': {
      const server = new grpc.Server();
      const health = new HealthImplementation(Object.fromEntries(spec.services.map((s) => [s, 'SERVING'])));
      health.addToServer(server);
      healthServices.push({ health, services: spec.services });
      await new Promise<void>((resolve, reject) =>
        server.bindAsync(`[::]:${spec.port}`, grpc.ServerCredentials.createInsecure(), (err) =>
          err === null ? resolve() : reject(err),
        ),
      );
      return;
    }
  }
}

try {
  await Promise.all(config.servers.map(serve));
} catch (err) {
  process.stderr.write(`app ${config.container}: ${(err as Error).message}\n`);
  process.exit(1);
}
process.stdout.write('ready\n');

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [mode, id] = line.trim().split(' ');
  healthy = mode === 'healthy';
  for (const { health, services } of healthServices) {
    for (const service of services) health.setStatus(service, healthy ? 'SERVING' : 'NOT_SERVING');
  }
  process.stdout.write(`mode ${mode} ${id}\n`);
});
lines.on('close', () => process.exit(0));
