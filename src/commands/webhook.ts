// `osm-healthcheck webhook`: flags -> the mutating admission webhook (src/webhook), until SIGTERM or SIGINT.

import pkg from '../../package.json' with { type: 'json' };
import { badFlagValue } from '../flags.js';
import { inClusterClient, type KubeApi, SERVICE_ACCOUNT_DIR } from '../kube/api/in-cluster.js';
import { fetchVersion } from '../kube/api/version.js';
import { kubeApiChoice } from '../kube-api-choice.js';
import { createLogger, LOG_LEVELS, type Logger } from '../log.js';
import { DEFAULT_IMAGE } from '../rewrite/companion.js';
import { PLACEMENT_MODES } from '../rewrite/placement.js';
import { POD_SECURITY_LEVELS } from '../rewrite/pod-security.js';
import { MUTATE_PATH } from '../webhook/app.js';
import {
  DEFAULT_TIMEOUT_SECONDS,
  type RunningWebhook,
  startWebhook,
  type WebhookOptions,
} from '../webhook/server.js';
import {
  type CompanionSettings,
  companionSettings,
  type Given,
  TLS_DEFAULTS,
  webhookArgs,
} from '../webhook/settings.js';
import type { Command } from './command.js';
import { tlsChoice, tlsSource } from './webhook-tls.js';

const DEFAULT_PORT = 9443;
const DEFAULT_METRICS_PORT = 8080;
const VERSION_TIMEOUT_MS = 5_000;

