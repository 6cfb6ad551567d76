// TCP probe, as kubelet's pkg/probe/tcp runs it: connect to the app within the budget, then close without
// sending a byte. Connected is Success; any dial error or the timeout is Failure.

import { connect } from 'node:net';
import { type FailureReason, reasonOfError } from './failure-reason.js';
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
          'timeout',
          `failed: timeout after ${target.timeoutMs} ms waiting for connection`,
        ),
      );
    });
    socket.on('error', (err) => {
      // tcp.go: "Convert errors to failures to handle timeouts." Node has already destroyed the socket.
      const reason = reasonOfError(err);
      resolve(result(port, target, reason, `failed: ${err.message} after ${elapsed(start)} ms`));
    });
  });
}

/** `outcome`: success, or why the connect failed. */
function result(
  port: number,
  target: ProbeTarget,
  outcome: 'success' | FailureReason,
  what: string,
): ProbeResult {
  const message = `tcp ${joinHostPort(target.host, port)} ${what}`;
  return outcome === 'success'
    ? { verdict: 'success', status: 200, message }
    : { verdict: 'failure', status: 503, message, reason: outcome };
}

function elapsed(start: number): number {
  return Math.round(performance.now() - start);
}
