// The running webhook: binds the HTTPS app with the certificate its TLS source gives (files or self-managed), and
// swaps in a new one through the TLS server's setSecureContext, so new connections get it and open ones keep theirs.

import { HealthcheckError } from '../errors.js';
import type { Backoff } from '../kube/api/backoff.js';
import type { KubeApi } from '../kube/api/in-cluster.js';
import type { KubeVersion } from '../kube-version.js';
import { boundPort, onListenAddress } from '../listen-address.js';
import type { Logger } from '../log.js';
import type { PlacementMode } from '../rewrite/placement.js';
import type { PodSecurityLevel } from '../rewrite/pod-security.js';
import type { SealMode } from '../seal/setting.js';
import { buildWebhookApp, type WebhookApp } from './app.js';
import type { KeyPair } from './certificate.js';
import { type ClusterVersion, learnClusterVersion } from './cluster-version.js';
import { WebhookRecorder } from './metrics/recorder.js';
import { type MetricsServer, startMetricsServer } from './metrics/server.js';
import { watchNamespacePolicies } from './namespace-policies.js';
import { watchNamespaceRules } from './namespace-rules.js';
import { watchNodeKubelets } from './node-kubelets.js';
import type { CacheActivity } from './reflector.js';
import type { TlsKeeper, TlsSource } from './tls-source.js';

export interface WebhookOptions {
  tls: TlsSource;
  port: number;
  /** Bind address; default `::` (dual stack), or 0.0.0.0 where IPv6 is off. */
  host?: string | undefined;
  /** Image of the companion and init container it adds. */
  image: string;
  /** --placement: where the companion goes in pods that keep running; default auto. */
  placement?: PlacementMode;
  /**
   * Where the cluster's version comes from (the API server's GET /version), for the placement and for pods
   * that must end (Jobs: a native sidecar or nothing). Absent: the version is not known.
   */
  clusterVersion?: { sidecarGate: boolean; fetchVersion: () => Promise<KubeVersion>; backoff?: Backoff };
  /**
   * The API server whose objects the webhook keeps from a list and watch of each: namespaces (Pod Security levels),
   * LimitRanges and ResourceQuotas (each namespace's rules), nodes (kubelet versions). Absent (tests, dev): every
   * namespace enforces podSecurity.defaultLevel, namespace rules are not checked, kubelets are not known.
   */
  kube?: { api: KubeApi; backoff?: Backoff; watchSeconds?: number };
  /** `defaultLevel`: the Pod Security level of namespaces without the label (--pod-security-default). */
  podSecurity?: { defaultLevel: PodSecurityLevel };
  /** --companion-cpu-limit: a CPU limit (canonical quantity) for the companion and the init container. */
  companionCpuLimit?: string;
  /** --seal: `node` where the node agent runs; default off. */
  seal?: SealMode;
  log: Logger;
  /** On close, how long open connections get to carry a last admission (answered, then closed); default 5 s. */
  drainMs?: number;
  /**
   * /metrics in plain HTTP on `port` (--metrics-port), on the same host; `timeoutSeconds`: the API server's
   * timeoutSeconds for the webhook (--admission-timeout), the duration histogram's last bucket. Absent: none.
   */
  metrics?: { port: number; timeoutSeconds: number; version: string };
}

export interface RunningWebhook {
  port: number;
  /** The port of /metrics, when it is served. */
  metricsPort?: number;
  /** The certificate being served now. */
  keyPair(): KeyPair;
  /**
   * /readyz turns 503 and every answer closes its connection; once no connection is open (or `drainMs` has
   * passed) the listener closes, idle connections are cut, and admissions in flight finish.
   */
  close(): Promise<void>;
}

// The Deployment's preStop sleep (10 s) keeps a stopping replica serving while its endpoint leaves the Service;
// this drain then covers the API server's pooled connections. Both fit its 30 s grace with the 10 s request limit.
const DRAIN_MS = 5_000;
/** The API server's timeoutSeconds for a webhook when its configuration gives none, and deploy/webhook's. */
export const DEFAULT_TIMEOUT_SECONDS = 5;

