// Each namespace's LimitRanges and ResourceQuotas (status included: ResourceQuota admission decides from its
// `used`), kept from a list and watch of each across namespaces (reflector.ts), as the webhook keeps Pod Security
// levels. A namespace's rules are known only once both were listed: until then the pod is left untouched with a
// warning (rewrite/resources/namespace-rules.ts), never fitted to half the rules. A namespace without any is known to have none.

import { keptLimitRange, keptResourceQuota } from '../cluster/namespace-rules.js';
import type {
  LimitRange,
  NamespaceRulesKnowledge,
  ResourceQuota,
} from '../rewrite/resources/namespace-rules.js';
import { type Reflector, reflect, type WatchOptions, watchOptions } from './reflector.js';

export interface NamespaceRules {
  /** Now, without waiting. */
  knowledge(namespace: string | undefined): NamespaceRulesKnowledge;
  /** Which of the two were never listed yet, and why; undefined once both were. */
  notReady(): string | undefined;
  close(): void;
}

const LAGGING = 'pods are fitted to LimitRanges and ResourceQuotas as last seen until it is back';
const UNLISTED = 'pods are left untouched until they are';

export function watchNamespaceRules(options: WatchOptions): NamespaceRules {
  const common = { ...watchOptions(options), unlisted: UNLISTED, lagging: LAGGING };
  const limitRanges: Reflector<LimitRange> = reflect({
    ...common,
    path: '/api/v1/limitranges',
    resource: 'limitranges',
    kind: 'LimitRange',
    keep: keptLimitRange,
  });
  const resourceQuotas: Reflector<ResourceQuota> = reflect({
    ...common,
    path: '/api/v1/resourcequotas',
    resource: 'resourcequotas',
    kind: 'ResourceQuota',
    keep: keptResourceQuota,
  });
  const notReady = () => {
    const missing = [limitRanges.notListed(), resourceQuotas.notListed()].filter((why) => why !== undefined);
    return missing.length === 0 ? undefined : missing.join('; ');
  };
  return {
    knowledge(namespace) {
      if (namespace === undefined) {
        return { state: 'unknown', namespace: '', why: 'the admission request names no namespace' };
      }
      const ranges = limitRanges.store();
      const quotas = resourceQuotas.store();
      if (ranges === undefined || quotas === undefined) {
        return { state: 'unknown', namespace, why: notReady() ?? '' };
      }
      return {
        state: 'known',
        namespace,
        limitRanges: [...(ranges.get(namespace)?.values() ?? [])],
        resourceQuotas: [...(quotas.get(namespace)?.values() ?? [])],
      };
    },
    notReady,
    close() {
      limitRanges.close();
      resourceQuotas.close();
    },
  };
}
