// What the API server's admission of a pod's resources depends on that changed between the Kubernetes versions we
// support (1.26 to 1.36): LimitRanger's sum over a pod (1.27), native sidecars counted in a pod's requests and
// limits (1.28 behind a gate, 1.29 on), pod-level resources (1.32 alpha, 1.34 beta and on). The admission mirror
// (rewrite/resources/) judges a pod under each set of rules the version that will judge it may hold.

import { atLeast, type KubeVersion } from '../kube-version.js';

export interface VersionRules {
  /**
   * PodLevelResources is on, so `spec.resources` counts (KEP-2837: alpha, off by default, in 1.32 and 1.33; beta,
   * on by default, from 1.34). Before 1.32 the API server drops the field.
   */
  podLevel: boolean;
  /**
   * LimitRanger's items of type Pod see a resource only where every container declares it: up to 1.26,
   * plugin/pkg/admission/limitranger/admission.go PodValidateLimitFunc added the containers up with `sum`, which
   * "omits the key" a container lacks ("maximum cpu usage per Pod is 400m.  No limit is specified"), then took the
   * larger of that and each init container. From 1.27 (kubernetes/kubernetes#115367, which gave LimitRanger its
   * copy of resourcehelper's PodRequests and PodLimits) it adds up what is there.
   */
  podItemsNeedEveryContainer: boolean;
  /**
   * An init container's `restartPolicy: Always` is kept, making it a native sidecar that LimitRanger and the quota
   * evaluator add to the pod's requests and limits (KEP-753: 1.28 with the SidecarContainers gate, on from 1.29).
   * Before that the field is dropped and the container counts as any init container.
   */
  nativeSidecars: boolean;
}

/** The rules of one API server version (both pod-level worlds where the feature is alpha, 1.32 and 1.33). */
export function rulesOfVersion(version: KubeVersion, sidecarGate: boolean): VersionRules[] {
  if (version.major !== 1) return EVERY_SUPPORTED_VERSION;
  const base = {
    podItemsNeedEveryContainer: !atLeast(version, 1, 27),
    nativeSidecars: atLeast(version, 1, 29) || (sidecarGate && atLeast(version, 1, 28)),
  };
  if (atLeast(version, 1, 34)) return [{ ...base, podLevel: true }];
  if (atLeast(version, 1, 32)) return [false, true].map((podLevel) => ({ ...base, podLevel }));
  return [{ ...base, podLevel: false }];
}

/**
 * Where the version is not known: a decision must hold under every supported version's rules. Newest first, so
 * that what a refusal says is what today's API servers say.
 */
export const EVERY_SUPPORTED_VERSION: VersionRules[] = [
  { podItemsNeedEveryContainer: false, nativeSidecars: true, podLevel: false },
  { podItemsNeedEveryContainer: false, nativeSidecars: true, podLevel: true },
  { podItemsNeedEveryContainer: false, nativeSidecars: false, podLevel: false },
  { podItemsNeedEveryContainer: true, nativeSidecars: false, podLevel: false },
];
