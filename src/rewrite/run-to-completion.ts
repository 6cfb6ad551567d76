// Where the companion goes in one pod, the pod's restartPolicy included. A pod that must end (restartPolicy
// Never or OnFailure: Jobs, CronJobs, bare pods) cannot take the companion as an ordinary container: it never
// exits, so the pod never completes (Istio's Jobs issue). A native sidecar can: kubelet stops native sidecars
// once every regular container has terminated (KEP-753). Where the cluster has none, or its version is not
// known, such a pod is left as it was, with a warning; `osm-healthcheck/run-to-completion` forces either choice.

import { briefMessage, describeValue } from '../errors.js';
import { COMPANION_NAME } from './companion.js';
import { AnnotationError, ManifestError } from './manifest-error.js';
import {
  type ClusterKnowledge,
  choosePlacement,
  hasNativeSidecars,
  judge,
  type KubeletKnowledge,
  lacking,
  type PlacementMode,
} from './placement.js';
import type { CompanionDecision, Container, PodSpec } from './types.js';

export const RUN_TO_COMPLETION_ANNOTATION = 'osm-healthcheck/run-to-completion';
export const RUN_TO_COMPLETION_VALUES = ['native-sidecar', 'skip'] as const;
/** The annotation's values: the companion as a native sidecar (the user vouches for the cluster), or none. */
export type RunToCompletionForce = (typeof RUN_TO_COMPLETION_VALUES)[number];

export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;
export type RestartPolicy = (typeof RESTART_POLICIES)[number];

/** Where an earlier inject put the companion in this pod. */
export type ExistingCompanion = 'none' | 'container' | 'native-sidecar';

export interface CompanionInputs {
  /** The pod's restartPolicy; absent in the pod means Always. */
  restartPolicy: RestartPolicy;
  /** The pod (template)'s `osm-healthcheck/run-to-completion`, if set. */
  force: RunToCompletionForce | undefined;
  /** --placement: for pods that keep running; `native-sidecar` also vouches for an unchecked cluster here. */
  placement: PlacementMode;
  cluster: ClusterKnowledge;
  kubelets: KubeletKnowledge;
  existing: ExistingCompanion;
}

/** The annotation's value, or undefined when unset; a string saying what is wrong with any other value. */
export function readRunToCompletion(
  annotations: Readonly<Record<string, string>> | undefined,
): { force: RunToCompletionForce | undefined } | { invalid: string } {
  const raw = annotations?.[RUN_TO_COMPLETION_ANNOTATION];
  if (raw === undefined) return { force: undefined };
  const value = raw.trim().toLowerCase();
  const found = RUN_TO_COMPLETION_VALUES.find((allowed) => allowed === value);
  if (found !== undefined) return { force: found };
  return { invalid: `must be one of ${RUN_TO_COMPLETION_VALUES.join(', ')}, got ${describeValue(raw)}` };
}

export function isRunToCompletion(restartPolicy: RestartPolicy): boolean {
  return restartPolicy !== 'Always';
}

/** The whole decision: pure, table-tested over every combination (test/rewrite/run-to-completion.test.ts). */
export function decideCompanion(inputs: CompanionInputs): CompanionDecision {
  const { restartPolicy, force, placement, cluster, kubelets, existing } = inputs;
  if (!isRunToCompletion(restartPolicy)) {
    const chosen = choosePlacement(placement, cluster, kubelets);
    return { companion: chosen.native ? 'native-sidecar' : 'first', reason: chosen.reason };
  }
  const pod = `restartPolicy ${restartPolicy}`;
  // `cause`: why no native sidecar, short; `hint`: what the user can do. One line each, under the API server's
  // 256 characters with the resource in front (src/webhook/warnings.ts).
  const untouched = (cause: string, hint?: string, warn = true): CompanionDecision =>
    existing === 'container'
      ? // An ordinary companion from an earlier release is kept where nothing better is allowed: taking it out
        // would need the original probes back. The user has to hear that this pod cannot complete.
        {
          companion: 'untouched',
          cause: 'run-to-completion',
          reason: `${pod}: never completes: its companion container (an earlier inject's) never exits; kept, as ${cause}`,
          warn: true,
        }
      : {
          companion: 'untouched',
          cause: 'run-to-completion',
          reason: `${pod}: left untouched, as ${cause}${hint ? `: ${hint}` : ''}`,
          warn,
        };
  const native = (why: string): CompanionDecision => ({
    companion: 'native-sidecar',
    reason: `${pod}: the companion is a native sidecar, which kubelet stops once the containers end: ${why}`,
  });
  const annotate = `annotate ${RUN_TO_COMPLETION_ANNOTATION}: native-sidecar`;

  if (force === 'skip') return untouched(`${RUN_TO_COMPLETION_ANNOTATION} is skip`, undefined, false);
  // Whatever the placement mode: a companion container would never let the pod complete.
  const sidecarGate = cluster.state === 'known' && cluster.sidecarGate;
  const has = judge(cluster, kubelets, (version) => hasNativeSidecars(version, sidecarGate));
  if (has.state === 'meets') return native(has.clauses);
  if (has.state === 'below') {
    const { party } = has;
    if (force === 'native-sidecar') {
      return untouched(`${RUN_TO_COMPLETION_ANNOTATION} is native-sidecar, but ${party.clause}`);
    }
    // An old kubelet drops restartPolicy: the native sidecar is an init container that never ends.
    const why = party.kubelet
      ? 'it would never start the containers'
      : 'a companion container would never let the pod complete';
    return untouched(`${party.clause}, ${lacking(party, has.sidecarGate)}`, why);
  }
  // Not known: a native sidecar only where someone vouches for the cluster.
  if (force === 'native-sidecar') return native(`${RUN_TO_COMPLETION_ANNOTATION} asks for one`);
  if (existing === 'native-sidecar') return native('an earlier inject made it one');
  if (has.state === 'unchecked') {
    if (placement === 'native-sidecar') return native('--placement native-sidecar vouches for the cluster');
    return untouched(
      'the Kubernetes version is not known',
      `pass --kube-version or --placement native-sidecar, or ${annotate}`,
    );
  }
  const every = has.kubelets ? 'every kubelet is' : 'it is';
  return untouched(`${has.notKnown} (${briefMessage(has.why, 60)})`, `if ${every} 1.29+, ${annotate}`);
}

/** What the decision reads from one pod spec; throws ManifestError for a restartPolicy Kubernetes refuses. */
export function podFacts(
  spec: PodSpec,
  annotations: Readonly<Record<string, string>> | undefined,
  resource: string,
): Pick<CompanionInputs, 'restartPolicy' | 'force' | 'existing'> {
  const raw = spec.restartPolicy ?? 'Always';
  const restartPolicy = RESTART_POLICIES.find((policy) => policy === raw);
  if (restartPolicy === undefined) {
    const allowed = RESTART_POLICIES.join(', ');
    throw new ManifestError(
      resource,
      ['restartPolicy'],
      `must be one of ${allowed}, got ${describeValue(raw)}`,
    );
  }
  const read = readRunToCompletion(annotations);
  if ('invalid' in read) {
    throw new AnnotationError(resource, RUN_TO_COMPLETION_ANNOTATION, read.invalid);
  }
  const named = (list: unknown) =>
    Array.isArray(list) && list.some((c: Container | null) => c?.name === COMPANION_NAME);
  const existing = named(spec.initContainers)
    ? 'native-sidecar'
    : named(spec.containers)
      ? 'container'
      : 'none';
  return { restartPolicy, force: read.force, existing };
}
