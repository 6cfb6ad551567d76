// kubelet's prober for the end-to-end test, run as a process in the node's network namespace: one JSON request per
// stdin line ({ id, host, action, timeoutMs }), one JSON verdict per stdout line ({ id, outcome, detail }). It
// is written apart from the companion's probers on purpose, from kubelet's rules (pkg/probe/{http,tcp,grpc}):
// HTTP as kubelet-http.ts does it (2xx passes, a 3xx kubelet does not follow is a Warning, which counts as
// success, anything else fails); TCP passes on connect; gRPC passes on SERVING. One timeout covers each probe.
// Exits when stdin closes.

import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { kubeletHttpProbe } from './kubelet-http.js';
import type { ProbeAction } from './pod-spec.js';

interface Verdict {
  outcome: 'success' | 'failure';
  detail: string;
}

const USER_AGENT = 'kube-probe/1.30';

/** kubelet-http.ts's result as the stand-in counts it: a Warning passes; the detail is kubelet's output text. */
async function probeHttp(
  host: string,
  action: Extract<ProbeAction, { type: 'httpGet' }>,
  timeoutMs: number,
): Promise<Verdict> {
  const { result, output } = await kubeletHttpProbe(host, action, timeoutMs);
  const text = output.toString('utf8');
  return result === 'failure'
    ? { outcome: 'failure' as const, detail: text }
    : {
        outcome: 'success' as const,
        detail: result === 'warning' ? text : `${result}: ${text.trim().slice(0, 200)}`,
      };
}

function probeTcp(host: string, port: number, timeoutMs: number) {
  return new Promise<Verdict>((resolve) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ outcome: 'failure', detail: `dial timeout after ${timeoutMs} ms` });
    }, timeoutMs);
    socket.on('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ outcome: 'success', detail: 'connected' });
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      resolve({ outcome: 'failure', detail: err.message });
    });
  });
}

function probeGrpc(host: string, action: Extract<ProbeAction, { type: 'grpc' }>, timeoutMs: number) {
  const check = healthService.Check;
  if (check === undefined) throw new Error('grpc-health-check has no Check method');
  const target = host.includes(':') ? `[${host}]:${action.port}` : `${host}:${action.port}`;
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
    'grpc.primary_user_agent': USER_AGENT,
    'grpc.use_local_subchannel_pool': 1,
  });
  return new Promise<Verdict>((resolve) => {
    client.makeUnaryRequest(
      check.path,
      check.requestSerialize,
      check.responseDeserialize as (bytes: Buffer) => { status?: unknown },
      { service: action.service },
      new grpc.Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err, response) => {
        client.close();
        if (err !== null) resolve({ outcome: 'failure', detail: `${grpc.status[err.code]}: ${err.details}` });
        else if (response?.status === 'SERVING') resolve({ outcome: 'success', detail: 'SERVING' });
        else
          resolve({
            outcome: 'failure',
            detail: `service unhealthy (responded with "${String(response?.status)}")`,
          });
      },
    );
  });
}

function probe(host: string, action: ProbeAction, timeoutMs: number): Promise<Verdict> {
  switch (action.type) {
    case 'httpGet':
      return probeHttp(host, action, timeoutMs);
    case 'tcpSocket':
      return probeTcp(host, action.port, timeoutMs);
    case 'grpc':
      return probeGrpc(host, action, timeoutMs);
  }
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const { id, host, action, timeoutMs } = JSON.parse(line);
  probe(host, action, timeoutMs).then(
    (verdict) => process.stdout.write(`${JSON.stringify({ id, ...verdict })}\n`),
    (err: Error) =>
      process.stdout.write(`${JSON.stringify({ id, outcome: 'failure', detail: err.message })}\n`),
  );
});
lines.on('close', () => process.exit(0));
process.stdout.write('ready\n');
