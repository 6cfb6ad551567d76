// A pod template's probes as the rules judge them: per app container and kind, the original check (from the
// companion's probe table where the webhook rewrote it, else the container's own probe) and kubelet's timing
// fields (from the probe kubelet runs: the rewrite keeps them). Pure.

import { COMPANION_NAME } from '../../rewrite/companion.js';
import { PROBE_KINDS, PROBES_ENV, type ProbeKind } from '../../scheme.js';
import { describeHandler } from '../../table/describe.js';
import { parseProbeTableJson } from '../../table/parse.js';
import type { ProbeEntryDocument, ProbeTable } from '../../table/types.js';
import { asList, asObject, type Json } from '../json.js';

/** Kubelet's timing of a probe, defaults filled in as the API server fills them. */
export interface Timing {
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
}

/** One probe of one container. */
export interface ContainerProbe {
  kind: ProbeKind;
  /** The check it makes, in a short phrase (`HTTP :8080/healthz`, `exec cat /tmp/ok`): equal text, same check. */
  check: string;
  handler: 'httpGet' | 'tcpSocket' | 'grpc' | 'exec';
  /** The original handler, as a probe field holds it: what a fix that adds a probe copies. */
  action: Json;
  timing: Timing;
}

export interface ContainerProbes {
  container: string;
  list: 'containers' | 'initContainers';
  probes: Partial<Record<ProbeKind, ContainerProbe>>;
}

export interface PodProbes {
  /** The pod carries the companion (its table was read). */
  companion: boolean;
  containers: ContainerProbes[];
}

/** The API server's defaults (k8s.io/api core/v1 Probe). */
const DEFAULTS: Timing = {
  initialDelaySeconds: 0,
  periodSeconds: 10,
  timeoutSeconds: 1,
  failureThreshold: 3,
};

const whole = (value: unknown, fallback: number) =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;

function timing(probe: Json): Timing {
  return {
    initialDelaySeconds: whole(probe.initialDelaySeconds, DEFAULTS.initialDelaySeconds),
    periodSeconds: whole(probe.periodSeconds, DEFAULTS.periodSeconds),
    timeoutSeconds: whole(probe.timeoutSeconds, DEFAULTS.timeoutSeconds),
    failureThreshold: whole(probe.failureThreshold, DEFAULTS.failureThreshold),
  };
}

/** The table's entry of a rewritten probe, as the probe field held it before the rewrite. */
function tableAction(table: ProbeTable, kind: ProbeKind, container: string): ContainerProbe | undefined {
  const entry = table[kind].get(container);
  if (entry === undefined) return undefined;
  const h = entry.handler;
  const action: ProbeEntryDocument =
    h.type === 'httpGet'
      ? {
          httpGet: {
            path: h.path,
            port: h.port,
            ...(h.scheme === 'HTTPS' ? { scheme: h.scheme } : {}),
            ...(h.httpHeaders.length > 0 ? { httpHeaders: [...h.httpHeaders] } : {}),
          },
        }
      : h.type === 'tcpSocket'
        ? { tcpSocket: { port: h.port } }
        : { grpc: { port: h.port, ...(h.service === '' ? {} : { service: h.service }) } };
  return {
    kind,
    check: describeHandler(h),
    handler: h.type,
    action: action as Json,
    timing: { ...DEFAULTS, timeoutSeconds: entry.timeoutSeconds },
  };
}

/** A probe field as the container holds it (not rewritten: no companion, or exec, or left alone). */
function ownProbe(kind: ProbeKind, probe: Json): ContainerProbe | undefined {
  for (const handler of ['httpGet', 'tcpSocket', 'grpc', 'exec'] as const) {
    const action = asObject(probe[handler]);
    if (probe[handler] === undefined) continue;
    const check =
      handler === 'exec'
        ? `exec ${Array.isArray(action.command) ? action.command.join(' ') : ''}`
        : handler === 'httpGet'
          ? `${action.scheme === 'HTTPS' ? 'HTTPS' : 'HTTP'} :${String(action.port)}${typeof action.path === 'string' ? action.path : '/'}`
          : handler === 'tcpSocket'
            ? `tcp :${String(action.port)}`
            : `grpc :${String(action.port)} service=${JSON.stringify(action.service ?? '')}`;
    return { kind, check: check.trimEnd(), handler, action: { [handler]: action }, timing: timing(probe) };
  }
  return undefined;
}

/** The companion's table, or undefined where the pod has none (or one analyze cannot read: judged as it stands). */
function companionTable(spec: Json): ProbeTable | undefined {
  const all = [...asList(spec.initContainers), ...asList(spec.containers)];
  const companion = all.find((c) => c.name === COMPANION_NAME);
  const env = asList(companion?.env).find((e) => e.name === PROBES_ENV);
  if (typeof env?.value !== 'string') return undefined;
  try {
    return parseProbeTableJson(env.value, PROBES_ENV);
  } catch {
    return undefined;
  }
}

/** Every app container's probes in a pod spec (a pod's, or a template's). */
export function podProbes(spec: Json): PodProbes {
  const table = companionTable(spec);
  const containers: ContainerProbes[] = [];
  for (const list of ['initContainers', 'containers'] as const) {
    for (const c of asList(spec[list])) {
      const name = typeof c.name === 'string' ? c.name : '';
      if (name === COMPANION_NAME || name === '') continue;
      const probes: ContainerProbes['probes'] = {};
      for (const kind of PROBE_KINDS) {
        const field = asObject(c[`${kind}Probe`]);
        if (c[`${kind}Probe`] === undefined) continue;
        const original = table === undefined ? undefined : tableAction(table, kind, name);
        const found =
          original === undefined
            ? ownProbe(kind, field)
            : { ...original, timing: { ...timing(field), timeoutSeconds: original.timing.timeoutSeconds } };
        if (found !== undefined) probes[kind] = found;
      }
      if (Object.keys(probes).length > 0) containers.push({ container: name, list, probes });
    }
  }
  return { companion: table !== undefined, containers };
}
