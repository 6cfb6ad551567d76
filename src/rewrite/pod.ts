// rewritePodSpec: docs/architecture.md#the-rewrite for one pod spec -> { spec, annotations to add, table, warnings }. Pure and
// YAML-free, so the CLI and an admission webhook share it. The input is never mutated. The room rewrite/ holds the
// pod rules every entry point shares: plain pod specs in and out; it imports none of manifest/ (inject's YAML) and
// nothing of the yaml library but `parse` (docs/architecture.md#the-layout-of-src).

import { isDeepStrictEqual } from 'node:util';
import { describeValue } from '../errors.js';
import { OPT_OUT_ANNOTATION, PROBE_KINDS } from '../scheme.js';
import type { ProbeTable, ProbeTableDocument } from '../table/types.js';
import { COMPANION_NAME, companionContainer, DEFAULT_GRACE_SECONDS, initContainer } from './companion.js';
import { defaultContainerAnnotations } from './default-container.js';
import { decideInterception, type Interception } from './interception.js';
import { locate } from './located.js';
import { AnnotationError, ManifestError } from './manifest-error.js';
import { restoreFromIstio, restoreFromKuma } from './mesh/over-ours.js';
import { checkOurNames, meshProberNote, osmPod } from './mesh/pod-rules.js';
import { type MeshPod, recogniseMesh } from './mesh/recognise.js';
import { isInjectMade, type Located } from './our-containers.js';
import { copyPlain } from './plain-copy.js';
import { previousTable } from './previous-table.js';
import { decideProbe, probeField } from './probe.js';
import { RECORD_VERSION, recordAnnotations, tableDigest } from './record.js';
import { checkResourceAnnotations } from './resources/defaults.js';
import { fitResources, type ResourceFit } from './resources/resource-fit.js';
import { decideCompanion, podFacts } from './run-to-completion.js';
import { sealingInit, sealReadingCompanion, withSealVolume } from './seal.js';
import { isEmptyTable, type TableRow, tableDocument } from './table.js';
import type {
  CompanionDecision,
  PodSpec,
  Probe,
  RewriteOptions,
  RewriteResult,
  UntouchedCause,
} from './types.js';
import { withCompanion } from './with-companion.js';

/**
 * `osm-healthcheck/rewrite-probes`: "false" on the pod (template) turns the rewrite off for it, "true" (or no
 * annotation) leaves it on; any other value is refused, as the other annotations refuse theirs: a "no" or "0"
 * read as "on" would inject a pod its owner meant to keep out.
 */
export function readOptOut(
  annotations: Record<string, unknown> | undefined,
): { optedOut: boolean } | { invalid: string } {
  const raw = annotations?.[OPT_OUT_ANNOTATION];
  if (raw === undefined) return { optedOut: false };
  const value = String(raw).trim().toLowerCase();
  if (value === 'false') return { optedOut: true };
  if (value === 'true') return { optedOut: false };
  return { invalid: `must be "true" or "false", got ${describeValue(raw)}` };
}

/** The pod (template) says `osm-healthcheck/rewrite-probes: "false"` (readOptOut refuses other values). */
export function isOptedOut(annotations: Record<string, unknown> | undefined): boolean {
  const read = readOptOut(annotations);
  return 'optedOut' in read && read.optedOut;
}

/**
 * The rewrite of one pod spec, step by step: each step either settles the pod (an early return: the pod as it
 * came, with the reason) or hands what it decided to the next.
 */
export function rewritePodSpec(
  spec: PodSpec,
  annotations: Record<string, string> | undefined,
  options: RewriteOptions,
  resource: string,
): RewriteResult {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new ManifestError(resource, [], `pod spec must be an object, got ${describeValue(spec)}`);
  }
  // 1. The owner's opt-out.
  if (optedOut(annotations, resource)) return unchanged(spec, []);
  // 2. The mesh's pod: which mesh injected it, osm-edge's kept theirs, a mesh's prober put back behind ours.
  const pod = readPod(spec, annotations, options, resource);
  if (pod.mesh?.mesh === 'osm')
    return osmPod(spec, pod.containers, pod.mesh, pod.previous, options, resource);
  undoMeshOverOurs(pod);
  // 3. The probe decisions: which probes the companion answers, and its table.
  const probes = decideProbes(pod);
  if (isEmptyTable(probes.table)) return unchanged(spec, pod.warnings);
  const outside = cannotJoin(pod);
  if (outside !== undefined) return untouched(pod, outside.cause, outside.reason);
  // 4. Placement: a native sidecar, first among the containers, or not at all.
  const placement = placeCompanion(pod);
  if (placement.companion === 'untouched') return placedNowhere(pod, placement);
  // 5. Interception: how kubelet's probes get past the mesh to 15901-15904.
  const interception = passTheMesh(pod);
  if (interception.bypass === 'none') return untouched(pod, 'pod-security', interception.reason);
  const decided = nativeForProbedSidecars(pod, placement, probes.sidecarsProbed);
  // 6. Resources: our containers fit the namespace's rules, or the pod stays as it came.
  const fit = fitOurContainers(pod, decided, interception);
  if (fit.fit === 'untouched') return untouched(pod, 'admission-rules', fit.reason);
  // 7. The result: our containers added, the annotations to set.
  return buildResult(pod, probes, decided, interception, fit);
}

