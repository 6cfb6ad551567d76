// Dispatches a probe table handler to its prober. The server depends on this signature, not on the probers,
// so route tests can hand it any Prober.

import type { ProbeHandler } from '../table/types.js';
import { probeGrpc } from './grpc.js';
import { probeHttp } from './http.js';
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
