// rewritePodSpec: docs/architecture.md#the-rewrite for one pod spec -> { spec, annotations to add, table, warnings }. Pure and
// YAML-free, so the CLI and an admission webhook share it. The input is never mutated.

import { isDeepStrictEqual } from 'node:util';
import { describeValue, TableError } from '../errors.js';
import { OPT_OUT_ANNOTATION, PROBE_KINDS, PROBES_ENV } from '../scheme.js';
import type { ProbeTable } from '../table/types.js';
import { COMPANION_NAME, companionContainer, DEFAULT_GRACE_SECONDS, initContainer } from './companion.js';
import { defaultContainerAnnotations } from './default-container.js';
import { decideInterception } from './interception.js';
import { AnnotationError, type FieldPath, ManifestError } from './manifest-error.js';
import { restoreFromIstio, restoreFromKuma } from './mesh/over-ours.js';
import { checkOurNames, meshProberNote, osmPod } from './mesh/pod-rules.js';
import { recogniseMesh } from './mesh/recognise.js';
import type { Located } from './our-containers.js';
import { isInjectedContainer, isInjectMade } from './our-containers.js';
import { ownedContainer } from './owned-container.js';
import { copyPlain } from './plain-copy.js';
import { decideProbe, probeField } from './probe.js';
import { checkResourceAnnotations } from './resources/defaults.js';
import { fitResources } from './resources/resource-fit.js';
import { decideCompanion, podFacts } from './run-to-completion.js';
import { isEmptyTable, readTable, type TableRow, tableDocument } from './table.js';
import type { Container, PodSpec, Probe, RewriteOptions, RewriteResult } from './types.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

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

export function rewritePodSpec(
  spec: PodSpec,
  annotations: Record<string, string> | undefined,
  options: RewriteOptions,
  resource: string,
): RewriteResult {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new ManifestError(resource, [], `pod spec must be an object, got ${describeValue(spec)}`);
  }
  const unchanged = (warnings: string[]): RewriteResult => ({
    spec: copyPlain(spec),
    annotations: {},
    table: {},
    warnings,
    changed: false,
  });
  const optOut = readOptOut(annotations);
  if ('invalid' in optOut) throw new AnnotationError(resource, OPT_OUT_ANNOTATION, optOut.invalid);
  if (optOut.optedOut) return unchanged([]);

  const facts = podFacts(spec, annotations, resource);
  checkResourceAnnotations(annotations, resource);
  const next = copyPlain(spec);
  const containers = locate(next, resource);
  const previous = previousTable(containers, resource);
  const ours = containers.some(
    ({ container }) => container.name === COMPANION_NAME && isInjectMade(container),
  );
  const mesh = recogniseMesh(spec, annotations, ours);
  if (mesh?.mesh === 'osm') return osmPod(spec, containers, mesh, previous, options, resource);
  const rows: TableRow[] = [];
  const warnings: string[] = [];
  const meshProbed: string[] = [];
  // The mesh's injector ran after ours and put its prober in front of the companion: one prober again.
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
  const table = tableDocument(rows);
  if (isEmptyTable(table)) return unchanged(warnings);
  // Only where our containers would be added can a name or port of the app's clash with them.
  checkOurNames(containers, mesh, resource);
  const outside = outsideAnyMesh(spec);
  if (outside !== undefined) {
    // Said only here, where the companion would have answered probes: other such pods are no news.
    return {
      ...unchanged([`${resource}: ${outside}`]),
      placement: { companion: 'untouched', reason: outside, warn: true },
    };
  }

  const cluster = options.cluster ?? { state: 'unchecked' };
  const kubelets = options.kubelets ?? { state: 'unchecked' };
  const placement = decideCompanion({ ...facts, placement: options.placement, cluster, kubelets });
  if (placement.companion === 'untouched') {
    // The whole pod as it came: its probes go on as before, through the mesh.
    return { ...unchanged(placement.warn ? [`${resource}: ${placement.reason}`] : []), placement };
  }
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
  if (interception.bypass === 'none') {
    // As for a pod that must end and cannot: the whole pod as it came, rather than one the API server refuses.
    const reason = interception.reason;
    return {
      ...unchanged([`${resource}: ${reason}`]),
      placement: { companion: 'untouched', reason, warn: true },
    };
  }
  // A native sidecar's startupProbe gates every container after it: with the companion among the app
  // containers it would never start and the pod would hang, so the companion has to be a native sidecar too.
  let decided = placement;
  if (placement.companion !== 'native-sidecar' && sidecarsProbed.size > 0) {
    const reason = `native sidecar ${[...sidecarsProbed].map((name) => `"${name}"`).join(', ')} has probes answered by the companion, so the companion runs as a native sidecar too`;
    warnings.push(`${resource}: ${reason}`);
    decided = { companion: 'native-sidecar', reason };
  }
  const native = decided.companion === 'native-sidecar';
  const withInit = interception.bypass === 'init-container';
  const fit = fitResources({
    spec,
    annotations,
    companionCpuLimit: options.companionCpuLimit,
    withInit,
    native,
    rules: options.namespaceRules ?? { state: 'unchecked' },
    cluster,
  });
  if (fit.fit === 'invalid') throw new AnnotationError(resource, fit.invalid.annotation, fit.invalid.problem);
  if (fit.fit === 'untouched') {
    // As for Pod Security: the pod as it came, rather than one its namespace's rules refuse.
    return {
      ...unchanged([`${resource}: ${fit.reason}`]),
      placement: { companion: 'untouched', reason: fit.reason, warn: true },
    };
  }
  const shutdownGraceSeconds = graceSeconds(next, resource);
  const companion = companionContainer({
    image: options.image,
    table,
    native,
    shutdownGraceSeconds,
    resources: fit.companion,
  });
  const init = fit.init === undefined ? undefined : initContainer(options.image, fit.init);
  const answered = new Set(rows.map((row) => row.container));
  const result = withCompanion(next, companion, native, init, answered);
  const added = {
    ...defaultContainerAnnotations(result, annotations),
    ...(interception.bypass === 'mesh' ? interception.set : {}),
  };
  const changed = !isDeepStrictEqual(spec, result) || Object.keys(added).length > 0;
  return { spec: result, annotations: added, table, warnings, changed, placement: decided };
}

