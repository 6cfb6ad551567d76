// kubectl's default container. kubectl logs/exec/attach/cp without `-c` take the first container, which is the
// companion once the rewrite puts it first; from 1.21 they take the container this annotation names instead
// (k8s.io/kubectl/pkg/cmd/util/podcmd FindOrDefaultContainerByName). So the rewrite names the app there, as
// Istio's injection template does (`if not (isset .ObjectMeta.Annotations ...)`): only when the pod has no
// value of its own, whatever that value is.

import { COMPANION_NAME } from './companion.js';
import type { PodSpec } from './types.js';

export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/**
 * The annotations to add to a pod (template) whose rewritten spec is `spec`: kubectl's default container, the
 * first container that is not the companion, when the companion is first among the containers and the pod
 * does not set one. None for a native-sidecar companion: it is an init container, which kubectl never defaults
 * to, so the app is first already.
 */
export function defaultContainerAnnotations(
  spec: PodSpec,
  annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const containers = spec.containers ?? [];
  if (containers[0]?.name !== COMPANION_NAME) return {};
  if (annotations !== undefined && Object.hasOwn(annotations, DEFAULT_CONTAINER_ANNOTATION)) return {};
  const app = containers.find((container) => container.name !== COMPANION_NAME)?.name;
  return app === undefined ? {} : { [DEFAULT_CONTAINER_ANNOTATION]: app };
}