/** Namespaces without the Pod Security label enforce this (--pod-security-default). */
const defaultLevelOf = (options: WebhookOptions): PodSecurityLevel =>
  options.podSecurity?.defaultLevel ?? 'privileged';

/** What the webhook keeps of the cluster, each learnt or listed while it starts and never awaited. */
interface ClusterSources {
  cluster: ClusterVersion | undefined;
  namespaces: ReturnType<typeof watchNamespacePolicies> | undefined;
  rules: ReturnType<typeof watchNamespaceRules> | undefined;
  nodes: ReturnType<typeof watchNodeKubelets> | undefined;
  /** Which caches are not listed yet, and why; undefined once all are. */
  notListed(): string | undefined;
  close(): void;
}

function startClusterSources(options: WebhookOptions, recorder: WebhookRecorder): ClusterSources {
  const { log, clusterVersion, kube } = options;
  // Asked for while the webhook starts, never awaited: admissions go on meanwhile, as for an unknown version.
  const cluster =
    clusterVersion &&
    learnClusterVersion({
      fetch: clusterVersion.fetchVersion,
      sidecarGate: clusterVersion.sidecarGate,
      log,
      ...(clusterVersion.backoff === undefined ? {} : { backoff: clusterVersion.backoff }),
    });
  if (kube !== undefined) recorder.watchingCaches();
  const watching = kube && {
    api: kube.api,
    log,
    activity: (resource: string, what: CacheActivity) => recorder.cacheActivity(resource, what),
    ...(kube.backoff === undefined ? {} : { backoff: kube.backoff }),
    ...(kube.watchSeconds === undefined ? {} : { watchSeconds: kube.watchSeconds }),
  };
  // Until each is listed, admissions get what an unknown namespace or kubelet gets, and /readyz says which are
  // missing.
  const namespaces =
    watching && watchNamespacePolicies({ ...watching, defaultLevel: defaultLevelOf(options) });
  const rules = watching && watchNamespaceRules(watching);
  const nodes = watching && watchNodeKubelets(watching);
  const caches = [namespaces, rules, nodes];
  return {
    cluster,
    namespaces,
    rules,
    nodes,
    notListed() {
      const missing = caches.map((cache) => cache?.notReady()).filter((why) => why !== undefined);
      return missing.length === 0 ? undefined : missing.join('; ');
    },
    close() {
      cluster?.close();
      for (const cache of caches) cache?.close();
    },
  };
}

/** The app, reading the cluster from `sources`; `notReady` is /readyz's reason, `draining` once closing. */
function appFor(
  options: WebhookOptions,
  sources: ClusterSources,
  recorder: WebhookRecorder,
  readiness: { notReady: () => string | undefined; draining: () => boolean },
): WebhookApp {
  const { cluster, namespaces, rules, nodes } = sources;
  return buildWebhookApp({
    tls: options.tls.initial,
    image: options.image,
    placement: options.placement ?? 'auto',
    cluster: () => cluster?.knowledge() ?? { state: 'unknown', why: 'no API server to ask' },
    podSecurity: (namespace) =>
      namespaces?.knowledge(namespace) ?? {
        state: 'known',
        policy: {
          level: defaultLevelOf(options),
          version: 'latest',
          source: 'the default level: no API server to read namespace labels from',
        },
      },
    // No API server (tests, dev): no LimitRange or ResourceQuota to read, so nothing is checked, as in inject.
    namespaceRules: (namespace) => rules?.knowledge(namespace) ?? { state: 'unchecked' },
    kubelets: (nodeName) => nodes?.kubelets(nodeName) ?? { state: 'unknown', why: 'no API server to ask' },
    companionCpuLimit: options.companionCpuLimit,
    seal: options.seal,
    log: options.log,
    ...readiness,
    admitted: (outcome, seconds) => recorder.admission(outcome, seconds),
  });
}

