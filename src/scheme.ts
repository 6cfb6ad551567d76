// The rewritten-probe scheme shared by `inject` (which writes it into pod specs) and `serve` (which answers it):
// docs/architecture.md#the-rewrite, docs/architecture.md#serve-routes-and-verdicts. Both sides import these names,
// so the two can never drift apart.

export const PROBE_KINDS = ['liveness', 'readiness', 'startup'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

/** The four listener roles: one per probe kind, plus the header-driven healthcheck port. */
export type ListenerRole = ProbeKind | 'healthcheck';
export const LISTENER_ROLES: readonly ListenerRole[] = [...PROBE_KINDS, 'healthcheck'];

export const DEFAULT_PORTS: Readonly<Record<ListenerRole, number>> = {
  liveness: 15901,
  readiness: 15902,
  startup: 15903,
  healthcheck: 15904,
};

/** First and last port of the companion's range; a probe already pointing here was rewritten before. */
export const PORT_RANGE = { first: 15901, last: 15904 } as const;

export const HEALTHCHECK_PATH = '/osm-healthcheck';
export const HEALTHZ_PATH = '/healthz';
/** Prometheus metrics, on the healthcheck port only. */
export const METRICS_PATH = '/metrics';
export const TCP_PORT_HEADER = 'Original-Tcp-Port';
export const HTTP_PORT_HEADER = 'Original-Http-Port';
export const HTTP_PATH_HEADER = 'Original-Http-Path';
/**
 * On an answer that carries the app's body (a Warning: a 3xx kubelet would not follow), the companion's one-line
 * reason, which every other answer carries as its body.
 */
export const REASON_HEADER = 'Osm-Healthcheck-Reason';

/** `/osm-liveness-probe` (the one-container form) or `/osm-liveness-probe/<container>`. */
export function probePath(kind: ProbeKind, container?: string): string {
  const base = `/osm-${kind}-probe`;
  return container === undefined ? base : `${base}/${container}`;
}

/** The GET kubelet sends the companion in place of an original probe (docs/architecture.md#the-rewrite). */
export interface CompanionGet {
  port: number;
  path: string;
  headers: ReadonlyArray<{ name: string; value: string }>;
}

/** An httpGet or grpc probe: `/osm-<kind>-probe/<container>` on its kind's port. */
export function kindProbeGet(
  kind: ProbeKind,
  container: string,
  ports: Readonly<Record<ListenerRole, number>> = DEFAULT_PORTS,
): CompanionGet {
  return { port: ports[kind], path: probePath(kind, container), headers: [] };
}

/** A tcpSocket probe, in osm-edge's convention: the healthcheck port, the app's port in a header. */
export function tcpProbeGet(
  appPort: number,
  ports: Readonly<Record<ListenerRole, number>> = DEFAULT_PORTS,
): CompanionGet {
  return {
    port: ports.healthcheck,
    path: HEALTHCHECK_PATH,
    headers: [{ name: TCP_PORT_HEADER, value: String(appPort) }],
  };
}

export function isProbeKind(value: string): value is ProbeKind {
  return (PROBE_KINDS as readonly string[]).includes(value);
}

export function isCompanionPort(port: number): boolean {
  return port >= PORT_RANGE.first && port <= PORT_RANGE.last;
}

/** kube-probe/<major>.<minor> of the kubelet we imitate when the request carries no kubelet User-Agent. */
export const DEFAULT_USER_AGENT = 'kube-probe/1.30';

/** Probe table env var and the annotation that opts a workload out of the rewrite. */
export const PROBES_ENV = 'OSM_HEALTHCHECK_PROBES';
export const OPT_OUT_ANNOTATION = 'osm-healthcheck/rewrite-probes';

/**
 * The pod's terminationGracePeriodSeconds, which inject writes into the companion's env: after SIGTERM, serve
 * keeps answering kubelet's probes at most this long while the app shuts down.
 */
export const SHUTDOWN_GRACE_ENV = 'OSM_HEALTHCHECK_SHUTDOWN_GRACE_SECONDS';

/**
 * How many times the image's supervisor (image/supervise.sh) restarted serve in this container: it tells each
 * serve it starts, and /metrics counts it (osm_healthcheck_restarts_total).
 */
export const RESTARTS_ENV = 'OSM_HEALTHCHECK_RESTARTS';

/**
 * The companion's user: non-root, and distinct from the mesh proxy's (osm-edge 1500, Istio 1337). inject runs the
 * companion as this user and init lets this user's connections to the app past the mesh's outbound redirect.
 */
export const COMPANION_UID = 65532;
