// Turns what a gRPC health check came back with into kubelet's verdict and our one-line reason, without
// touching the network (the rules of k8s.io/kubernetes/pkg/probe/grpc/grpc.go, table-tested on their own).

import type { FailureReason } from './failure-reason.js';
import type { ProbeResult } from './result.js';

/** What one `grpc.health.v1.Health/Check` ended with, as the I/O shell saw it. */
export type GrpcOutcome =
  /** The server answered the RPC: `status` is the HealthCheckResponse.ServingStatus name (or number). */
  | { kind: 'response'; status: string }
  /**
   * The RPC ended with a gRPC status other than OK. `connected` says whether the connection to the app had come
   * up (kubelet's blocking dial had returned), which is what separates kubelet's "failed to connect" from a
   * failed RPC.
   */
  | {
      kind: 'error';
      code: string;
      details: string;
      connected: boolean;
      /** The connection itself failed or dropped, not the call: why (failure-reason.ts). */
      transport?: FailureReason;
    };

export interface GrpcProbeContext {
  /** `host:port` as Go's net.JoinHostPort writes it. */
  addr: string;
  service: string;
  elapsedMs: number;
  timeoutMs: number;
}

export function grpcVerdict(outcome: GrpcOutcome, ctx: GrpcProbeContext): ProbeResult {
  const prefix = `grpc ${ctx.addr} service ${JSON.stringify(ctx.service)}`;
  const after = `after ${ctx.elapsedMs} ms`;
  if (outcome.kind === 'response') {
    // grpc.go: only SERVING is healthy; anything else is `service unhealthy (responded with %q)`.
    if (outcome.status === 'SERVING') {
      return { verdict: 'success', status: 200, message: `${prefix} -> SERVING in ${ctx.elapsedMs} ms` };
    }
    return failure(
      `${prefix} failed: service unhealthy (responded with "${outcome.status}") ${after}`,
      'grpc_status',
    );
  }
  if (!outcome.connected) {
    // grpc.go dials with WithBlock: no transport within the deadline is `failed to connect ... within`.
    if (outcome.code === 'DEADLINE_EXCEEDED') {
      return failure(`${prefix} failed to connect within ${ctx.timeoutMs} ms`, 'timeout');
    }
    return failure(`${prefix} failed to connect: ${outcome.details} ${after}`, outcome.transport ?? 'other');
  }
  switch (outcome.code) {
    case 'UNIMPLEMENTED':
      return failure(
        `${prefix} failed: server does not implement the grpc health protocol (grpc.health.v1.Health): ` +
          `${outcome.details} ${after}`,
        'grpc_status',
      );
    case 'DEADLINE_EXCEEDED':
      return failure(`${prefix} failed: health rpc did not complete within ${ctx.timeoutMs} ms`, 'timeout');
    default:
      // NOT_FOUND (unknown service), UNAVAILABLE, ...: grpc.go's `health rpc probe failed: %+v`.
      return failure(
        `${prefix} failed: health rpc probe failed: ${outcome.code}: ${outcome.details} ${after}`,
        outcome.transport ?? 'grpc_status',
      );
  }
}

function failure(message: string, reason: FailureReason): ProbeResult {
  return { verdict: 'failure', status: 503, message, reason };
}
