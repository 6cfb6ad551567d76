// What rewritePodSpec does with a pod a mesh injected, beyond leaving the mesh's containers alone: an osm-edge or
// OSM pod (theirs alone, or ours that they injected after us), the note on probes the mesh's own prober answers,
// and our names and ports kept ours. Pure.

import { DEFAULT_PORTS, PORT_RANGE } from '../../scheme.js';
import type { ProbeTable } from '../../table/types.js';
import { ManifestError } from '../manifest-error.js';
import { isInjectedContainer, isInjectMade, type Located } from '../our-containers.js';
import { copyPlain } from '../plain-copy.js';
import type { PodSpec, RewriteOptions, RewriteResult } from '../types.js';
import { asOsmInjected } from './osm-form.js';
import { httpPort, isOsmHealthcheckContainer, isOsmProbe, isOsmProxy, type MeshPod } from './recognise.js';

const PORTS = `${PORT_RANGE.first}-${PORT_RANGE.last}`;
const HANDLERS = ['httpGet', 'tcpSocket', 'grpc'] as const;

/** An app container (not the mesh's, not ours) has a probe a prober could answer. */
function hasAppProbes(containers: readonly Located[], mesh: MeshPod): boolean {
  return containers.some(
    ({ container }) =>
      !mesh.containers.has(container.name) &&
      !isInjectedContainer(container.name) &&
      [container.livenessProbe, container.readinessProbe, container.startupProbe].some(
        (probe) =>
          typeof probe === 'object' && probe !== null && HANDLERS.some((h) => probe[h] !== undefined),
      ),
  );
}

const PROBE_FIELDS = [
  ['livenessProbe', 'liveness'],
  ['readinessProbe', 'readiness'],
  ['startupProbe', 'startup'],
] as const;

/**
 * App probes in osm-edge's form that nothing in the pod answers: its sidecar listens on 15901-15903 and its
 * healthcheck container on 15904, and a pod can carry the form without them (its injector's output edited, or
 * copied from another pod). `probes` as `"app" liveness`; `missing` names what is not there.
 */
function unansweredOsmProbes(
  containers: readonly Located[],
  mesh: MeshPod,
): { probes: string[]; missing: string[] } {
  const sidecar = containers.some(({ container }) => isOsmProxy(container));
  const healthcheck = containers.some(({ container }) => isOsmHealthcheckContainer(container));
  const probes: string[] = [];
  const missing = new Set<string>();
  for (const { container } of containers) {
    if (mesh.containers.has(container.name) || isInjectedContainer(container.name)) continue;
    for (const [field, kind] of PROBE_FIELDS) {
      const probe = container[field];
      if (!isOsmProbe(probe)) continue;
      const onHealthcheck = httpPort(probe as NonNullable<typeof probe>) === DEFAULT_PORTS.healthcheck;
      if (onHealthcheck ? healthcheck : sidecar) continue;
      probes.push(`"${container.name}" ${kind}`);
      missing.add(
        onHealthcheck
          ? `osm-edge healthcheck container on ${DEFAULT_PORTS.healthcheck}`
          : 'osm-edge sidecar on 15901-15903',
      );
    }
  }
  return { probes, missing: [...missing] };
}

/** Why an osm-edge pod is left untouched: what answers its probes, or that nothing does and what to do. */
function untouchedReason(containers: readonly Located[], mesh: MeshPod): string {
  const { probes, missing } = unansweredOsmProbes(containers, mesh);
  if (probes.length === 0) {
    return `left untouched: ${mesh.title} injected this pod; its sidecar answers the probes on the companion's ports 15901-15904. To use this project there, run its image as osm-edge's healthcheck container (docs/meshes.md)`;
  }
  const one = probes.length === 1;
  // What happened first, then what follows and the way out (warnings are cut at 256 characters).
  return `left untouched: ${probes.join(', ')} ${one ? 'is' : 'are'} in osm-edge's form but nothing answers ${one ? 'it' : 'them'} (no ${missing.join(' and no ')}): ${one ? 'it' : 'they'} will fail. Let osm-edge inject the pod, or restore the app's ${one ? 'probe' : 'probes'} (docs/meshes.md)`;
}

/**
 * osm-edge's sidecar listens on 15901-15903 and its healthcheck container on 15904 (flomesh-io/osm-edge
 * pkg/injector/pipy_container.go, healthcheck.go): the companion cannot join. Their pod stays theirs; ours that
 * they injected after us becomes theirs alone (osm-form.ts).
 */
export function osmPod(
  spec: PodSpec,
  containers: readonly Located[],
  mesh: MeshPod,
  previous: ProbeTable | undefined,
  options: RewriteOptions,
  resource: string,
): RewriteResult {
  const ours = containers.some(({ container }) => isInjectMade(container));
  if (ours) {
    const next = asOsmInjected(
      spec,
      previous ?? { liveness: new Map(), readiness: new Map(), startup: new Map() },
      options.image,
    );
    // Said first what happened; the rest is in docs/meshes.md (warnings are cut at 256 characters).
    const reason = `${mesh.title} injected this pod after us; its sidecar listens on 15901-15903, so our containers are taken out and its sidecar answers the probes, as its injector writes them (docs/meshes.md)`;
    return {
      spec: next,
      annotations: {},
      table: {},
      warnings: [`${resource}: ${reason}`],
      changed: true,
      placement: { companion: 'untouched', cause: 'osm-mesh', reason, warn: true },
    };
  }
  const unchanged = { spec: copyPlain(spec), annotations: {}, table: {}, changed: false };
  if (!hasAppProbes(containers, mesh)) return { ...unchanged, warnings: [] };
  const reason = untouchedReason(containers, mesh);
  return {
    ...unchanged,
    warnings: [`${resource}: ${reason}`],
    placement: { companion: 'untouched', cause: 'osm-mesh', reason, warn: true },
  };
}

/**
 * The note for app probes the mesh's own prober answers, `probes` as `"app" liveness`: what happened first, the
 * setting next (warnings are cut at 256 characters), the prober's port and path in docs/meshes.md.
 */
export function meshProberNote(mesh: MeshPod, probes: readonly string[]): string {
  return `${mesh.title}'s own prober answers ${probes.join(', ')}: left as ${mesh.title} wrote them. For the companion instead: ${mesh.setting} before ${mesh.title} injects (docs/meshes.md)`;
}

/**
 * Our names and ports are ours: a container named as ours that inject did not make, or a container of the
 * user's that listens on 15901-15904, would clash with the companion. The mesh's own containers are the mesh's.
 */
export function checkOurNames(
  containers: readonly Located[],
  mesh: MeshPod | undefined,
  resource: string,
): void {
  for (const { list, index, container } of containers) {
    if (mesh?.containers.has(container.name)) continue;
    if (isInjectedContainer(container.name)) {
      if (isInjectMade(container)) continue;
      throw new ManifestError(
        resource,
        [list, index, 'name'],
        `"${container.name}" is the name of a container inject adds, and this one is not inject's (it does not run the image's "${container.name === 'osm-healthcheck' ? 'serve' : 'init'}"): rename it`,
      );
    }
    const ports = Array.isArray(container.ports) ? container.ports : [];
    ports.forEach((port, at) => {
      const value = port?.containerPort;
      if (typeof value === 'number' && value >= PORT_RANGE.first && value <= PORT_RANGE.last) {
        throw new ManifestError(
          resource,
          [list, index, 'ports', at, 'containerPort'],
          `${value} is one of the companion's ports (${PORTS}), so the companion could not listen beside this container: move it to another port`,
        );
      }
    });
  }
}
