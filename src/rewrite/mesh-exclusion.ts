// The meshes' own way to leave inbound ports alone: a pod annotation listing ports the mesh's init step does not
// redirect. Where it lists all of 15901-15904, kubelet reaches the companion without our init container (the
// only part of the rewrite that needs NET_ADMIN and NET_RAW). Each mesh's list format is parsed as that mesh
// parses it, and a list it would refuse is not trusted: the mesh would then intercept our ports after all.

import { DEFAULT_PORTS, PORT_RANGE } from '../scheme.js';

const COMPANION_PORTS = Object.values(DEFAULT_PORTS);

export const MESHES = ['osm', 'istio', 'linkerd', 'kuma'] as const;
export type Mesh = (typeof MESHES)[number];

interface MeshFormat {
  annotation: string;
  /** `a-b` ranges are accepted. */
  ranges: boolean;
  /** What the mesh's own parser is, for the reader. */
  source: string;
}

export const MESH_FORMATS: Readonly<Record<Mesh, MeshFormat>> = {
  // OSM and osm-edge pkg/injector/exclusions.go getPortExclusionListForPod: split on ",", trim, Atoi, > 0.
  osm: {
    annotation: 'openservicemesh.io/inbound-port-exclusion-list',
    ranges: false,
    source: 'OSM and osm-edge',
  },
  // istio pkg/kube/inject validate.go validatePortList: split on ",", ParseUint(trimmed, 10, 16).
  istio: { annotation: 'traffic.sidecar.istio.io/excludeInboundPorts', ranges: false, source: 'Istio' },
  // linkerd2 pkg/util parsing.go GetPortRanges (a trailing "," dropped, entries trimmed) + portrange.go
  // ParsePortRange (a port or lower-upper, 0-65535).
  linkerd: { annotation: 'config.linkerd.io/skip-inbound-ports', ranges: true, source: 'Linkerd' },
  // kuma app/cni annotations.go validatePortList: Istio's format, and a trailing "," accepted (its split
  // drops the empty last entry).
  kuma: { annotation: 'traffic.kuma.io/exclude-inbound-ports', ranges: false, source: 'Kuma' },
};

interface PortSpan {
  first: number;
  last: number;
}

const DIGITS = /^\d{1,5}$/;

function port(text: string, allowZero: boolean): number | undefined {
  if (!DIGITS.test(text)) return undefined;
  const value = Number(text);
  return value <= 65535 && (allowZero || value > 0) ? value : undefined;
}

/** The mesh's list as that mesh reads it; undefined where the mesh would refuse any entry of it. */
export function parseExclusionList(mesh: Mesh, value: string): PortSpan[] | undefined {
  const { ranges } = MESH_FORMATS[mesh];
  const trailing = mesh === 'linkerd' || mesh === 'kuma';
  const text = trailing && value.endsWith(',') ? value.slice(0, -1) : value;
  const spans: PortSpan[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    const dash = ranges ? entry.indexOf('-') : -1;
    if (dash < 0) {
      const single = port(entry, mesh !== 'osm');
      if (single === undefined) return undefined;
      spans.push({ first: single, last: single });
      continue;
    }
    const first = port(entry.slice(0, dash), true);
    const last = port(entry.slice(dash + 1), true);
    if (first === undefined || last === undefined || last < first) return undefined;
    spans.push({ first, last });
  }
  return spans;
}

/**
 * `list` (the mesh's annotation, or what its injector passed its init step from it) excludes every one of
 * `ports`, read as `mesh` reads it: a list the mesh refuses excludes nothing.
 */
export function listExcludes(mesh: Mesh, list: string | undefined, ports: readonly number[]): boolean {
  const spans = list === undefined ? undefined : parseExclusionList(mesh, list);
  return spans !== undefined && ports.every((p) => spans.some((span) => span.first <= p && p <= span.last));
}

/** The first mesh whose annotation on the pod (template) excludes all of 15901-15904 from inbound capture. */
export function excludingMesh(
  annotations: Readonly<Record<string, string>> | undefined,
): { mesh: Mesh; annotation: string } | undefined {
  for (const mesh of MESHES) {
    const { annotation } = MESH_FORMATS[mesh];
    if (listExcludes(mesh, annotations?.[annotation], COMPANION_PORTS)) return { mesh, annotation };
  }
  return undefined;
}

/**
 * The annotation to set so `mesh` excludes 15901-15904: the pod's own list with the missing ports appended one
 * by one (every mesh reads single ports), or a new list. A list the mesh would refuse is an error to report.
 */
export function exclusionAnnotation(
  mesh: Mesh,
  annotations: Readonly<Record<string, string>> | undefined,
): { set: Record<string, string> } | { invalid: string } {
  const { annotation } = MESH_FORMATS[mesh];
  const existing = annotations?.[annotation];
  const spans = existing === undefined || existing.trim() === '' ? [] : parseExclusionList(mesh, existing);
  if (spans === undefined) {
    return { invalid: `"${existing}" is no list ${MESH_FORMATS[mesh].source} accepts` };
  }
  const missing: number[] = [];
  for (let p: number = PORT_RANGE.first; p <= PORT_RANGE.last; p++) {
    if (!spans.some((span) => span.first <= p && p <= span.last)) missing.push(p);
  }
  if (missing.length === 0) return { set: {} };
  const kept = existing === undefined || existing.trim() === '' ? [] : [existing.trim().replace(/,$/, '')];
  return { set: { [annotation]: [...kept, ...missing.map(String)].join(',') } };
}
