// Which mesh injected a pod, which of its containers are the mesh's, and which app probes the mesh's own prober
// answers: read from what each injector writes (cited per mesh below). Pure, table-tested
// (test/rewrite/mesh-recognise.test.ts).

import { parse } from 'yaml';
import {
  HEALTHCHECK_PATH,
  HTTP_PATH_HEADER,
  HTTP_PORT_HEADER,
  isCompanionPort,
  TCP_PORT_HEADER,
} from '../../scheme.js';
import { listExcludes, type Mesh } from '../mesh-exclusion.js';
import { originalTarget } from '../original-target.js';
import type { Container, PodSpec, Probe } from '../types.js';

export type InjectingMesh = 'osm' | 'istio' | 'linkerd' | 'kuma' | 'consul';

export interface MeshPod {
  mesh: InjectingMesh;
  /** As a user knows it: `Istio`, `osm-edge or OSM`. */
  title: string;
  /** Containers the mesh added (proxy, init steps, OSM's healthcheck container): their probes are the mesh's. */
  containers: ReadonlySet<string>;
  /** Where the mesh's own prober answers this app probe (`pilot-agent on 15020`), else undefined. */
  prober(probe: Probe): string | undefined;
  /** The pod annotation that, set before the mesh injects, makes it leave app probes to the pod (ours). */
  setting: string;
  /**
   * The mesh's interception, as set up for this pod, leaves these inbound ports alone: what its init step was
   * given (written at injection), or, where its CNI plugin reads the pod's annotation at creation, that.
   */
  leavesPorts(ports: readonly number[]): boolean;
  /** The --mesh-exclusion name whose annotation still takes effect on this pod (its CNI reads it), if any. */
  annotationReadNow?: Mesh;
  /** Kuma's probe proxy port, 0 when off. */
  probePort?: number;
}

type Annotations = Readonly<Record<string, string>> | undefined;

/** Every container of both lists. */
function allContainers(spec: PodSpec): Container[] {
  const list = (value: unknown) => (Array.isArray(value) ? (value as Container[]) : []);
  return [...list(spec.initContainers), ...list(spec.containers)].filter(
    (c) => typeof c === 'object' && c !== null,
  );
}

function named(spec: PodSpec, name: string): Container | undefined {
  return allContainers(spec).find((c) => c.name === name);
}

/** The value following `flag` in a container's args (istio-iptables `-d X`, linkerd proxy-init `--flag X`). */
function argAfter(container: Container | undefined, flag: string): string | undefined {
  const args = Array.isArray(container?.args) ? (container?.args as unknown[]) : [];
  const at = args.indexOf(flag);
  const value = at < 0 ? undefined : args[at + 1];
  return typeof value === 'string' ? value : undefined;
}

export function httpPort(probe: Probe): number | undefined {
  const port = probe.httpGet?.port;
  return typeof port === 'number'
    ? port
    : typeof port === 'string' && /^\d+$/.test(port)
      ? Number(port)
      : undefined;
}

/**
 * Istio (istio/istio pkg/kube/inject): the `sidecar.istio.io/status` annotation and an `istio-proxy` container.
 * app_probe.go moves app probes to pilot-agent's status port (`status.sidecar.istio.io/port`, default 15020),
 * `/app-health/<container>/livez|readyz|startupz`, unless `sidecar.istio.io/rewriteAppHTTPProbers: "false"`.
 * istio-init gets the excluded inbound ports as `-d` (inject.go, istio-iptables); with istio-cni
 * (`istio-validation`) the CNI plugin reads `traffic.sidecar.istio.io/excludeInboundPorts` when the pod starts.
 */
function istio(spec: PodSpec, annotations: Annotations): MeshPod | undefined {
  if (named(spec, 'istio-proxy') === undefined && annotations?.['sidecar.istio.io/status'] === undefined) {
    return undefined;
  }
  const statusPort = Number(annotations?.['status.sidecar.istio.io/port'] ?? 15020);
  const init = named(spec, 'istio-init');
  const cni = init === undefined;
  const annotation = 'traffic.sidecar.istio.io/excludeInboundPorts';
  return {
    mesh: 'istio',
    title: 'Istio',
    containers: new Set(['istio-proxy', 'istio-init', 'istio-validation']),
    prober: (probe) =>
      httpPort(probe) === statusPort && String(probe.httpGet?.path ?? '').startsWith('/app-health/')
        ? `Istio's pilot-agent (${probe.httpGet?.path} on ${statusPort})`
        : undefined,
    setting: 'sidecar.istio.io/rewriteAppHTTPProbers: "false"',
    leavesPorts: (ports) =>
      cni
        ? listExcludes('istio', annotations?.[annotation], ports)
        : listExcludes('istio', argAfter(init, '-d'), ports),
    ...(cni ? { annotationReadNow: 'istio' as const } : {}),
  };
}