/** Resolves once no connection to `app` is open, or after `ms`. */
function connectionTracker(app: WebhookApp): (ms: number) => Promise<void> {
  const connections = new Set<object>();
  let drained: (() => void) | undefined;
  app.server.on('connection', (socket) => {
    connections.add(socket);
    socket.once('close', () => {
      connections.delete(socket);
      if (connections.size === 0) drained?.();
    });
  });
  return async (ms) => {
    if (connections.size === 0) return;
    await new Promise<void>((resolve) => {
      drained = resolve;
      setTimeout(resolve, ms).unref();
    });
  };
}

/** The app's port and, when asked for, the metrics server; on failure, `undo` and an OSM_HC_LISTEN naming the port. */
async function listenAll(
  app: WebhookApp,
  options: WebhookOptions,
  recorder: WebhookRecorder,
  undo: () => Promise<void>,
): Promise<{ port: number; metricsServer: MetricsServer | undefined }> {
  const failed = (what: string) => async (err: Error) => {
    await undo();
    throw new HealthcheckError('OSM_HC_LISTEN', `cannot listen on ${what}: ${err.message}`, { cause: err });
  };
  const port = await listen(app, options.port, options.host).catch(failed(`port ${options.port}`));
  if (options.metrics === undefined) return { port, metricsServer: undefined };
  const { port: metricsPort, version } = options.metrics;
  const metricsServer = await startMetricsServer({
    port: metricsPort,
    host: options.host,
    recorder,
    version,
    log: options.log,
  }).catch(failed(`metrics port ${metricsPort}`));
  return { port, metricsServer };
}

function logServing(options: WebhookOptions, port: number, metricsPort: number | undefined): void {
  const { clusterVersion } = options;
  options.log.info(
    {
      port,
      ...(metricsPort === undefined ? {} : { metricsPort }),
      ...options.tls.describe,
      image: options.image,
      placement: options.placement ?? 'auto',
      podSecurityDefault: defaultLevelOf(options),
      clusterWatch: options.kube !== undefined,
      ...(options.companionCpuLimit === undefined ? {} : { companionCpuLimit: options.companionCpuLimit }),
      seal: options.seal ?? 'off',
      ...(clusterVersion === undefined ? {} : { sidecarContainersGate: clusterVersion.sidecarGate }),
    },
    'webhook serving',
  );
}

export async function startWebhook(options: WebhookOptions): Promise<RunningWebhook> {
  let pair = options.tls.initial;
  let keeper: TlsKeeper | undefined;
  let phase: 'starting' | 'serving' | 'draining' = 'starting';
  const recorder = new WebhookRecorder(options.metrics?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS);
  const sources = startClusterSources(options, recorder);
  const app = appFor(options, sources, recorder, {
    notReady: () =>
      phase === 'starting' || keeper === undefined
        ? 'starting'
        : phase === 'draining'
          ? 'draining'
          : (keeper.notReady() ?? sources.notListed()),
    draining: () => phase === 'draining',
  });
  const drain = connectionTracker(app);
  const { port, metricsServer } = await listenAll(app, options, recorder, async () => {
    sources.close();
    await app.close();
  });
  phase = 'serving';
  const served = (next: KeyPair) => recorder.serving(next.fingerprint, Date.parse(next.notAfter));
  if (!options.tls.throwaway) served(pair);
  keeper = await options.tls.start(
    (next) => {
      app.server.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' });
      pair = next;
      served(next);
    },
    { ca: (notAfterMs) => recorder.ca(notAfterMs), caBundleRepaired: () => recorder.caBundleRepaired() },
  );
  logServing(options, port, metricsServer?.port);
  return {
    port,
    ...(metricsServer === undefined ? {} : { metricsPort: metricsServer.port }),
    keyPair: () => pair,
    async close() {
      phase = 'draining';
      keeper?.close();
      sources.close();
      await drain(options.drainMs ?? DRAIN_MS);
      await app.close();
      // Last: a scrape during the drain still sees the admissions it answered.
      await metricsServer?.close();
    },
  };
}

function listen(app: WebhookApp, port: number, host: string | undefined): Promise<number> {
  return onListenAddress(host, async (h) => {
    await app.listen({ port, host: h, ipv6Only: false });
    return boundPort(app.server, port);
  });
}
