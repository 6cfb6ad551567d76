// What the deployed webhook injects with, read from its Deployment's container (args and env, the flag over the
// variable as the webhook itself reads them: src/commands/webhook.ts), so analyze asks the rewrite exactly what
// the running webhook would decide: the image, the placement, the Pod Security default, the CPU limit, the gate.

import { DEFAULT_IMAGE } from '../rewrite/companion.js';
import { type PlacementMode, parsePlacementMode } from '../rewrite/placement.js';
import { type PodSecurityLevel, parseLevel } from '../rewrite/pod-security.js';
import { asList, asObject } from './json.js';
import type { Json } from './kube-client.js';

export interface WebhookSettings {
  image: string;
  placement: PlacementMode;
  podSecurityDefault: PodSecurityLevel;
  companionCpuLimit: string | undefined;
  sidecarGate: boolean;
  /** Each flag or variable that could not be read, and what was assumed instead. */
  problems: string[];
}

/** `--name value` or `--name=value` in args; `true` for a flag given alone. */
function flagValue(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === `--${name}`) {
      const next = args[i + 1];
      return next === undefined || next.startsWith('--') ? 'true' : next;
    }
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

/** The webhook's container in its Deployment: the one running `webhook`. */
export function webhookContainer(deployment: Json): Json | undefined {
  const spec = asObject(asObject(asObject(deployment.spec).template).spec);
  return asList(spec.containers).find((c) => Array.isArray(c.args) && c.args[0] === 'webhook');
}

export function webhookSettings(deployment: Json): WebhookSettings {
  const container = webhookContainer(deployment) ?? {};
  const args = Array.isArray(container.args) ? container.args.map(String) : [];
  const env = new Map(
    asList(container.env).flatMap((e) =>
      typeof e.name === 'string' && typeof e.value === 'string' ? [[e.name, e.value]] : [],
    ),
  );
  const read = (flag: string, variable: string) => flagValue(args, flag) ?? env.get(variable);
  const problems: string[] = [];
  const placementText = read('placement', 'OSM_HEALTHCHECK_PLACEMENT');
  const nativeAlias = read('native-sidecar', 'OSM_HEALTHCHECK_NATIVE_SIDECAR');
  let placement: PlacementMode = 'auto';
  if (placementText !== undefined) {
    const parsed = parsePlacementMode(placementText);
    if (parsed === undefined)
      problems.push(`--placement ${JSON.stringify(placementText)} is no mode; auto assumed`);
    else placement = parsed;
  } else if (nativeAlias === 'true' || nativeAlias === '1') {
    placement = 'native-sidecar';
  }
  const levelText = read('pod-security-default', 'OSM_HEALTHCHECK_POD_SECURITY_DEFAULT') ?? 'privileged';
  const level = parseLevel(levelText);
  if (level === undefined)
    problems.push(`--pod-security-default ${JSON.stringify(levelText)} is no level; privileged assumed`);
  const gate = read('sidecar-containers-gate', 'OSM_HEALTHCHECK_SIDECAR_CONTAINERS_GATE');
  return {
    image:
      read('image', 'OSM_HEALTHCHECK_IMAGE') ??
      (typeof container.image === 'string' ? container.image : DEFAULT_IMAGE),
    placement,
    podSecurityDefault: level ?? 'privileged',
    companionCpuLimit: read('companion-cpu-limit', 'OSM_HEALTHCHECK_COMPANION_CPU_LIMIT'),
    sidecarGate: gate === 'true' || gate === '1',
    problems,
  };
}