/**
 * Linkerd (linkerd/linkerd2 pkg/inject, charts/partials): a `linkerd-proxy` container; no probe rewrite, app
 * probes pass through the proxy. linkerd-init gets `--inbound-ports-to-ignore` (from
 * `config.linkerd.io/skip-inbound-ports`); with linkerd-cni (`linkerd-network-validator`) the plugin reads it.
 */
function linkerd(spec: PodSpec, annotations: Annotations): MeshPod | undefined {
  if (named(spec, 'linkerd-proxy') === undefined) return undefined;
  const init = named(spec, 'linkerd-init');
  const cni = init === undefined;
  return {
    mesh: 'linkerd',
    title: 'Linkerd',
    containers: new Set(['linkerd-proxy', 'linkerd-init', 'linkerd-network-validator', 'linkerd-debug']),
    prober: () => undefined,
    setting: '',
    leavesPorts: (ports) =>
      cni
        ? listExcludes('linkerd', annotations?.['config.linkerd.io/skip-inbound-ports'], ports)
        : listExcludes('linkerd', argAfter(init, '--inbound-ports-to-ignore'), ports),
    ...(cni ? { annotationReadNow: 'linkerd' as const } : {}),
  };
}

/**
 * Kuma (kumahq/kuma pkg/plugins/runtime/k8s/webhooks/injector): `kuma.io/sidecar-injected: "true"` and a
 * `kuma-sidecar` container. Its application probe proxy (`kuma.io/application-probe-proxy-port`, 9000 or 9001;
 * "0" off; older releases `kuma.io/virtual-probes-port`) answers `/<port>/<path>`. The inbound ports kuma-init
 * leaves alone are written into `traffic.kuma.io/transparent-proxy-config` (redirect.inbound.excludePorts) at
 * injection; without kuma-init, its CNI reads `traffic.kuma.io/exclude-inbound-ports` as the pod starts.
 */
function kuma(spec: PodSpec, annotations: Annotations): MeshPod | undefined {
  if (named(spec, 'kuma-sidecar') === undefined && annotations?.['kuma.io/sidecar-injected'] !== 'true') {
    return undefined;
  }
  const proxyPort = Number(
    annotations?.['kuma.io/application-probe-proxy-port'] ??
      (annotations?.['kuma.io/virtual-probes'] === 'enabled'
        ? annotations?.['kuma.io/virtual-probes-port']
        : 0) ??
      0,
  );
  const cni = named(spec, 'kuma-init') === undefined;
  const recorded = kumaExcluded(annotations?.['traffic.kuma.io/transparent-proxy-config']);
  return {
    mesh: 'kuma',
    title: 'Kuma',
    containers: new Set(['kuma-sidecar', 'kuma-init', 'kuma-validation']),
    prober: (probe) =>
      proxyPort > 0 && httpPort(probe) === proxyPort
        ? `Kuma's application probe proxy (${probe.httpGet?.path} on ${proxyPort})`
        : undefined,
    setting: 'kuma.io/application-probe-proxy-port: "0"',
    probePort: proxyPort,
    leavesPorts: (ports) =>
      ports.every((p) => recorded.includes(p)) ||
      (cni && listExcludes('kuma', annotations?.['traffic.kuma.io/exclude-inbound-ports'], ports)),
    ...(cni ? { annotationReadNow: 'kuma' as const } : {}),
  };
}

function kumaExcluded(config: string | undefined): number[] {
  if (config === undefined) return [];
  try {
    const ports = (parse(config) as { redirect?: { inbound?: { excludePorts?: unknown } } })?.redirect
      ?.inbound?.excludePorts;
    return Array.isArray(ports) ? ports.filter((p): p is number => typeof p === 'number') : [];
  } catch {
    return [];
  }
}

/**
 * Consul (hashicorp/consul-k8s control-plane/connect-inject/webhook): `consul.hashicorp.com/connect-inject-status:
 * injected`. With transparent proxy, mesh_webhook.go overwriteProbes moves httpGet probes to Envoy's expose-path
 * listeners, 20300+ (liveness), 20400+ (readiness), 20500+ (startup); tcpSocket probes stay and meet Envoy's
 * inbound listener. The ports connect-init leaves alone are in `consul.hashicorp.com/redirect-traffic-config`.
 */
