// How kubelet's probes get past the mesh to the companion on 15901-15904: our init container (iptables, needs
// NET_ADMIN and NET_RAW), or the mesh's own inbound port exclusion annotation. Decided per pod, so that the
// rewrite never turns a pod its namespace's Pod Security level admits into one it refuses: where the level
// refuses the init container and the mesh does not exclude our ports, the pod is left as it was, with a warning.

import { briefMessage } from '../errors.js';
import { DEFAULT_PORTS, PORT_RANGE } from '../scheme.js';
import type { InjectingMesh, MeshPod } from './mesh/recognise.js';
import { excludingMesh, exclusionAnnotation, MESH_FORMATS, type Mesh } from './mesh-exclusion.js';
import { admitsInitContainer, describePolicy, type PodSecurityKnowledge } from './pod-security.js';

export type Interception =
  /** `note`: why the mesh's annotation asked for (--mesh-exclusion) does not take effect on this pod. */
  | { bypass: 'init-container'; note?: string }
  /** The mesh excludes our ports; `set`: annotations inject adds or completes for it (--mesh-exclusion). */
  | { bypass: 'mesh'; mesh: Mesh | InjectingMesh; annotation: string; set: Record<string, string> }
  /** Nothing admissible lets probes past the mesh: the pod stays as it came; `reason` is the warning. */
  | { bypass: 'none'; reason: string }
  /** The pod's annotation for the asked-for mesh is no list that mesh accepts. */
  | { bypass: 'invalid'; annotation: string; problem: string };

export interface InterceptionInputs {
  podSecurity: PodSecurityKnowledge;
  /** inject --mesh-exclusion: that mesh's annotation instead of the init container, whatever the level. */
  meshExclusion: Mesh | undefined;
  annotations: Readonly<Record<string, string>> | undefined;
  /** The mesh that already injected the pod (rewrite/mesh/recognise.ts): its init step read its annotations. */
  injected?: MeshPod | undefined;
}

// The way out, named in the warning itself: inject --mesh-exclusion writes that annotation (short: the API server
// cuts a warning at 256 characters, its prefix and the pod's name included).
const FIX =
  "list 15901-15904 in the mesh's exclusion annotation (inject --mesh-exclusion; docs/pod-security.md)";

/** Pure, table-tested (test/rewrite/interception.test.ts). */
export function decideInterception({
  podSecurity,
  meshExclusion,
  annotations,
  injected,
}: InterceptionInputs): Interception {
  if (injected !== undefined) return afterMesh({ podSecurity, meshExclusion, annotations, injected });
  if (meshExclusion !== undefined) {
    const wanted = exclusionAnnotation(meshExclusion, annotations);
    const { annotation } = MESH_FORMATS[meshExclusion];
    if ('invalid' in wanted) return { bypass: 'invalid', annotation, problem: wanted.invalid };
    return { bypass: 'mesh', mesh: meshExclusion, annotation, set: wanted.set };
  }
  // The pod already has the mesh leave our ports alone: the init container would add nothing but privileges.
  const excluded = excludingMesh(annotations);
  if (excluded !== undefined) return { bypass: 'mesh', ...excluded, set: {} };
  return byPodSecurity(podSecurity);
}

/**
 * A pod a mesh already injected: its init step has read its annotations (istio-init's `-d`, linkerd-init's
 * arguments, Kuma's transparent-proxy-config), so only what it was given counts, or the annotation its CNI
 * plugin reads when the pod is created; any other mesh's annotation is no mesh's concern here.
 */
function afterMesh({
  podSecurity,
  meshExclusion,
  annotations,
  injected,
}: InterceptionInputs & { injected: MeshPod }): Interception {
  if (injected.leavesPorts(Object.values(DEFAULT_PORTS))) {
    const read = injected.annotationReadNow;
    const annotation = read === undefined ? `${injected.title}'s init step` : MESH_FORMATS[read].annotation;
    return { bypass: 'mesh', mesh: injected.mesh, annotation, set: {} };
  }
  if (meshExclusion !== undefined && meshExclusion === injected.annotationReadNow) {
    const wanted = exclusionAnnotation(meshExclusion, annotations);
    const { annotation } = MESH_FORMATS[meshExclusion];
    if ('invalid' in wanted) return { bypass: 'invalid', annotation, problem: wanted.invalid };
    return { bypass: 'mesh', mesh: meshExclusion, annotation, set: wanted.set };
  }
  const decided = byPodSecurity(podSecurity);
  if (meshExclusion === undefined || decided.bypass !== 'init-container') return decided;
  const why =
    injected.annotationReadNow === undefined && meshExclusion === injected.mesh
      ? `${injected.title} injected this pod already and its init step has read its annotations`
      : `${injected.title}, not ${MESH_FORMATS[meshExclusion].source}, injected this pod`;
  return {
    bypass: 'init-container',
    note: `--mesh-exclusion ${meshExclusion} does not take effect on this pod (${why}), so our init container excludes ${PORT_RANGE.first}-${PORT_RANGE.last}`,
  };
}

function byPodSecurity(podSecurity: PodSecurityKnowledge): Interception {
  if (podSecurity.state === 'unchecked') return { bypass: 'init-container' };
  if (podSecurity.state === 'unknown') {
    return {
      bypass: 'none',
      reason: `left untouched: the Pod Security level of namespace "${podSecurity.namespace}" is not known (${briefMessage(podSecurity.why, 48)}), and it may refuse our init container; or ${FIX}`,
    };
  }
  const { policy } = podSecurity;
  if (admitsInitContainer(policy.level)) return { bypass: 'init-container' };
  return {
    bypass: 'none',
    reason: `left untouched: Pod Security ${describePolicy(policy)} (${policy.source}) refuses our init container's NET_ADMIN, NET_RAW; ${FIX}`,
  };
}
