// Each namespace's Pod Security enforce level, kept from a list and watch of namespaces (reflector.ts). The
// AdmissionReview names the pod's namespace but carries none of its labels, hence this cache. Admissions never wait
// for it: a namespace it has not seen is `unknown`, and the rewrite then adds nothing the namespace might refuse
// (interception.ts).

import { keptNamespace } from '../cluster/namespace-policies.js';
import type { EnforcedPolicy, PodSecurityKnowledge, PodSecurityLevel } from '../rewrite/pod-security.js';
import { reflect, type WatchOptions, watchOptions } from './reflector.js';

export interface NamespacePoliciesOptions extends WatchOptions {
  /** The PodSecurity admission configuration's defaults.enforce, for namespaces without the label. */
  defaultLevel: PodSecurityLevel;
}

export interface NamespacePolicies {
  /** Now, without waiting. */
  knowledge(namespace: string | undefined): PodSecurityKnowledge;
  /** Why admissions would be guesses (namespaces never listed yet), or undefined. */
  notReady(): string | undefined;
  close(): void;
}

export function watchNamespacePolicies(options: NamespacePoliciesOptions): NamespacePolicies {
  const { defaultLevel } = options;
  const namespaces = reflect<EnforcedPolicy>({
    ...watchOptions(options),
    path: '/api/v1/namespaces',
    resource: 'namespaces',
    kind: 'namespace',
    keep: (object, name) => keptNamespace(object, name, defaultLevel),
    unlisted: 'pods get no init container until they are',
    lagging: 'Pod Security levels may lag until it is back',
  });
  return {
    knowledge(namespace) {
      if (namespace === undefined) {
        return { state: 'unknown', namespace: '', why: 'the admission request names no namespace' };
      }
      const store = namespaces.store();
      if (store === undefined) return { state: 'unknown', namespace, why: namespaces.notListed() ?? '' };
      const policy = store.get('')?.get(namespace);
      return policy === undefined
        ? { state: 'unknown', namespace, why: 'not in the namespace watch yet' }
        : { state: 'known', policy };
    },
    notReady: namespaces.notListed,
    close: namespaces.close,
  };
}
