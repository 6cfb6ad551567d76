// One live pod in one class (docs/analyze.md#the-classes): covered by the release and image a pod created now
// gets, covered by an older one, uncovered though the webhook would inject it now, untouched by design (with the
// reason), or with a companion that restarts. Pure: the pod as the API server holds it, and what the webhook
// would do with it, asked of the same rewritePodSpec the webhook runs, with the knowledge the webhook would have.

import { isHealthcheckError } from '../errors.js';
import { COMPANION_NAME } from '../rewrite/companion.js';
import { recogniseMesh } from '../rewrite/mesh/recognise.js';
import { isInjectMade } from '../rewrite/our-containers.js';
import { readOptOut, rewritePodSpec } from '../rewrite/pod.js';
import { readRecord } from '../rewrite/record.js';
import type { Container, PodSpec, RewriteOptions, UntouchedCause } from '../rewrite/types.js';
import { asObject, stringMap } from './json.js';
import type { Json } from './kube-client.js';

/** Why a pod the webhook sees is left as it came, one word each (docs/analyze.md#the-classes). */
export type UntouchedReason =
  | 'opted-out'
  | 'not-selected'
  | 'mesh-probed'
  | 'no-probe'
  | 'invalid'
  | UntouchedCause;

export const UNTOUCHED_REASONS: readonly UntouchedReason[] = [
  'opted-out',
  'not-selected',
  'osm-mesh',
  'mesh-probed',
  'no-probe',
  'host-network',
  'windows',
  'run-to-completion',
  'pod-security',
  'admission-rules',
  'invalid',
];

export type PodClass =
  | { class: 'covered' | 'stale' | 'uncovered' | 'failing'; detail: string }
  | { class: 'untouched'; reason: UntouchedReason; detail: string };

export const CLASSES = ['covered', 'stale', 'uncovered', 'untouched', 'failing'] as const;
export type ClassName = (typeof CLASSES)[number];

/** A class that a person has to act on: a restart brings the companion, or the companion needs a look. */
export function needsAction(found: PodClass): boolean {
  return (
    found.class === 'stale' ||
    found.class === 'uncovered' ||
    found.class === 'failing' ||
    (found.class === 'untouched' && found.reason === 'invalid')
  );
}

/** What a pod created now gets: the webhook's image and the release that writes its record. */
export interface Current {
  /** The webhook's --image, when its Deployment could be read. */
  image: string | undefined;
  /** The release whose record a pod created now carries. */
  version: string;
}

export interface PodContext {
  current: Current;
  /** The webhook sees this pod: its namespace and labels match the webhook's selectors. */
  selected: { namespace: boolean; object: boolean };
  /** The options the webhook would rewrite this pod with (its namespace's rules, the kubelets, the versions). */
  options: RewriteOptions;
}

export const podAnnotations = (pod: Json) => stringMap(asObject(pod.metadata).annotations);
export const podLabels = (pod: Json) => stringMap(asObject(pod.metadata).labels);

/** Our companion in the pod, wherever the release that injected it put it. */
function companionOf(spec: PodSpec): Container | undefined {
  const all = [
    ...(Array.isArray(spec.initContainers) ? spec.initContainers : []),
    ...(spec.containers ?? []),
  ];
  return all.find((c) => c?.name === COMPANION_NAME && isInjectMade(c));
}

/** The companion's restarts as kubelet reports them; undefined when it never restarted or was never OOM-killed. */
function restarts(status: Json): string | undefined {
  const statuses = [status.containerStatuses, status.initContainerStatuses].flatMap((list) =>
    Array.isArray(list) ? list : [],
  );
  const ours = statuses.map(asObject).find((s) => s.name === COMPANION_NAME);
  if (ours === undefined) return undefined;
  const count = typeof ours.restartCount === 'number' ? ours.restartCount : 0;
  const last = asObject(asObject(ours.lastState).terminated);
  const oom = last.reason === 'OOMKilled';
  if (count === 0 && !oom) return undefined;
  const lastWords = typeof last.reason === 'string' ? `, last ended ${last.reason}` : '';
  return `the companion restarted ${count} time${count === 1 ? '' : 's'}${lastWords}`;
}

function coveredClass(pod: Json, companion: Container, current: Current): PodClass {
  const failing = restarts(asObject(pod.status));
  if (failing !== undefined) return { class: 'failing', detail: failing };
  const image = typeof companion.image === 'string' ? companion.image : '';
  const read = readRecord(podAnnotations(pod));
  if (current.image !== undefined && image !== current.image) {
    return { class: 'stale', detail: `companion image ${image}; the webhook injects ${current.image}` };
  }
  if (read.state === 'absent') {
    return {
      class: 'stale',
      detail: `companion image ${image}, injected by a release before ${current.version}`,
    };
  }
  if (read.state === 'invalid') {
    return { class: 'stale', detail: `its osm-healthcheck/status ${read.problem}` };
  }
  if (read.record.version !== current.version) {
    return {
      class: 'stale',
      detail: `injected by ${read.record.version}; a pod created now gets ${current.version}`,
    };
  }
  const where = read.record.placement === 'native-sidecar' ? 'native sidecar' : 'first container';
  return { class: 'covered', detail: `${read.record.version}, ${image}, ${where}, ${read.record.bypass}` };
}

/** The class of one live pod. */
export function classifyPod(pod: Json, context: PodContext): PodClass {
  const spec = asObject(pod.spec) as PodSpec;
  const companion = companionOf(spec);
  if (companion !== undefined) return coveredClass(pod, companion, context.current);
  const annotations = podAnnotations(pod);
  const optOut = readOptOut(annotations);
  if ('optedOut' in optOut && optOut.optedOut) {
    return { class: 'untouched', reason: 'opted-out', detail: 'osm-healthcheck/rewrite-probes: "false"' };
  }
  if (!context.selected.object) {
    return {
      class: 'untouched',
      reason: 'not-selected',
      detail: "the webhook's objectSelector leaves it out (the webhook's own pods)",
    };
  }
  const meta = asObject(pod.metadata);
  const resource = `Pod/${String(meta.name ?? meta.generateName ?? '')}`;
  let result: ReturnType<typeof rewritePodSpec>;
  try {
    result = rewritePodSpec(spec, annotations, context.options, resource);
  } catch (err) {
    if (!isHealthcheckError(err)) throw err;
    return { class: 'untouched', reason: 'invalid', detail: `the webhook cannot rewrite it: ${err.message}` };
  }
  const placement = result.placement;
  if (placement?.companion === 'untouched') {
    return { class: 'untouched', reason: placement.cause, detail: placement.reason };
  }
  if (result.changed && placement !== undefined) {
    const where = placement.companion === 'native-sidecar' ? 'a native sidecar' : 'the first container';
    return {
      class: 'uncovered',
      detail: `no companion, though the webhook would inject it now (as ${where}): created while the webhook was down, unreachable or slow, or before its namespace was labelled`,
    };
  }
  const mesh = recogniseMesh(spec, annotations, false);
  return mesh === undefined
    ? { class: 'untouched', reason: 'no-probe', detail: 'no httpGet, tcpSocket or grpc probe to rewrite' }
    : {
        class: 'untouched',
        reason: 'mesh-probed',
        detail: `${mesh.title} injected it and its own prober has the probes`,
      };
}
