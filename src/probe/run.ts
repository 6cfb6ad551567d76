// Dispatches a probe table handler to its prober. The server depends on this signature, not on the probers,
// so route tests can hand it any Prober.

import type { ProbeHandler } from '../table/types.js';
import { preloadGrpc, probeGrpc } from './grpc.js';
import { loadTls, probeHttp } from './http.js';
import type { ProbeResult, ProbeTarget } from './result.js';
import { probeTcp } from './tcp.js';

export type Prober = (handler: ProbeHandler, target: ProbeTarget, userAgent?: string) => Promise<ProbeResult>;

export const runProbe: Prober = (handler, target, userAgent) => {
  switch (handler.type) {
    case 'httpGet':
      return probeHttp(handler, target, userAgent);
    case 'tcpSocket':
      return probeTcp(handler.port, target);
    case 'grpc':
      return probeGrpc(handler, target, userAgent);
    default: {
      const unreachable: never = handler;
      throw new Error(`unhandled probe handler ${JSON.stringify(unreachable)}`);
    }
  }
};

/**
 * Loads ahead of the first probe what these handlers' probers load lazily (gRPC: a few hundred ms on a small
 * node; TLS: a few ms), so no probe's budget pays for it and a table without them never does.
 */
export async function preloadProbers(handlers: readonly ProbeHandler[]): Promise<void> {
  const loads: Promise<unknown>[] = [];
  if (handlers.some((h) => h.type === 'grpc')) loads.push(preloadGrpc());
  if (handlers.some((h) => h.type === 'httpGet' && h.scheme === 'HTTPS')) loads.push(loadTls());
  await Promise.all(loads);
}
