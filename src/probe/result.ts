// What a probe run yields, as a value: kubelet's verdict plus the status and one-line reason the companion
// hands back to kubelet, and for a Warning the app's body (docs/architecture.md#what-kubelet-receives). Probers never
// throw for an unhealthy app.

import type { FailureReason } from './failure-reason.js';

/** kubelet's verdicts (k8s.io/kubernetes/pkg/probe/probe.go): Warning counts as success. */
export type Verdict = 'success' | 'warning' | 'failure';

/**
 * What kubelet itself would have read of the app's answer: the body, cut at 10 KiB (http.go ReadAtMost), and the
 * type the app gave it. Only a Warning carries it: kubelet puts those bytes into its Warning (`Probe terminated
 * redirects, Response body: …`), so the companion hands them on unchanged (docs/architecture.md#what-kubelet-receives).
 */
export interface AppBody {
  bytes: Buffer;
  contentType: string | undefined;
}

interface Judged<V extends Verdict> {
  verdict: V;
  /** The status the companion answers with: the app's own status where it answered, else 200 or 503. */
  status: number;
  /** One plain-text line: what was probed and what happened, e.g. `GET http://10.1.2.3:14001/live -> 200 in 3 ms`. */
  message: string;
}

/**
 * A Warning is a 3xx kubelet would not follow: it always comes with the app's body. A Failure always says why,
 * as one of a fixed set (failure-reason.ts), for /metrics.
 */
export type ProbeResult =
  | Judged<'success'>
  | (Judged<'failure'> & { reason: FailureReason })
  | (Judged<'warning'> & { appBody: AppBody });

/** Where and how long to probe. `host` is an IP literal (POD_IP or 127.0.0.1), never bracketed. */
export interface ProbeTarget {
  host: string;
  /** Total budget for the whole probe: connect, TLS, redirects, headers and body. */
  timeoutMs: number;
}

/**
 * The companion must answer before kubelet's own timeout fires, so a probe gets the entry's timeoutSeconds
 * less a margin for the hop from kubelet to us and back: 10% of it, at most 100 ms.
 */
export function probeBudgetMs(timeoutSeconds: number): number {
  const total = timeoutSeconds * 1000;
  return total - Math.min(100, total / 10);
}

/** `10.1.2.3:80` or `[fd00::1]:80`: how kubelet (Go's net.JoinHostPort) writes a host and port. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
