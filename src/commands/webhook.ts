// `osm-healthcheck webhook`: flags -> the mutating admission webhook (src/webhook), until SIGTERM or SIGINT.

import { join } from 'node:path';
import pkg from '../../package.json' with { type: 'json' };
import { describeValue } from '../errors.js';
import {
  badFlagValue,
  flagOrEnv,
  flagOrEnvBoolean,
  noArguments,
  parseFlags,
  sourceName,
  usageError,
} from '../flags.js';
import { createLogger, LOG_LEVELS } from '../log.js';
import { DEFAULT_IMAGE } from '../rewrite/companion.js';
import { PLACEMENT_MODES } from '../rewrite/placement.js';
import { POD_SECURITY_LEVELS, parseLevel } from '../rewrite/pod-security.js';
import { MUTATE_PATH } from '../webhook/app.js';
import { fetchVersion, inClusterUrl, type KubeApi, SERVICE_ACCOUNT_DIR } from '../webhook/kube-api.js';
import { DEFAULT_TIMEOUT_SECONDS, startWebhook } from '../webhook/server.js';
import type { Command } from './command.js';
import { cpuLimitOf, imageOf, placementOf } from './companion-flags.js';
import { TLS_DEFAULTS, TLS_FLAGS, tlsChoice, tlsSource } from './webhook-tls.js';

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
MutatingWebhookConfiguration --webhook-config kept set to that CA, through the API server.

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
  --tls-resync SECONDS read the Secret and the caBundle this often (OSM_HEALTHCHECK_TLS_RESYNC_SECONDS;
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

function parsePort(text: string, field: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw badFlagValue(field, text, 'a port 0-65535');
  }
  return port;
}

/** Whole seconds 1-30, the range the API server accepts for a webhook's timeoutSeconds. */
function admissionTimeout(text: string, field: string): number {
  const seconds = Number(text);
  if (!/^\d+$/.test(text) || seconds < 1 || seconds > 30)
    throw badFlagValue(field, text, 'whole seconds 1-30');
  return seconds;
}

/** --kube-api, else the in-cluster address; an API server spoken to without TLS would be anyone's. */
function kubeApi(flag: string | undefined, caFile: string, tokenFile: string): KubeApi | undefined {
  const given = flagOrEnv(flag, 'OSM_HEALTHCHECK_KUBE_API');
  const text = given ?? inClusterUrl(process.env);
  if (text === undefined) return undefined;
  const from = sourceName(flag, '--kube-api', 'OSM_HEALTHCHECK_KUBE_API');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    if (given === undefined) {
      throw usageError(
        `env KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT make ${describeValue(text)}, no URL`,
        "the API server's host and port, as Kubernetes sets them in a pod",
      );
    }
    throw badFlagValue(from, text, 'an https:// URL');
  }
  if (url.protocol !== 'https:') {
    throw badFlagValue(from, text, 'an https:// URL');
  }
  return { url: url.origin, caFile, tokenFile };
}

