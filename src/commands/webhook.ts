// `osm-healthcheck webhook`: flags -> the mutating admission webhook (src/webhook), until SIGTERM or SIGINT.

import { describeValue, UsageError } from '../errors.js';
import { createLogger, LOG_LEVELS } from '../log.js';
import { DEFAULT_IMAGE } from '../rewrite/companion.js';
import { MUTATE_PATH } from '../webhook/app.js';
import { startWebhook } from '../webhook/server.js';
import { type Command, flagOrEnv, parseFlags } from './command.js';

const DEFAULT_PORT = 9443;

const usage = `Usage: osm-healthcheck webhook --tls-cert FILE --tls-key FILE [flags]

Serves a mutating admission webhook on HTTPS: POST ${MUTATE_PATH} takes an admission.k8s.io/v1 AdmissionReview
for a Pod and answers with the JSON patch that makes of it exactly what \`inject\` would. /healthz and /readyz
for kubelet. The certificate files are reloaded when they change (cert-manager rotation).

Flags (each also read from the environment variable shown; flags win):
  --tls-cert FILE      PEM certificate (chain)     (OSM_HEALTHCHECK_TLS_CERT)
  --tls-key FILE       PEM private key             (OSM_HEALTHCHECK_TLS_KEY)
  --port PORT          HTTPS port                  (OSM_HEALTHCHECK_WEBHOOK_PORT; default ${DEFAULT_PORT})
  --host ADDRESS       bind address                (OSM_HEALTHCHECK_HOST; default :: and 0.0.0.0)
  --image IMAGE        image of the companion and init container
                       (OSM_HEALTHCHECK_IMAGE; default ${DEFAULT_IMAGE})
  --native-sidecar     run the companion as a native sidecar (OSM_HEALTHCHECK_NATIVE_SIDECAR=true)
  --log-level LEVEL    ${LOG_LEVELS.join('|')} (OSM_HEALTHCHECK_LOG_LEVEL; default info)
  --help, --version`;

function required(value: string | undefined, flag: string, env: string): string {
  if (value === undefined) throw new UsageError(`webhook needs ${flag} FILE (or env ${env})`);
  return value;
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) {
    throw new UsageError(`--port must be a port 0-65535, got ${describeValue(text)}`);
  }
  return port;
}

function parseBoolean(text: string, name: string): boolean {
  const value = text.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new UsageError(`env ${name} must be true or false, got ${describeValue(text)}`);
}

async function run(argv: readonly string[]): Promise<void> {
  const { values, positionals } = parseFlags('webhook', argv, {
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    image: { type: 'string' },
    'native-sidecar': { type: 'boolean' },
    'log-level': { type: 'string' },
  });
  if (positionals.length > 0) {
    throw new UsageError(`webhook takes no arguments, got ${describeValue(positionals[0])}`);
  }
  const certFile = required(
    flagOrEnv(values['tls-cert'], 'OSM_HEALTHCHECK_TLS_CERT'),
    '--tls-cert',
    'OSM_HEALTHCHECK_TLS_CERT',
  );
  const keyFile = required(
    flagOrEnv(values['tls-key'], 'OSM_HEALTHCHECK_TLS_KEY'),
    '--tls-key',
    'OSM_HEALTHCHECK_TLS_KEY',
  );
  const portText = flagOrEnv(values.port, 'OSM_HEALTHCHECK_WEBHOOK_PORT');
  const port = portText === undefined ? DEFAULT_PORT : parsePort(portText);
  const image = flagOrEnv(values.image, 'OSM_HEALTHCHECK_IMAGE') ?? DEFAULT_IMAGE;
  if (/\s/.test(image)) {
    throw new UsageError(`--image must be an image reference without spaces, got ${describeValue(image)}`);
  }
  const nativeEnv = flagOrEnv(undefined, 'OSM_HEALTHCHECK_NATIVE_SIDECAR');
  const nativeSidecar =
    values['native-sidecar'] ??
    (nativeEnv === undefined ? false : parseBoolean(nativeEnv, 'OSM_HEALTHCHECK_NATIVE_SIDECAR'));
  const level = flagOrEnv(values['log-level'], 'OSM_HEALTHCHECK_LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got ${describeValue(level)}`);
  }

  const log = createLogger(level);
  const webhook = await startWebhook({
    certFile,
    keyFile,
    port,
    host: flagOrEnv(values.host, 'OSM_HEALTHCHECK_HOST'),
    rewrite: { image, nativeSidecar },
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
