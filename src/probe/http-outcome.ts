// kubelet's verdict on an HTTP probe's answer (k8s pkg/probe/http/http.go DoHTTPProbe) and the one-line
// message the companion hands back: pure, so every shape is table-tested in test/probe/http-request.test.ts.

import type { FailureReason } from './failure-reason.js';
import type { Hop } from './http-request.js';
import type { AppBody, ProbeResult, Verdict } from './result.js';

/** kubelet's verdict on an answer (http.go DoHTTPProbe) and the status the companion hands back. */
export function verdictFor(status: number): { verdict: Verdict; status: number } {
  if (status >= 200 && status < 300) return { verdict: 'success', status };
  // A 3xx that reaches the prober is a redirect not followed: Warning, which kubelet counts as success.
  if (status >= 300 && status < 400) return { verdict: 'warning', status };
  // Failure: the app's own status when it is an error; a final 1xx cannot be relayed, so 503.
  return { verdict: 'failure', status: status >= 400 ? status : 503 };
}

function redirects(n: number): string {
  return n === 1 ? '1 redirect' : `${n} redirects`;
}

/**
 * `GET http://10.1.2.3:14001/live -> 200 in 3 ms`, with a note on redirects when there were any. `body` is what
 * was read of the final answer: a Warning hands it on to kubelet.
 */
export function answered(
  first: Hop,
  last: Hop,
  followed: number,
  status: number,
  ms: number,
  note: string | undefined,
  body: AppBody,
): ProbeResult {
  const notes = followed > 0 ? [`after ${redirects(followed)}, at ${last.href}`] : [];
  if (note !== undefined) notes.unshift(note);
  const detail = notes.length > 0 ? ` (${notes.join('; ')})` : '';
  const message = `GET ${first.href} -> ${status}${detail} in ${ms} ms`;
  const judged = verdictFor(status);
  switch (judged.verdict) {
    case 'warning':
      return { verdict: 'warning', status: judged.status, message, appBody: body };
    case 'failure':
      return { verdict: 'failure', status: judged.status, message, reason: 'status' };
    case 'success':
      return { verdict: 'success', status: judged.status, message };
  }
}

/**
 * kubelet's output for a Warning (http.go DoHTTPProbe: `fmt.Sprintf("Probe terminated redirects, Response body:
 * %v", body)`, body being `string(b)` of the bytes ReadAtMost read), as its ProbeWarning event and `kubectl
 * describe` show it. Go keeps invalid UTF-8 as bytes; here it reads as U+FFFD.
 */
export function kubeletWarning(body: Buffer): string {
  return `Probe terminated redirects, Response body: ${body.toString('utf8')}`;
}

/** `GET http://10.1.2.3:14001/live failed: connect ECONNREFUSED 10.1.2.3:14001 after 1 ms`. */
export function failed(first: Hop, what: string, reason: FailureReason, ms?: number): ProbeResult {
  const after = ms === undefined ? '' : ` after ${ms} ms`;
  return { verdict: 'failure', status: 503, message: `GET ${first.href} failed: ${what}${after}`, reason };
}

/** Where a failure happened when it was not on the first GET. */
export function atHop(reason: string, hop: Hop, followed: number): string {
  return followed === 0 ? reason : `${reason} (at ${hop.href}, after ${redirects(followed)})`;
}

export function timeoutReason(budgetMs: number, stage: string): string {
  return `timeout after ${budgetMs} ms waiting for ${stage}`;
}

/** A transport error as one line: node's own wording, with OpenSSL and llhttp codes made readable. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const { code, reason } = err as Error & { code?: string; reason?: unknown };
  if (code?.startsWith('ERR_SSL_') && typeof reason === 'string') {
    // OpenSSL's view of an HTTP answer to its ClientHello (Go: "server gave HTTP response to HTTPS client").
    const plain = code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG';
    return `TLS error: ${reason}${plain ? ' (is the port plain HTTP?)' : ''}`;
  }
  if (code?.startsWith('HPE_'))
    return `invalid HTTP response (${typeof reason === 'string' ? reason : code})`;
  return err.message;
}
