// A mesh's injector ran after us (`inject` output applied into a meshed namespace) and put its own prober in
// front of the companion: kubelet -> the mesh's agent -> companion -> app, two probers in a row. The probes that
// pointed at the companion go back to it, from what the mesh recorded of them. Pure; mutates only `spec`, which
// the caller owns.
//
// Istio: app_probe.go (patchRewriteProbe) moves every probe on a port it does not exclude, ours included, to
// pilot-agent's `/app-health/<container>/livez|readyz|startupz`, recording the probe it replaced in
// istio-proxy's env ISTIO_KUBE_APP_PROBERS (DumpAppProbers).

import { isCompanionPort, PROBE_KINDS, type ProbeKind } from '../../scheme.js';
import { copyPlain } from '../plain-copy.js';
import type { Container, PodSpec, Probe } from '../types.js';

/** istio-proxy's env var of recorded probes (pilot/cmd/pilot-agent/status KubeAppProberEnvName). */
const APP_PROBERS_ENV = 'ISTIO_KUBE_APP_PROBERS';
/** status.FormatProberURL: `/app-health/<container>/readyz|livez|startupz`. */
const SUFFIX: Record<ProbeKind, string> = { liveness: 'livez', readiness: 'readyz', startup: 'startupz' };

type Recorded = Record<string, Pick<Probe, 'httpGet' | 'tcpSocket' | 'grpc' | 'timeoutSeconds'>>;

function recordedProbes(containers: readonly Container[]): Recorded | undefined {
  const proxy = containers.find((c) => c.name === 'istio-proxy');
  const value = proxy?.env?.find((e) => e?.name === APP_PROBERS_ENV)?.value;
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Recorded) : undefined;
  } catch {
    return undefined;
  }
}

function recordedPort(recorded: Recorded[string]): number | undefined {
  const port = recorded.httpGet?.port ?? recorded.tcpSocket?.port ?? recorded.grpc?.port;
  return typeof port === 'number' ? port : undefined;
}

/**
 * Puts back every probe Istio moved that pointed at the companion (15901-15904), in place; returns the names of
 * the containers whose probes came back. Probes Istio moved from the app itself stay with pilot-agent.
 */
export function restoreFromIstio(spec: PodSpec): string[] {
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  const recorded = recordedProbes(containers);
  if (recorded === undefined) return [];
  const restored: string[] = [];
  for (const container of containers) {
    if (container.name === 'istio-proxy') continue;
    for (const kind of PROBE_KINDS) {
      const field = `${kind}Probe` as const;
      const probe = container[field];
      const path = `/app-health/${container.name}/${SUFFIX[kind]}`;
      if (probe?.httpGet?.path !== path) continue;
      const original = recorded[path];
      const port = original === undefined ? undefined : recordedPort(original);
      if (original === undefined || port === undefined || !isCompanionPort(port)) continue;
      const { httpGet: _moved, ...rest } = probe;
      const handler = original.httpGet ?? original.tcpSocket ?? original.grpc;
      const key = original.httpGet ? 'httpGet' : original.tcpSocket ? 'tcpSocket' : 'grpc';
      container[field] = { ...rest, [key]: copyPlain(handler) } as Probe;
      if (!restored.includes(String(container.name))) restored.push(String(container.name));
    }
  }
  return restored;
}

/**
 * Kuma: its injector (pkg/plugins/runtime/k8s/webhooks/injector, overrideHTTPProbes; probes.KumaProbe.ToVirtual)
 * moves httpGet probes to its probe proxy port as `/<port><path>`: the original port and path are in the path.
 * Returns the names of the containers whose probes came back.
 */
export function restoreFromKuma(spec: PodSpec, proxyPort: number): string[] {
  const restored: string[] = [];
  for (const container of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    if (container.name === 'kuma-sidecar') continue;
    for (const kind of PROBE_KINDS) {
      const field = `${kind}Probe` as const;
      const get = container[field]?.httpGet;
      if (get === undefined || Number(get.port) !== proxyPort) continue;
      const match = /^\/(\d+)(\/.*)?$/.exec(String(get.path ?? ''));
      const port = Number(match?.[1]);
      if (match === null || !isCompanionPort(port)) continue;
      container[field] = { ...container[field], httpGet: { ...get, port, path: match[2] ?? '/' } };
      if (!restored.includes(String(container.name))) restored.push(String(container.name));
    }
  }
  return restored;
}