/** Where the companion goes, once it goes somewhere. */
type Placed = Exclude<CompanionDecision, { companion: 'untouched' }>;

/** What the steps share: the pod as it came (never changed), the copy they change, and the warnings so far. */
interface Pod {
  readonly spec: PodSpec;
  readonly annotations: Record<string, string> | undefined;
  readonly options: RewriteOptions;
  readonly resource: string;
  readonly facts: ReturnType<typeof podFacts>;
  /** The copy the steps rewrite. */
  readonly next: PodSpec;
  /** `next`'s containers, each with its place. */
  readonly containers: Located[];
  /** The table an earlier inject wrote, if any. */
  readonly previous: ProbeTable | undefined;
  /** The pod already has a companion inject made. */
  readonly ours: boolean;
  readonly mesh: MeshPod | undefined;
  readonly warnings: string[];
}

/** The pod as it came: nothing to add. */
function unchanged(spec: PodSpec, warnings: string[]): RewriteResult {
  return { spec: copyPlain(spec), annotations: {}, table: {}, warnings, changed: false };
}

/** The whole pod as it came, with the reason as its one warning: its probes go on as before, through the mesh. */
function untouched(pod: Pod, cause: UntouchedCause, reason: string): RewriteResult {
  return {
    ...unchanged(pod.spec, [`${pod.resource}: ${reason}`]),
    placement: { companion: 'untouched', cause, reason, warn: true },
  };
}

/** Step 1: `osm-healthcheck/rewrite-probes: "false"`; any value but "true" or "false" is an error at it. */
function optedOut(annotations: Record<string, string> | undefined, resource: string): boolean {
  const optOut = readOptOut(annotations);
  if ('invalid' in optOut) throw new AnnotationError(resource, OPT_OUT_ANNOTATION, optOut.invalid);
  return optOut.optedOut;
}

/** Step 2: the facts the steps read, the copy they change, and the mesh that injected the pod. */
function readPod(
  spec: PodSpec,
  annotations: Record<string, string> | undefined,
  options: RewriteOptions,
  resource: string,
): Pod {
  const facts = podFacts(spec, annotations, resource);
  checkResourceAnnotations(annotations, resource);
  const next = copyPlain(spec);
  const containers = locate(next, resource);
  const previous = previousTable(containers, resource);
  const ours = containers.some(
    ({ container }) => container.name === COMPANION_NAME && isInjectMade(container),
  );
  const mesh = recogniseMesh(spec, annotations, ours);
  return {
    spec,
    annotations,
    options,
    resource,
    facts,
    next,
    containers,
    previous,
    ours,
    mesh,
    warnings: [],
  };
}

/** Step 2: the mesh's injector ran after ours and put its prober in front of the companion: one prober again. */
function undoMeshOverOurs(pod: Pod): void {
  const { ours, mesh, next, resource, warnings } = pod;
  if (ours && mesh?.mesh === 'istio' && restoreFromIstio(next).length > 0) {
    warnings.push(
      `${resource}: Istio injected this pod after us and moved the companion's probes to pilot-agent; they go back to the companion, from ISTIO_KUBE_APP_PROBERS (docs/meshes.md)`,
    );
  }
  if (ours && mesh?.mesh === 'kuma' && restoreFromKuma(next, mesh.probePort ?? 0).length > 0) {
    warnings.push(
      `${resource}: Kuma injected this pod after us and moved the companion's probes to its probe proxy; they go back to the companion (docs/meshes.md)`,
    );
  }
}

interface ProbeDecisions {
  rows: TableRow[];
  table: ProbeTableDocument;
  /** Native sidecars with a probe the companion answers. */
  sidecarsProbed: ReadonlySet<string>;
}