const usage = `Usage: osm-healthcheck webhook [--tls-cert FILE --tls-key FILE] [flags]

Serves a mutating admission webhook on HTTPS: POST ${MUTATE_PATH} takes an admission.k8s.io/v1 AdmissionReview
for a Pod and answers with the JSON patch that makes of it exactly what \`inject\` would. /healthz and /readyz
for kubelet; Prometheus metrics at GET /metrics in plain HTTP on --metrics-port. Pods that must end (restartPolicy Never/OnFailure: Jobs) get the companion as a native sidecar
where the API server's and the kubelets' versions have them, else none; workloads (Jobs, Deployments...) get only warnings, which
kubectl prints.

TLS: with --tls-cert and --tls-key, those files (reloaded when they change: cert-manager rotation). With
neither (the default), self-managed: a CA and a serving certificate for SERVICE.NAMESPACE.svc kept in the
Secret --tls-secret, renewed and rotated there, and the caBundle of every webhook of the
MutatingWebhookConfiguration --webhook-config kept set to that CA, through the API server. Either way, with an
API server, the certificate chain served (public, no key) is kept in that configuration's annotation
osm-healthcheck.flomesh.io/serving-certificate, for analyze.

Flags (each also read from the environment variable shown; flags win):
  --tls-cert FILE      PEM certificate (chain)     (OSM_HEALTHCHECK_TLS_CERT)
  --tls-key FILE       PEM private key             (OSM_HEALTHCHECK_TLS_KEY)
  --namespace NS       the webhook's namespace, self-managed TLS (OSM_HEALTHCHECK_NAMESPACE;
                       default: the service account's ${SERVICE_ACCOUNT_DIR}/namespace)
  --service NAME       its Service: the certificate is for NAME.NS.svc and NAME.NS.svc.cluster.local
                       (OSM_HEALTHCHECK_WEBHOOK_SERVICE; default ${TLS_DEFAULTS.service})
  --tls-secret NAME    the Secret it keeps (OSM_HEALTHCHECK_TLS_SECRET; default ${TLS_DEFAULTS.secret})
  --webhook-config NAME
                       its MutatingWebhookConfiguration (OSM_HEALTHCHECK_WEBHOOK_CONFIG; default ${TLS_DEFAULTS.webhookConfig})
  --tls-resync SECONDS read the Secret, the caBundle and the annotation this often (OSM_HEALTHCHECK_TLS_RESYNC_SECONDS;
                       default ${TLS_DEFAULTS.resyncSeconds})
  --port PORT          HTTPS port                  (OSM_HEALTHCHECK_WEBHOOK_PORT; default ${DEFAULT_PORT})
  --host ADDRESS       bind address of both ports  (OSM_HEALTHCHECK_HOST; default :: and 0.0.0.0)
  --metrics-port PORT  plain-HTTP port of GET /metrics (OSM_HEALTHCHECK_METRICS_PORT; default ${DEFAULT_METRICS_PORT})
  --admission-timeout SECONDS
                       the timeoutSeconds of its MutatingWebhookConfiguration, 1-30: the last bucket of
                       the admission duration histogram (OSM_HEALTHCHECK_ADMISSION_TIMEOUT_SECONDS;
                       default ${DEFAULT_TIMEOUT_SECONDS}, as deploy/webhook's)
  --image IMAGE        image of the companion and init container
                       (OSM_HEALTHCHECK_IMAGE; default ${DEFAULT_IMAGE})
  --placement MODE     where the companion goes in pods that keep running (${PLACEMENT_MODES.join('|')};
                       OSM_HEALTHCHECK_PLACEMENT; default auto). auto: a native sidecar where the API
                       server and every kubelet that may run the pod are 1.33+ (native sidecars GA; the
                       pod's own node when it names one, else the oldest); native-sidecar: wherever they
                       have them (1.29+, or 1.28 with --sidecar-containers-gate); first: always first
                       among the containers. Versions come from the API server's GET /version and its nodes; until they are known the
                       companion goes first among the containers, with a postStart hook
  --native-sidecar     an alias of --placement native-sidecar, kept for existing manifests
                       (OSM_HEALTHCHECK_NATIVE_SIDECAR=true)
  --sidecar-containers-gate
                       the API server runs 1.28 with the SidecarContainers feature gate on
                       (OSM_HEALTHCHECK_SIDECAR_CONTAINERS_GATE=true)
  --pod-security-default LEVEL
                       the Pod Security level of namespaces without the pod-security.kubernetes.io/enforce
                       label: the PodSecurity admission configuration's defaults.enforce, which the API
                       cannot show (${POD_SECURITY_LEVELS.join('|')}; OSM_HEALTHCHECK_POD_SECURITY_DEFAULT;
                       default privileged, as Kubernetes'). Labels come from a watch of namespaces; above
                       privileged pods get no init container (docs/pod-security.md)
  --companion-cpu-limit QUANTITY
                       a CPU limit on the companion and the init container, for admission policies this
                       webhook cannot read that demand one (ValidatingAdmissionPolicy, Kyverno,
                       Gatekeeper), e.g. 100m (OSM_HEALTHCHECK_COMPANION_CPU_LIMIT; default none: a CPU
                       limit throttles probes, and LimitRanges and ResourceQuotas are read and fitted anyway)
  --seal off|node      node: pods prove and take the seal through the node agent (osm-healthcheck node), so
                       only kubelet reaches their companion; a pod on a node without it runs open
                       (OSM_HEALTHCHECK_SEAL; default off: no pod changes until the agent runs; docs/node.md)
  --kube-api URL       the API server: its version, self-managed TLS, and a list and watch of namespaces
                       (Pod Security labels), LimitRanges and ResourceQuotas (each namespace's rules) and
                       nodes (kubelet versions); /readyz waits until all four are listed. Without one (tests,
                       dev) every namespace enforces --pod-security-default, LimitRanges and ResourceQuotas
                       are not checked, and kubelet versions are not known (OSM_HEALTHCHECK_KUBE_API;
                       default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)
  --kube-ca FILE       its CA (OSM_HEALTHCHECK_KUBE_CA; default ${SERVICE_ACCOUNT_DIR}/ca.crt)
  --kube-token-file FILE
                       bearer token (OSM_HEALTHCHECK_KUBE_TOKEN_FILE; default ${SERVICE_ACCOUNT_DIR}/token)
  --log-level LEVEL    ${LOG_LEVELS.join('|')} (OSM_HEALTHCHECK_LOG_LEVEL; default info)
  --help, --version`;

