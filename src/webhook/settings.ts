// The webhook's flags and their environment variables as one table, and the one reader of them: `osm-healthcheck
// webhook` reads its argv and process.env with it, analyze the args and env of the webhook's Deployment, so what
// analyze expects of an admission is what the webhook decides, by construction (`0.5` is `500m` for both).

import { cpuLimitOf, imageOf, placementOf, sealOf } from '../companion-flags.js';
import { UsageError } from '../errors.js';
import { badFlagValue, noArguments, parseBoolean, parseFlags } from '../flags.js';
import { type GivenText, KUBE_API_ENV } from '../kube-api-choice.js';
import { DEFAULT_IMAGE } from '../rewrite/companion.js';
import type { PlacementMode } from '../rewrite/placement.js';
import { POD_SECURITY_LEVELS, type PodSecurityLevel, parseLevel } from '../rewrite/pod-security.js';
import type { SealMode } from '../seal/setting.js';

/** Every flag of `webhook`, with the variable read when the flag is not given (flags win). */
export const WEBHOOK_FLAGS = {
  'tls-cert': { type: 'string', env: 'OSM_HEALTHCHECK_TLS_CERT' },
  'tls-key': { type: 'string', env: 'OSM_HEALTHCHECK_TLS_KEY' },
  namespace: { type: 'string', env: 'OSM_HEALTHCHECK_NAMESPACE' },
  service: { type: 'string', env: 'OSM_HEALTHCHECK_WEBHOOK_SERVICE' },
  'tls-secret': { type: 'string', env: 'OSM_HEALTHCHECK_TLS_SECRET' },
  'webhook-config': { type: 'string', env: 'OSM_HEALTHCHECK_WEBHOOK_CONFIG' },
  'tls-resync': { type: 'string', env: 'OSM_HEALTHCHECK_TLS_RESYNC_SECONDS' },
  port: { type: 'string', env: 'OSM_HEALTHCHECK_WEBHOOK_PORT' },
  host: { type: 'string', env: 'OSM_HEALTHCHECK_HOST' },
  'metrics-port': { type: 'string', env: 'OSM_HEALTHCHECK_METRICS_PORT' },
  'admission-timeout': { type: 'string', env: 'OSM_HEALTHCHECK_ADMISSION_TIMEOUT_SECONDS' },
  image: { type: 'string', env: 'OSM_HEALTHCHECK_IMAGE' },
  placement: { type: 'string', env: 'OSM_HEALTHCHECK_PLACEMENT' },
  'native-sidecar': { type: 'boolean', env: 'OSM_HEALTHCHECK_NATIVE_SIDECAR' },
  'sidecar-containers-gate': { type: 'boolean', env: 'OSM_HEALTHCHECK_SIDECAR_CONTAINERS_GATE' },
  'pod-security-default': { type: 'string', env: 'OSM_HEALTHCHECK_POD_SECURITY_DEFAULT' },
  'companion-cpu-limit': { type: 'string', env: 'OSM_HEALTHCHECK_COMPANION_CPU_LIMIT' },
  seal: { type: 'string', env: 'OSM_HEALTHCHECK_SEAL' },
  'kube-api': { type: 'string', env: KUBE_API_ENV['kube-api'] },
  'kube-ca': { type: 'string', env: KUBE_API_ENV['kube-ca'] },
  'kube-token-file': { type: 'string', env: KUBE_API_ENV['kube-token-file'] },
  'log-level': { type: 'string', env: 'OSM_HEALTHCHECK_LOG_LEVEL' },
} as const;

export type WebhookFlag = keyof typeof WEBHOOK_FLAGS;

/** The names self-managed TLS keeps by default. */
export const TLS_DEFAULTS = {
  service: 'osm-healthcheck-webhook',
  secret: 'osm-healthcheck-webhook-tls',
  webhookConfig: 'osm-healthcheck',
  resyncSeconds: 30,
} as const;

/** A flag's text as given, and how a usage error names where it came from: `--port` or `env NAME`. */
export type Given = GivenText;