/** Step 3: each probe of each app container and native sidecar, rewritten, kept, or left to the mesh's prober. */
function decideProbes(pod: Pod): ProbeDecisions {
  const { containers, mesh, resource, previous, ours, warnings } = pod;
  const rows: TableRow[] = [];
  const meshProbed: string[] = [];
  const sidecarsProbed = new Set<string>();
  // Native sidecars first, then app containers: the order kubelet starts them, and the table's order.
  for (const { list, index, container } of containers) {
    // Ours are rebuilt below; a user's container under our name is the app's, and its probes bring the check
    // that refuses the name (checkOurNames).
    if (isInjectMade(container)) continue;
    // The mesh's own containers keep their probes exactly as the mesh wrote them.
    if (mesh?.containers.has(container.name)) continue;
    if (list === 'initContainers' && container.restartPolicy !== 'Always') continue;
    for (const kind of PROBE_KINDS) {
      const field = probeField(kind);
      if (container[field] === undefined) continue;
      if (mesh?.prober(container[field] as Probe) !== undefined) {
        // One prober per probe: the mesh's, as it wrote it; never ours in front of it.
        meshProbed.push(`"${container.name}" ${kind}`);
        continue;
      }
      const site = {
        resource,
        containerPath: [list, index],
        container,
        kind,
        previous: previous?.[kind].get(container.name),
        ours,
      };
      const decision = decideProbe(container[field], site);
      if (decision.action === 'keep') {
        if (decision.warning !== undefined) warnings.push(decision.warning);
        continue;
      }
      if (decision.action === 'rewrite') container[field] = decision.probe;
      if (decision.entry === undefined) continue;
      rows.push({ kind, container: container.name, entry: decision.entry });
      if (list === 'initContainers') sidecarsProbed.add(container.name);
    }
  }
  if (mesh !== undefined && meshProbed.length > 0)
    warnings.push(`${resource}: ${meshProberNote(mesh, meshProbed)}`);
  return { rows, table: tableDocument(rows), sidecarsProbed };
}

/**
 * Step 3, where our containers would join: a name or port of the app's that clashes with ours is an error; a pod
 * no mesh touches gets a reason to stay as it came.
 */
function cannotJoin(pod: Pod): ReturnType<typeof outsideAnyMesh> {
  checkOurNames(pod.containers, pod.mesh, pod.resource);
  // Said only here, where the companion would have answered probes: other such pods are no news.
  return outsideAnyMesh(pod.spec);
}

/** Step 4: where the companion goes, by the versions known and what the pod must do (run-to-completion.ts). */
function placeCompanion(pod: Pod): CompanionDecision {
  const { facts, options } = pod;
  const cluster = options.cluster ?? { state: 'unchecked' };
  const kubelets = options.kubelets ?? { state: 'unchecked' };
  return decideCompanion({ ...facts, placement: options.placement, cluster, kubelets });
}

/** Step 4, no place: the whole pod as it came, its probes going on as before, through the mesh. */
function placedNowhere(
  pod: Pod,
  placement: Extract<CompanionDecision, { companion: 'untouched' }>,
): RewriteResult {
  return {
    ...unchanged(pod.spec, placement.warn ? [`${pod.resource}: ${placement.reason}`] : []),
    placement,
  };
}

/** Step 5: our init container, the mesh's exclusion annotation, or nothing admissible (interception.ts). */
function passTheMesh(pod: Pod): Exclude<Interception, { bypass: 'invalid' }> {
  const { options, annotations, mesh, resource, warnings } = pod;
  const interception = decideInterception({
    podSecurity: options.podSecurity ?? { state: 'unchecked' },
    meshExclusion: options.meshExclusion,
    annotations,
    injected: mesh,
  });
  if (interception.bypass === 'invalid') {
    // inject checks this first, naming the annotation's own line (manifest/document.ts); the webhook never asks.
    const { annotation, problem } = interception;
    throw new AnnotationError(resource, annotation, problem);
  }
  if (interception.bypass === 'init-container' && interception.note !== undefined) {
    warnings.push(`${resource}: ${interception.note}`);
  }
  return interception;
}

/**
 * Step 5, then: a native sidecar's startupProbe gates every container after it, so with the companion among the
 * app containers it would never start and the pod would hang: the companion has to be a native sidecar too.
 */
