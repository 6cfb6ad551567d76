// The running webhook: binds the HTTPS app with the certificate its TLS source gives (files or self-managed), and
// swaps in a new one through the TLS server's setSecureContext, so new connections get it and open ones keep theirs.

import { HealthcheckError } from '../errors.js';
import type { KubeVersion } from '../kube-version.js';
import type { Logger } from '../log.js';
import type { PlacementMode } from '../rewrite/placement.js';
import type { PodSecurityLevel } from '../rewrite/pod-security.js';
import { buildWebhookApp, type WebhookApp } from './app.js';
import type { KeyPair } from './certificate.js';
import { type Backoff, learnClusterVersion } from './cluster-version.js';
import type { KubeApi } from './kube-api.js';
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

export async function startWebhook(options: WebhookOptions): Promise<RunningWebhook> {
  const { log } = options;
  let pair = options.tls.initial;
  let keeper: TlsKeeper | undefined;
  let listening = false;
  let draining = false;
  const { clusterVersion } = options;
  const placement = options.placement ?? 'auto';
  // Asked for while the webhook starts, never awaited: admissions go on meanwhile, as for an unknown version.
  const cluster =
    clusterVersion === undefined
      ? undefined
      : learnClusterVersion({
          fetch: clusterVersion.fetchVersion,
          sidecarGate: clusterVersion.sidecarGate,
          log,
          ...(clusterVersion.backoff === undefined ? {} : { backoff: clusterVersion.backoff }),
        });
  const podSecurity = options.podSecurity ?? { defaultLevel: 'privileged' };
  const { kube } = options;
  const recorder = new WebhookRecorder(options.metrics?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS);
  if (kube !== undefined) recorder.watchingCaches();
  const watching =
    kube === undefined
      ? undefined
      : {
          api: kube.api,
          log,
          activity: (resource: string, what: CacheActivity) => recorder.cacheActivity(resource, what),
          ...(kube.backoff === undefined ? {} : { backoff: kube.backoff }),
          ...(kube.watchSeconds === undefined ? {} : { watchSeconds: kube.watchSeconds }),
        };
  // Listed and watched while the webhook starts, never awaited: until each is listed, admissions get what an
  // unknown namespace or kubelet gets, and /readyz says which are missing.
  const namespaces =
    watching && watchNamespacePolicies({ ...watching, defaultLevel: podSecurity.defaultLevel });
  const rules = watching && watchNamespaceRules(watching);
  const nodes = watching && watchNodeKubelets(watching);
  const caches = [namespaces, rules, nodes];
  const closeCaches = () => {
    for (const cache of caches) cache?.close();
  };
  const notListed = () => {
    const missing = caches.map((cache) => cache?.notReady()).filter((why) => why !== undefined);
    return missing.length === 0 ? undefined : missing.join('; ');
  };
  const app = buildWebhookApp({
    tls: pair,
    image: options.image,
    placement,
    cluster: () => cluster?.knowledge() ?? { state: 'unknown', why: 'no API server to ask' },
    podSecurity: (namespace) =>
      namespaces?.knowledge(namespace) ?? {
        state: 'known',
        policy: {
          level: podSecurity.defaultLevel,
          version: 'latest',
          source: 'the default level: no API server to read namespace labels from',
        },
      },
    // No API server (tests, dev): no LimitRange or ResourceQuota to read, so nothing is checked, as in inject.
    namespaceRules: (namespace) => rules?.knowledge(namespace) ?? { state: 'unchecked' },
    kubelets: (nodeName) => nodes?.kubelets(nodeName) ?? { state: 'unknown', why: 'no API server to ask' },
    companionCpuLimit: options.companionCpuLimit,
    log,
    notReady: () =>
      !listening || keeper === undefined
        ? 'starting'
        : draining
          ? 'draining'
          : (keeper.notReady() ?? notListed()),
    draining: () => draining,
    admitted: (outcome, seconds) => recorder.admission(outcome, seconds),
  });
  const connections = new Set<object>();
  let drained: (() => void) | undefined;
  app.server.on('connection', (socket) => {
    connections.add(socket);
    socket.once('close', () => {
      connections.delete(socket);
      if (connections.size === 0) drained?.();
    });
  });
  const port = await listen(app, options.port, options.host).catch(async (err) => {
    cluster?.close();
    closeCaches();
    await app.close();
    throw new HealthcheckError('OSM_HC_LISTEN', `cannot listen on port ${options.port}: ${err.message}`, {
      cause: err,
    });
  });
  let metricsServer: MetricsServer | undefined;
  if (options.metrics !== undefined) {
    const { port: metricsPort, version } = options.metrics;
    metricsServer = await startMetricsServer({
      port: metricsPort,
      host: options.host,
      recorder,
      version,
      log,
    }).catch(async (err) => {
      cluster?.close();
      closeCaches();
      await app.close();
      throw new HealthcheckError(
        'OSM_HC_LISTEN',
        `cannot listen on metrics port ${metricsPort}: ${err.message}`,
        {
          cause: err,
        },
      );
    });
  }
  listening = true;
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
  log.info(
    {
      port,
      ...(metricsServer === undefined ? {} : { metricsPort: metricsServer.port }),
      ...options.tls.describe,
      image: options.image,
      placement,
      podSecurityDefault: podSecurity.defaultLevel,
      clusterWatch: kube !== undefined,
      ...(options.companionCpuLimit === undefined ? {} : { companionCpuLimit: options.companionCpuLimit }),
      ...(clusterVersion === undefined ? {} : { sidecarContainersGate: clusterVersion.sidecarGate }),
    },
    'webhook serving',
  );
  return {
    port,
    ...(metricsServer === undefined ? {} : { metricsPort: metricsServer.port }),
    keyPair: () => pair,
    async close() {
      draining = true;
      keeper?.close();
      cluster?.close();
      closeCaches();
      if (connections.size > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, options.drainMs ?? DRAIN_MS).unref();
        });
      }
      await app.close();
      // Last: a scrape during the drain still sees the admissions it answered.
      await metricsServer?.close();
    },
  };
}

async function listen(app: WebhookApp, port: number, host: string | undefined): Promise<number> {
  const attempt = async (h: string) => {
    await app.listen({ port, host: h, ipv6Only: false });
    const address = app.server.address();
    return typeof address === 'object' && address !== null ? address.port : port;
  };
  if (host !== undefined) return attempt(host);
  try {
    return await attempt('::');
  } catch (err) {
    const { code } = err as NodeJS.ErrnoException;
    if (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL') throw err;
    return attempt('0.0.0.0');
  }
}
