// Why a probe failed, as one of a fixed set: the companion counts failures by it (docs/metrics.md#failure-reasons)
// and analyze reads `timeout` from it. Every prober gives each Failure one, so none goes uncounted.

/** The reasons, in the order docs/metrics.md lists them. Labels of osm_healthcheck_probe_failures_total. */
export const FAILURE_REASONS = [
  /** The probe's budget ran out: connecting, the TLS handshake, the answer, the body or the gRPC call. */
  'timeout',
  /** Nothing listened: the connect was refused (ECONNREFUSED). */
  'refused',
  /** The app closed or reset the connection before its answer was complete. */
  'reset',
  /** httpGet: the app answered with a status kubelet fails (not 2xx or 3xx). */
  'status',
  /** httpGet over HTTPS: the TLS handshake failed. */
  'tls',
  /** httpGet: a redirect kubelet fails (the 10th, an unparseable Location, a scheme other than http/https). */
  'redirect',
  /** grpc: the health check answered other than SERVING, or the call ended with a gRPC error status. */
  'grpc_status',
  /** Anything else: an unparseable HTTP answer, an unreachable host, a local error. */
  'other',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** The reason of a transport error, from node's error code (an errno, OpenSSL's ERR_SSL_*, node's ERR_TLS_*). */
export function reasonOfError(err: unknown): FailureReason {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'other';
  switch (code) {
    case 'ECONNREFUSED':
      return 'refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ECONNABORTED':
      return 'reset';
    case 'ETIMEDOUT':
      return 'timeout';
  }
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') ? 'tls' : 'other';
}