function nativeForProbedSidecars(pod: Pod, placement: Placed, sidecarsProbed: ReadonlySet<string>): Placed {
  if (placement.companion === 'native-sidecar' || sidecarsProbed.size === 0) return placement;
  const reason = `native sidecar ${[...sidecarsProbed].map((name) => `"${name}"`).join(', ')} has probes answered by the companion, so the companion runs as a native sidecar too`;
  pod.warnings.push(`${pod.resource}: ${reason}`);
  return { companion: 'native-sidecar', reason };
}

/** Step 6: requests and limits for our containers within the namespace's rules (resources/). */
function fitOurContainers(
  pod: Pod,
  decided: Placed,
  interception: Interception,
): Exclude<ResourceFit, { fit: 'invalid' }> {
  const { spec, annotations, options, resource } = pod;
  const fit = fitResources({
    spec,
    annotations,
    companionCpuLimit: options.companionCpuLimit,
    withInit: interception.bypass === 'init-container',
    native: decided.companion === 'native-sidecar',
    rules: options.namespaceRules ?? { state: 'unchecked' },
    cluster: options.cluster ?? { state: 'unchecked' },
  });
  if (fit.fit === 'invalid') throw new AnnotationError(resource, fit.invalid.annotation, fit.invalid.problem);
  return fit;
}

/** Step 7: the rewritten spec with our containers, the annotations to set on the pod, and whether anything changed. */
function buildResult(
  pod: Pod,
  probes: ProbeDecisions,
  decided: Placed,
  interception: Interception,
  fit: Extract<ResourceFit, { fit: 'declared' }>,
): RewriteResult {
  const { spec, annotations, options, resource, next, warnings } = pod;
  const native = decided.companion === 'native-sidecar';
  const shutdownGraceSeconds = graceSeconds(next, resource);
  const companion = companionContainer({
    image: options.image,
    table: probes.table,
    native,
    shutdownGraceSeconds,
    resources: fit.companion,
  });
  const plainInit = fit.init === undefined ? undefined : initContainer(options.image, fit.init);
  // Only our init container can seal: a pod the mesh's own annotation lets past has none, and runs open.
  const sealed = options.seal === 'node' && plainInit !== undefined;
  const init = sealed ? sealingInit(plainInit) : plainInit;
  const answered = new Set(probes.rows.map((row) => row.container));
  const result = withCompanion(
    sealed ? withSealVolume(next) : next,
    sealed ? sealReadingCompanion(companion) : companion,
    native,
    init,
    answered,
  );

  const added = {
    ...defaultContainerAnnotations(result, annotations),
    ...(interception.bypass === 'mesh' ? interception.set : {}),
    ...recordAnnotations(
      {
        version: RECORD_VERSION,
        image: options.image,
        placement: decided.companion,
        bypass: interception.bypass === 'mesh' ? `mesh:${interception.mesh}` : 'init-container',
        probes: tableDigest(JSON.stringify(probes.table)),
        ...(sealed ? { seal: 'node' as const } : {}),
      },
      annotations,
    ),
  };
  const changed = !isDeepStrictEqual(spec, result) || Object.keys(added).length > 0;
  return { spec: result, annotations: added, table: probes.table, warnings, changed, placement: decided };
}

/**
 * Pods no mesh touches (Istio, Linkerd and OSM skip them all): with hostNetwork the pod shares the node's network
 * namespace, so our init container's iptables rules would be the node's and the companion would bind 15901-15904
 * on the node; a Windows pod refuses our Linux containers (`capabilities` "cannot be set for a windows pod").
 */
function outsideAnyMesh(spec: PodSpec): { cause: 'host-network' | 'windows'; reason: string } | undefined {
  if (spec.hostNetwork === true) {
    return {
      cause: 'host-network',
      reason:
        "left untouched: spec.hostNetwork is true: our init container's iptables rules and the companion's ports 15901-15904 would be the node's, so no mesh touches such pods",
    };
  }
  const os = spec.os;
  if (typeof os === 'object' && os !== null && (os as { name?: unknown }).name === 'windows') {
    return {
      cause: 'windows',
      reason:
        'left untouched: spec.os.name is windows: the companion and its init container are Linux containers, so no mesh touches such pods',
    };
  }
  return undefined;
}

/** The pod's terminationGracePeriodSeconds, Kubernetes' default when unset. */
function graceSeconds(spec: PodSpec, resource: string): number {
  const value = spec.terminationGracePeriodSeconds;
  if (value === undefined || value === null) return DEFAULT_GRACE_SECONDS;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ManifestError(
      resource,
      ['terminationGracePeriodSeconds'],
      `must be a whole number of seconds, 0 or more, got ${describeValue(value)}`,
    );
  }
  return value;
}