/** The webhook's argv and environment, read: each flag's value, the flag over its variable. */
export type WebhookArgs = (flag: WebhookFlag) => Given | undefined;

export type Environment = Readonly<Record<string, string | undefined>>;

/** Reads `argv` (no subcommand) and `env` with the table; a flag the table lacks is a usage error. */
export function webhookArgs(argv: readonly string[], env: Environment): WebhookArgs {
  const { values, positionals } = parseFlags('webhook', argv, { ...WEBHOOK_FLAGS });
  noArguments('webhook', positionals);
  return (flag) => {
    const value = values[flag];
    if (value !== undefined) return { text: String(value), from: `--${flag}` };
    const { env: name, type } = WEBHOOK_FLAGS[flag];
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    const from = `env ${name}`;
    // A boolean's variable is read here, so a bad one is refused where it is read, as a flag's value is.
    return type === 'boolean' ? { text: String(parseBoolean(text, from)), from } : { text, from };
  };
}

/** What the webhook adds to a pod with: every setting the rewrite's options take from its flags. */
export interface CompanionSettings {
  image: string;
  placement: PlacementMode;
  /** 1.28's SidecarContainers feature gate is on (the API server cannot be asked for its gates). */
  sidecarGate: boolean;
  /** The Pod Security level of namespaces without the enforce label. */
  podSecurityDefault: PodSecurityLevel;
  /** A canonical CPU quantity (`0.5` -> `500m`), or undefined for none. */
  companionCpuLimit: string | undefined;
  /** `node`: pods prove and take the seal where the node agent runs (rewrite/seal.ts). */
  seal: SealMode;
}

const isTrue = (given: Given | undefined) => given?.text === 'true';

/** Each setting: how it is read, and what stands for it when it cannot be (`lenient`, analyze's reading). */
const COMPANION_READERS: {
  [K in keyof CompanionSettings]: {
    read: (args: WebhookArgs) => CompanionSettings[K];
    assumed: CompanionSettings[K];
  };
} = {
  image: {
    read: (args) => {
      const given = args('image');
      return given === undefined ? DEFAULT_IMAGE : imageOf(given.text, given.from);
    },
    assumed: DEFAULT_IMAGE,
  },
  placement: {
    read: (args) => {
      const given = args('placement');
      return placementOf(given?.text, isTrue(args('native-sidecar')), given?.from);
    },
    assumed: 'auto',
  },
  sidecarGate: { read: (args) => isTrue(args('sidecar-containers-gate')), assumed: false },
  podSecurityDefault: {
    read: (args) => {
      const given = args('pod-security-default');
      if (given === undefined) return 'privileged';
      const level = parseLevel(given.text);
      if (level === undefined) throw badFlagValue(given.from, given.text, POD_SECURITY_LEVELS.join(', '));
      return level;
    },
    assumed: 'privileged',
  },
  companionCpuLimit: {
    read: (args) => {
      const given = args('companion-cpu-limit');
      return cpuLimitOf(given?.text, given?.from);
    },
    assumed: undefined,
  },
  seal: {
    read: (args) => {
      const given = args('seal');
      return sealOf(given?.text, given?.from);
    },
    assumed: 'off',
  },
};

/**
 * The companion's settings from the webhook's flags. A bad value is a usage error; with `problems` (analyze reading
 * a Deployment it cannot refuse) it is said there instead, and the default stands for it.
 */
export function companionSettings(args: WebhookArgs, problems?: string[]): CompanionSettings {
  const read = <K extends keyof CompanionSettings>(key: K): CompanionSettings[K] => {
    const reader = COMPANION_READERS[key];
    if (problems === undefined) return reader.read(args);
    try {
      return reader.read(args);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      problems.push(`${err.message}; ${String(reader.assumed ?? 'none')} assumed`);
      return reader.assumed;
    }
  };
  return {
    image: read('image'),
    placement: read('placement'),
    sidecarGate: read('sidecarGate'),
    podSecurityDefault: read('podSecurityDefault'),
    companionCpuLimit: read('companionCpuLimit'),
    seal: read('seal'),
  };
}