/** A port 0-65535 from `flag`, else `fallback`. */
function portOf(given: Given | undefined, fallback: number): number {
  if (given === undefined) return fallback;
  const port = Number(given.text);
  if (!/^\d+$/.test(given.text) || port > 65535) throw badFlagValue(given.from, given.text, 'a port 0-65535');
  return port;
}

/** Whole seconds 1-30, the range the API server accepts for a webhook's timeoutSeconds. */
function admissionTimeout(given: Given | undefined): number {
  if (given === undefined) return DEFAULT_TIMEOUT_SECONDS;
  const seconds = Number(given.text);
  if (!/^\d+$/.test(given.text) || seconds < 1 || seconds > 30)
    throw badFlagValue(given.from, given.text, 'whole seconds 1-30');
  return seconds;
}

function logLevelOf(given: Given | undefined): string {
  if (given === undefined) return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(given.text))
    throw badFlagValue(given.from, given.text, LOG_LEVELS.join(', '));
  return given.text;
}

/**
 * Where the cluster's version comes from: asked whenever there is an API server (pods that must end need it too);
 * --placement native-sidecar without one keeps saying, with backoff, why it is not granted.
 */
function clusterVersionOf(
  companion: CompanionSettings,
  api: KubeApi | undefined,
): WebhookOptions['clusterVersion'] {
  if (companion.placement !== 'native-sidecar' && api === undefined) return undefined;
  return {
    sidecarGate: companion.sidecarGate,
    fetchVersion: () =>
      api === undefined
        ? Promise.reject(
            new Error('no API server to ask: KUBERNETES_SERVICE_HOST is not set and --kube-api is not given'),
          )
        : fetchVersion(inClusterClient(api, VERSION_TIMEOUT_MS)),
  };
}

/** Every flag read and checked, in the order their errors are told, before anything starts. */
export function readFlags(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const args = webhookArgs(argv, env);
  const tls = tlsChoice(args);
  const port = portOf(args('port'), DEFAULT_PORT);
  const metricsPort = portOf(args('metrics-port'), DEFAULT_METRICS_PORT);
  const timeoutSeconds = admissionTimeout(args('admission-timeout'));
  const companion = companionSettings(args);
  const api = kubeApiChoice(args, env);
  return {
    args,
    tls,
    port,
    metricsPort,
    timeoutSeconds,
    companion,
    api,
    level: logLevelOf(args('log-level')),
  };
}

/**
 * Kubernetes stops sending admissions once the endpoint is gone (the Deployment's preStop sleep covers the delay);
 * here in-flight admissions finish before the listener closes.
 */
function untilSignal(webhook: RunningWebhook, log: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      log.info({ signal }, 'draining');
      webhook.close().finally(() => {
        log.info('stopped');
        log.flush();
        resolve();
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

async function run(argv: readonly string[]): Promise<void> {
  const { args, tls, port, metricsPort, timeoutSeconds, companion, api, level } = readFlags(
    argv,
    process.env,
  );
  const log = createLogger(level);
  const clusterVersion = clusterVersionOf(companion, api);
  const webhook = await startWebhook({
    tls: await tlsSource(tls, args, api, log),
    port,
    host: args('host')?.text,
    image: companion.image,
    placement: companion.placement,
    ...(clusterVersion === undefined ? {} : { clusterVersion }),
    podSecurity: { defaultLevel: companion.podSecurityDefault },
    ...(api === undefined ? {} : { kube: { api } }),
    ...(companion.companionCpuLimit === undefined ? {} : { companionCpuLimit: companion.companionCpuLimit }),
    seal: companion.seal,
    metrics: { port: metricsPort, timeoutSeconds, version: pkg.version },
    log,
  });
  await untilSignal(webhook, log);
}

export const webhookCommand: Command = {
  name: 'webhook',
  usage,
  run,
};