/**
 * Pods no mesh touches (Istio, Linkerd and OSM skip them all): with hostNetwork the pod shares the node's network
 * namespace, so our init container's iptables rules would be the node's and the companion would bind 15901-15904
 * on the node; a Windows pod refuses our Linux containers (`capabilities` "cannot be set for a windows pod").
 */
function outsideAnyMesh(spec: PodSpec): string | undefined {
  if (spec.hostNetwork === true) {
    return "left untouched: spec.hostNetwork is true: our init container's iptables rules and the companion's ports 15901-15904 would be the node's, so no mesh touches such pods";
  }
  const os = spec.os;
  if (typeof os === 'object' && os !== null && (os as { name?: unknown }).name === 'windows') {
    return 'left untouched: spec.os.name is windows: the companion and its init container are Linux containers, so no mesh touches such pods';
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

/**
 * Our init container first (a run-to-completion step: the iptables bypass exists before anything listens),
 * unless the mesh's own annotation does its job (interception.ts).
 * Kubelet starts the rest in order and waits, before the next, for a native sidecar's startupProbe and for a
 * container's postStart hook; so the companion goes either right after our init container, as a native
 * sidecar, or first among the containers, with `wait` as its postStart hook. Either way it listens before every
 * sidecar and app container whose probes it answers starts. Earlier copies of both are replaced wherever they
 * were (earlier releases put the companion last), so a new image or placement takes effect. A copy already in
 * the right list is updated in place (owned-container.ts), keeping what the API server added to it.
 */
function withCompanion(
  spec: PodSpec,
  companion: Container,
  native: boolean,
  init: Container | undefined,
  answered: ReadonlySet<string>,
): PodSpec {
  const notOurs = (list: Container[] | undefined) =>
    (list ?? []).filter((container) => !isInjectedContainer(container.name ?? ''));
  const settled = (list: Container[] | undefined, wanted: Container) =>
    ownedContainer(
      list?.find((container) => container.name === wanted.name),
      wanted,
    );
  const initContainers = [
    ...(init === undefined ? [] : [settled(spec.initContainers, init)]),
    ...(native ? [settled(spec.initContainers, companion)] : []),
    ...notOurs(spec.initContainers),
  ];
  const containers = native
    ? notOurs(spec.containers)
    : (keptInPlace(spec.containers, companion, answered, settled) ?? [
        settled(spec.containers, companion),
        ...notOurs(spec.containers),
      ]);
  // Key order is kept; a new `initContainers` goes just before `containers`, where manifests usually have it.
  const hadInit = Object.hasOwn(spec, 'initContainers');
  return Object.fromEntries(
    Object.entries(spec).flatMap(([key, value]): [string, unknown][] => {
      if (key === 'initContainers') return [[key, initContainers]];
      if (key !== 'containers') return [[key, value]];
      return hadInit || initContainers.length === 0
        ? [[key, containers]]
        : [
            ['initContainers', initContainers],
            [key, containers],
          ];
    }),
  );
}

/**
 * The containers with the companion where it already is, when that is before every container it answers for: a
 * mesh's injector that ran after us may have put its proxy first (Linkerd's proxy-await, linkerd2 pkg/inject), and
 * moving ours back in front of it would make every reinvocation a patch. Undefined when it has to move.
 */
function keptInPlace(
  list: Container[] | undefined,
  companion: Container,
  answered: ReadonlySet<string>,
  settled: (list: Container[] | undefined, wanted: Container) => Container,
): Container[] | undefined {
  const containers = list ?? [];
  const at = containers.findIndex((c) => c.name === companion.name);
  if (
    at < 0 ||
    containers.slice(0, at).some((c) => answered.has(String(c.name)) || isInjectedContainer(String(c.name)))
  ) {
    return undefined;
  }
  return containers.map((c, i) => (i === at ? settled(list, companion) : c));
}

/** Every container with its place, after checking the lists and names (Kubernetes' own rules). */
function locate(spec: PodSpec, resource: string): Located[] {
  const located: Located[] = [];
  const seen = new Map<string, FieldPath>();
  for (const list of ['initContainers', 'containers'] as const) {
    const items: unknown = spec[list];
    if (items === undefined && list === 'initContainers') continue;
    if (!Array.isArray(items)) {
      throw new ManifestError(resource, [list], `must be a list of containers, got ${describeValue(items)}`);
    }
    items.forEach((item: unknown, index) => {
      const at = [list, index];
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        throw new ManifestError(resource, at, `must be a container object, got ${describeValue(item)}`);
      }
      const { name } = item as Container;
      if (name === undefined || name === '') throw new ManifestError(resource, at, 'container has no name');
      if (typeof name !== 'string' || name.length > 63 || !DNS1123_LABEL.test(name)) {
        throw new ManifestError(
          resource,
          [...at, 'name'],
          `must be a DNS-1123 label (lower-case letters, digits and "-", at most 63), got ${describeValue(name)}`,
        );
      }
      const first = seen.get(name);
      if (first !== undefined) {
        throw new ManifestError(
          resource,
          [...at, 'name'],
          `duplicate container name "${name}" (also ${formatAt(first)})`,
        );
      }
      seen.set(name, at);
      located.push({ list, index, container: item as Located['container'] });
    });
  }
  return located;
}

function formatAt(path: FieldPath): string {
  return `${path[0]}[${path[1]}]`;
}

/** The table an earlier inject wrote into the companion's env, so its entries survive a second inject. */
function previousTable(containers: Located[], resource: string): ProbeTable | undefined {
  const found = containers.find(({ container }) => container.name === COMPANION_NAME);
  if (found === undefined || !Array.isArray(found.container.env)) return undefined;
  const index = found.container.env.findIndex((env) => env?.name === PROBES_ENV);
  const value = found.container.env[index]?.value;
  if (typeof value !== 'string') return undefined;
  try {
    return readTable(value);
  } catch (err) {
    if (!(err instanceof TableError)) throw err;
    const at = [found.list, found.index, 'env', index, 'value'];
    throw new ManifestError(resource, at, `the companion's probe table is invalid: ${err.message}`, {
      cause: err,
    });
  }
}
