// TCP probe, as kubelet's pkg/probe/tcp runs it: connect to the app within the budget, then close without
// sending a byte. Connected is Success; any dial error or the timeout is Failure.

import { connect } from 'node:net';
import { joinHostPort, type ProbeResult, type ProbeTarget } from './result.js';

export function probeTcp(port: number, target: ProbeTarget): Promise<ProbeResult> {
  const start = performance.now();
  return new Promise((resolve) => {
    // An IP literal host skips the DNS lookup. The socket's own idle timer serves as the dial timeout
    // (net.DialTimeout): nothing is read or written, so it fires `timeoutMs` after the dial began.
    const socket = connect({ host: target.host, port, timeout: Math.max(1, target.timeoutMs) });
    socket.on('connect', () => {
      // tcp.go's conn.Close(): close(2) at once, so the app sees a connection and a FIN, never a byte.
      socket.destroy();
      resolve(result(port, target, 'success', `connected in ${elapsed(start)} ms`));
    });
    socket.on('timeout', () => {
      socket.destroy();
      resolve(
        result(
          port,
          target,
          'failure',
          `failed: timeout after ${target.timeoutMs} ms waiting for connection`,
        ),
      );
    });
    socket.on('error', (err) => {
      // tcp.go: "Convert errors to failures to handle timeouts." Node has already destroyed the socket.
      resolve(result(port, target, 'failure', `failed: ${err.message} after ${elapsed(start)} ms`));
    });
  });
}

function result(
  port: number,
  target: ProbeTarget,
  verdict: 'success' | 'failure',
  what: string,
): ProbeResult {
  return {
    verdict,
    status: verdict === 'success' ? 200 : 503,
    message: `tcp ${joinHostPort(target.host, port)} ${what}`,
  };
}

function elapsed(start: number): number {
  return Math.round(performance.now() - start);
}
