// gRPC probe, as kubelet's pkg/probe/grpc runs it: a plaintext grpc.health.v1.Health/Check against the app,
// with kubelet's User-Agent and one deadline for connect and call. The verdict rules live in grpc-verdict.ts.

import type { Socket } from 'node:net';
import type { ChannelCredentials } from '@grpc/grpc-js';
import { DEFAULT_USER_AGENT } from '../scheme.js';
import type { GrpcHandler } from '../table/types.js';
import { type GrpcOutcome, grpcVerdict } from './grpc-verdict.js';
import { joinHostPort, type ProbeResult, type ProbeTarget } from './result.js';

type GrpcJs = typeof import('@grpc/grpc-js');

/** The part of grpc-health-check's Check method definition a client needs. */
interface HealthCheckMethod {
  path: string;
  requestSerialize: (request: { service: string }) => Buffer;
  responseDeserialize: (bytes: Buffer) => HealthCheckResponse;
}

/** grpc.health.v1.HealthCheckResponse as grpc-health-check decodes it: enums as names, defaults filled in. */
interface HealthCheckResponse {
  status?: unknown;
}

interface HealthClientKit {
  grpc: GrpcJs;
  check: HealthCheckMethod;
}

let kit: Promise<HealthClientKit> | undefined;

/**
 * gRPC is loaded on the first gRPC probe only, and then kept: a companion whose table has no gRPC entry never
 * pays grpc-js's start-up time and memory. The build makes grpc-kit.ts a file of its own for this.
 */
function loadKit(): Promise<HealthClientKit> {
  kit ??= import('./grpc-kit.js').then(({ grpc, check }) => {
    if (check === undefined) throw new Error('grpc-health-check: grpc.health.v1.Health has no Check method');
    return { grpc, check };
  });
  return kit;
}

/**
 * Loads gRPC ahead of the first probe. Loading takes a few hundred ms on a small node, and a probe's budget
 * counts it; a server whose table has gRPC entries can call this at start-up so no probe pays for it.
 */
export async function preloadGrpc(): Promise<void> {
  await loadKit();
}

export async function probeGrpc(
  spec: Pick<GrpcHandler, 'port' | 'service'>,
  target: ProbeTarget,
  userAgent: string = DEFAULT_USER_AGENT,
): Promise<ProbeResult> {
  const start = performance.now();
  // One deadline for loading, connecting and the call, as grpc.go's single context.WithTimeout.
  const deadline = Date.now() + target.timeoutMs;
  const addr = joinHostPort(target.host, spec.port);
  const { grpc, check } = await loadKit();
  const sockets: Socket[] = [];
  const client = new grpc.Client(addr, socketRecordingCredentials(grpc, sockets), {
    'grpc.primary_user_agent': userAgent,
    // kubelet dials a new connection per probe: no subchannel is shared with, or kept for, another probe.
    'grpc.use_local_subchannel_pool': 1,
    // One attempt, as grpc-go without a retry policy; no channelz bookkeeping for a throwaway channel.
    'grpc.enable_retries': 0,
    'grpc.enable_channelz': 0,
  });
  const outcome = await new Promise<GrpcOutcome>((resolve) => {
    // waitForReady stays false (the default): a refused or non-gRPC port fails at once instead of
    // reconnecting with backoff until the deadline; the verdict is the same Failure kubelet reaches.
    client.makeUnaryRequest(
      check.path,
      check.requestSerialize,
      check.responseDeserialize,
      { service: spec.service },
      new grpc.Metadata(),
      { deadline },
      (err, response) => {
        if (err === null) {
          resolve({ kind: 'response', status: String(response?.status) });
          return;
        }
        const connected = client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
        resolve({
          kind: 'error',
          code: grpc.status[err.code] ?? String(err.code),
          details: err.details,
          connected,
        });
      },
    );
  }).finally(() => {
    client.close();
    for (const socket of sockets) socket.destroy();
  });
  const elapsedMs = Math.round(performance.now() - start);
  return grpcVerdict(outcome, { addr, service: spec.service, elapsedMs, timeoutMs: target.timeoutMs });
}

/**
 * grpc-js's plaintext credentials, plus a record of the sockets the channel opens. Closing a grpc-js channel
 * does not abort an HTTP/2 handshake still in progress (Http2SubchannelConnector.shutdown is never called), so
 * an app that accepts and never answers would hold each probe's socket open for good; the probe closes them.
 */
function socketRecordingCredentials(grpc: GrpcJs, sockets: Socket[]): ChannelCredentials {
  const insecure = grpc.credentials.createInsecure();
  const recording: ChannelCredentials = Object.create(insecure);
  recording._createSecureConnector = (channelTarget, options, callCredentials) => {
    const connector = insecure._createSecureConnector(channelTarget, options, callCredentials);
    return {
      connect: (socket) => {
        sockets.push(socket);
        return connector.connect(socket);
      },
      waitForReady: () => connector.waitForReady(),
      getCallCredentials: () => connector.getCallCredentials(),
      destroy: () => connector.destroy(),
    };
  };
  return recording;
}
