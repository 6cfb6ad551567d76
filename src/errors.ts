// Every error the CLI reports on purpose, with a stable code. Only cli.ts turns them into exit codes.
// docs/error-codes.md documents each code; test/errors.test.ts keeps the two in step.

export const ERROR_CODES = {
  OSM_HC_USAGE: 'bad command-line flags or arguments',
  OSM_HC_TABLE: 'the probe table is missing, unreadable or invalid',
  OSM_HC_MANIFEST: 'a manifest given to inject is invalid',
  OSM_HC_INIT: 'the init step could not apply or remove its iptables rules',
  OSM_HC_NODE:
    "the node agent could not read its node's pod networks, apply, keep or remove its iptables rules, or listen for proofs",
  OSM_HC_LISTEN: 'a companion port could not be bound',
  OSM_HC_TLS: 'a TLS certificate or key could not be loaded',
  OSM_HC_KUBE: 'self-managed TLS: a Kubernetes API request failed or was refused, or its Secret is not ours',
  OSM_HC_CHECK: 'a probe run by check failed',
  OSM_HC_WAIT: 'the companion did not answer on /healthz within the wait timeout',
  OSM_HC_CLUSTER: 'analyze could not reach the API server, or get credentials for it',
  OSM_HC_ANALYZE: 'analyze found pods or checks that need action',
  OSM_HC_PROMETHEUS: 'analyze --probes could not ask the Prometheus of --prometheus',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class HealthcheckError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HealthcheckError';
    this.code = code;
  }
}

/**
 * A HealthcheckError by its code, not its class: each command is bundled with its own copy of this module
 * (scripts/build.mjs), so an error thrown by a command is not an instance of the class cli.ts sees.
 */
export function isHealthcheckError(err: unknown): err is HealthcheckError {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

export class UsageError extends HealthcheckError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('OSM_HC_USAGE', message, options);
    this.name = 'UsageError';
  }
}

/** An invalid probe table; `path` is the offending key path, e.g. `liveness.app.httpGet.port`. */
export class TableError extends HealthcheckError {
  readonly path: string;

  constructor(path: string, problem: string, options?: { cause?: unknown }) {
    super('OSM_HC_TABLE', path === '' ? problem : `${path}: ${problem}`, options);
    this.name = 'TableError';
    this.path = path;
  }
}

/** `got 80` / `got "http"` / `got null`: how a bad value reads in an error message. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** An error message from elsewhere, cut to at most `max` characters so the line quoting it stays one short line. */
export function briefMessage(text: string, max: number): string {
  const line = text.replaceAll(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