async function run(argv: readonly string[]): Promise<void> {
  const { values, positionals } = parseFlags('webhook', argv, {
    ...TLS_FLAGS,
    port: { type: 'string' },
    host: { type: 'string' },
    'metrics-port': { type: 'string' },
    'admission-timeout': { type: 'string' },
    image: { type: 'string' },
    placement: { type: 'string' },
    'native-sidecar': { type: 'boolean' },
    'sidecar-containers-gate': { type: 'boolean' },
    'pod-security-default': { type: 'string' },
    'companion-cpu-limit': { type: 'string' },
    'kube-api': { type: 'string' },
    'kube-ca': { type: 'string' },
    'kube-token-file': { type: 'string' },
    'log-level': { type: 'string' },
  });
  noArguments('webhook', positionals);
  const tls = tlsChoice(values);
  const portText = flagOrEnv(values.port, 'OSM_HEALTHCHECK_WEBHOOK_PORT');
  const port =
    portText === undefined
      ? DEFAULT_PORT
      : parsePort(portText, sourceName(values.port, '--port', 'OSM_HEALTHCHECK_WEBHOOK_PORT'));
  const metricsPortText = flagOrEnv(values['metrics-port'], 'OSM_HEALTHCHECK_METRICS_PORT');
  const metricsPort =
    metricsPortText === undefined
      ? DEFAULT_METRICS_PORT
      : parsePort(
          metricsPortText,
          sourceName(values['metrics-port'], '--metrics-port', 'OSM_HEALTHCHECK_METRICS_PORT'),
        );
  const timeoutText = flagOrEnv(values['admission-timeout'], 'OSM_HEALTHCHECK_ADMISSION_TIMEOUT_SECONDS');
  const timeoutSeconds =
    timeoutText === undefined
      ? DEFAULT_TIMEOUT_SECONDS
      : admissionTimeout(
          timeoutText,
          sourceName(
            values['admission-timeout'],
            '--admission-timeout',
            'OSM_HEALTHCHECK_ADMISSION_TIMEOUT_SECONDS',
          ),
        );
  const image = flagOrEnv(values.image, 'OSM_HEALTHCHECK_IMAGE') ?? DEFAULT_IMAGE;
  imageOf(image, sourceName(values.image, '--image', 'OSM_HEALTHCHECK_IMAGE'));
  const placement = placementOf(
    flagOrEnv(values.placement, 'OSM_HEALTHCHECK_PLACEMENT'),
    flagOrEnvBoolean(values['native-sidecar'], 'OSM_HEALTHCHECK_NATIVE_SIDECAR'),
    sourceName(values.placement, '--placement', 'OSM_HEALTHCHECK_PLACEMENT'),
  );
  const sidecarGate = flagOrEnvBoolean(
    values['sidecar-containers-gate'],
    'OSM_HEALTHCHECK_SIDECAR_CONTAINERS_GATE',
  );
  // Asked whenever there is an API server (in a pod, or --kube-api): pods that must end need the version too.
  const api = kubeApi(
    values['kube-api'],
    flagOrEnv(values['kube-ca'], 'OSM_HEALTHCHECK_KUBE_CA') ?? join(SERVICE_ACCOUNT_DIR, 'ca.crt'),
    flagOrEnv(values['kube-token-file'], 'OSM_HEALTHCHECK_KUBE_TOKEN_FILE') ??
      join(SERVICE_ACCOUNT_DIR, 'token'),
  );
  const defaultText =
    flagOrEnv(values['pod-security-default'], 'OSM_HEALTHCHECK_POD_SECURITY_DEFAULT') ?? 'privileged';
  const defaultLevel = parseLevel(defaultText);
  if (defaultLevel === undefined) {
    const from = sourceName(
      values['pod-security-default'],
      '--pod-security-default',
      'OSM_HEALTHCHECK_POD_SECURITY_DEFAULT',
    );
    throw badFlagValue(from, defaultText, POD_SECURITY_LEVELS.join(', '));
  }
  const companionCpuLimit = cpuLimitOf(
    flagOrEnv(values['companion-cpu-limit'], 'OSM_HEALTHCHECK_COMPANION_CPU_LIMIT'),
    sourceName(values['companion-cpu-limit'], '--companion-cpu-limit', 'OSM_HEALTHCHECK_COMPANION_CPU_LIMIT'),
  );
  const level = flagOrEnv(values['log-level'], 'OSM_HEALTHCHECK_LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    const from = sourceName(values['log-level'], '--log-level', 'OSM_HEALTHCHECK_LOG_LEVEL');
    throw badFlagValue(from, level, LOG_LEVELS.join(', '));
  }

  const log = createLogger(level);
  const webhook = await startWebhook({
    tls: await tlsSource(tls, values, api, log),
    port,
    host: flagOrEnv(values.host, 'OSM_HEALTHCHECK_HOST'),
    image,
    placement,
    // --placement native-sidecar without an API server keeps saying, with backoff, why it is not granted.
    ...(placement === 'native-sidecar' || api !== undefined
      ? {
          clusterVersion: {
            sidecarGate,
            fetchVersion: () =>
              api === undefined
                ? Promise.reject(
                    new Error(
                      'no API server to ask: KUBERNETES_SERVICE_HOST is not set and --kube-api is not given',
                    ),
                  )
                : fetchVersion(api, VERSION_TIMEOUT_MS),
          },
        }
      : {}),
    podSecurity: { defaultLevel },
    ...(api === undefined ? {} : { kube: { api } }),
    ...(companionCpuLimit === undefined ? {} : { companionCpuLimit }),
    metrics: { port: metricsPort, timeoutSeconds, version: pkg.version },
    log,
  });
  // Kubernetes stops sending admissions once the endpoint is gone (the Deployment's preStop sleep covers the
  // delay); here in-flight admissions finish before the listener closes.
  await new Promise<void>((resolve) => {
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

export const webhookCommand: Command = {
  name: 'webhook',
  usage,
  run,
};