function consul(spec: PodSpec, annotations: Annotations): MeshPod | undefined {
  if (
    annotations?.['consul.hashicorp.com/connect-inject-status'] !== 'injected' &&
    named(spec, 'consul-dataplane') === undefined
  ) {
    return undefined;
  }
  const excluded = consulExcluded(annotations?.['consul.hashicorp.com/redirect-traffic-config']);
  return {
    mesh: 'consul',
    title: 'Consul',
    containers: new Set([
      'consul-dataplane',
      'consul-connect-inject-init',
      'envoy-sidecar',
      'consul-sidecar',
      'consul-connect-lifecycle-sidecar',
    ]),
    prober: (probe) => {
      const port = httpPort(probe);
      return port !== undefined && port >= 20300 && port < 20600
        ? `Consul's Envoy expose path (${probe.httpGet?.path ?? '/'} on ${port})`
        : undefined;
    },
    setting: 'consul.hashicorp.com/transparent-proxy-overwrite-probes: "false"',
    leavesPorts: (ports) => ports.every((p) => excluded.includes(p)),
  };
}

function consulExcluded(config: string | undefined): number[] {
  if (config === undefined) return [];
  try {
    const ports = (JSON.parse(config) as { ExcludeInboundPorts?: unknown }).ExcludeInboundPorts;
    return Array.isArray(ports) ? ports.map(Number).filter(Number.isInteger) : [];
  } catch {
    return [];
  }
}

/** OSM's and osm-edge's healthcheck container (osm-edge pkg/injector/healthcheck.go getHealthcheckContainerSpec). */
export function isOsmHealthcheckContainer(container: Container): boolean {
  const command = container.command;
  return Array.isArray(command) && command[0] === '/osm-healthcheck';
}

/** A probe as OSM's health_probes.go writes it: `/osm-healthcheck` on 15901-15904 with Original-* headers. */
export function isOsmProbe(probe: Probe | undefined): boolean {
  const get = probe?.httpGet;
  const port = get === undefined ? undefined : httpPort(probe as Probe);
  if (get === undefined || port === undefined || !isCompanionPort(port) || get.path !== HEALTHCHECK_PATH)
    return false;
  const names = (get.httpHeaders ?? []).map((h) => String(h?.name ?? '').toLowerCase());
  return [HTTP_PORT_HEADER, HTTP_PATH_HEADER, TCP_PORT_HEADER].some((h) => names.includes(h.toLowerCase()));
}

/** osm-edge's Pipy container and OSM's Envoy container. */
const OSM_PROXIES = ['sidecar', 'envoy'];

/** osm-edge's Pipy or OSM's Envoy, by the name their injector gives it. */
export function isOsmProxy(container: Container): boolean {
  return OSM_PROXIES.includes(String(container.name));
}

export function declaresCompanionPort(container: Container): boolean {
  const ports = Array.isArray(container.ports) ? container.ports : [];
  return ports.some((p) => typeof p?.containerPort === 'number' && isCompanionPort(p.containerPort));
}

/**
 * OSM and osm-edge (flomesh-io/osm-edge pkg/injector): its `osm-init` init container, its healthcheck container,
 * or, where neither is in the manifest, its probe rewrite (health_probes.go) on a pod that is not ours. Its
 * sidecar (Envoy, Pipy) listens on 15901-15903 itself and its healthcheck container on 15904: the companion's
 * ports, so the companion never joins such a pod.
 */
function osm(spec: PodSpec, ours: boolean): MeshPod | undefined {
  const containers = allContainers(spec);
  const probes = containers.flatMap((c) => [c.livenessProbe, c.readinessProbe, c.startupProbe]);
  const found =
    named(spec, 'osm-init') !== undefined ||
    containers.some(isOsmHealthcheckContainer) ||
    // Its proxy declares its probe listeners (pipy_container.go, envoy_container.go), also with its CNI.
    containers.some((c) => isOsmProxy(c) && declaresCompanionPort(c)) ||
    // Its injector wrapped probes that pointed at our companion: it ran after us.
    probes.some((p) => p?.httpGet !== undefined && originalTarget(p.httpGet).found === 'wrapped') ||
    (!ours && probes.some((p) => isOsmProbe(p)));
  if (!found) return undefined;
  const mesh = new Set(['osm-init', ...OSM_PROXIES]);
  for (const c of containers)
    if (isOsmHealthcheckContainer(c) && typeof c.name === 'string') mesh.add(c.name);
  return {
    mesh: 'osm',
    title: 'osm-edge (or OSM)',
    containers: mesh,
    prober: (probe) =>
      isOsmProbe(probe) ? `osm-edge's sidecar (${HEALTHCHECK_PATH} on ${httpPort(probe)})` : undefined,
    setting: '',
    // osm-init RETURNs 15901-15904 (osm-edge pkg/injector/iptables.go): its own listeners are there.
    leavesPorts: () => true,
  };
}

/** The mesh that injected this pod, or undefined. `ours`: the pod has a companion inject made. */
export function recogniseMesh(spec: PodSpec, annotations: Annotations, ours: boolean): MeshPod | undefined {
  return (
    osm(spec, ours) ??
    istio(spec, annotations) ??
    linkerd(spec, annotations) ??
    kuma(spec, annotations) ??
    consul(spec, annotations)
  );
}
