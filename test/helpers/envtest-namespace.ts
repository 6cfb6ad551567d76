// A namespace and its admission rules made for real on an envtest API server, and what the rewrite is told of
// them: the objects read back from that API server (as the webhook's caches and inject's input hold them).

import { type KubeVersion, versionFromApi } from '../../src/kube-version.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import { enforcedPolicy } from '../../src/rewrite/pod-security.js';
import type { LimitRange, ResourceQuota } from '../../src/rewrite/resources/namespace-rules.js';
import type { PodSpec, RewriteOptions, RewriteResult } from '../../src/rewrite/types.js';
import type { KubeClient } from './envtest-client.js';
import { until } from './until.js';

type Json = Record<string, unknown>;
export type Pod = Json & { metadata: Json & { annotations?: Record<string, string> }; spec: PodSpec };

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';

/** Where a rule object is created: namespaced kinds in `namespace`, policies cluster-wide. */
function collection(kind: string, namespace: string): string {
  switch (kind) {
    case 'LimitRange':
      return `/api/v1/namespaces/${namespace}/limitranges`;
    case 'ResourceQuota':
      return `/api/v1/namespaces/${namespace}/resourcequotas`;
    case 'ValidatingAdmissionPolicy':
      return `${ADMISSION}/validatingadmissionpolicies`;
    case 'ValidatingAdmissionPolicyBinding':
      return `${ADMISSION}/validatingadmissionpolicybindings`;
    default:
      throw new Error(`envtest namespace: no rule of kind ${kind}`);
  }
}

/** The namespace with `labels`, then each rule; a ResourceQuota gets the status the quota controller would write. */
export async function makeNamespace(
  client: KubeClient,
  name: string,
  labels: Record<string, string>,
  rules: readonly Json[],
): Promise<void> {
  await client.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels },
  });
  for (const rule of rules) {
    const kind = String(rule.kind);
    await client.create(collection(kind, name), rule);
    if (kind === 'ResourceQuota') {
      const used = ((rule.status as Json | undefined)?.used ?? {}) as Record<string, string>;
      await client.writeQuotaStatus(name, String((rule.metadata as Json).name), used);
    }
  }
}

/**
 * Waits until `pod` is refused in `namespace`: admission plugins read ResourceQuotas and policies from
 * informers, which see a new object (or a quota's first status) a moment after it is written.
 */
export async function untilRefused(client: KubeClient, namespace: string, pod: Json): Promise<string> {
  let message = '';
  await until(`namespace ${namespace}: its rules refuse the probe pod`, async () => {
    const result = await client.dryRunPod(namespace, pod);
    if (!result.admitted) message = result.message;
    return !result.admitted;
  });
  return message;
}

export interface NamespaceFacts {
  namespace: string;
  labels: Record<string, string>;
  limitRanges: LimitRange[];
  resourceQuotas: ResourceQuota[];
  version: KubeVersion;
}

/** What the webhook would know of `namespace`, read back from the API server. */
export async function namespaceFacts(client: KubeClient, namespace: string): Promise<NamespaceFacts> {
  const items = async (path: string) => ((await client.get(path)).items ?? []) as Json[];
  const object = await client.get(`/api/v1/namespaces/${namespace}`);
  return {
    namespace,
    labels: ((object.metadata as Json).labels ?? {}) as Record<string, string>,
    limitRanges: (await items(`/api/v1/namespaces/${namespace}/limitranges`)) as LimitRange[],
    resourceQuotas: (await items(`/api/v1/namespaces/${namespace}/resourcequotas`)) as ResourceQuota[],
    version: versionFromApi(await client.get('/version')),
  };
}

/** The options the webhook would rewrite with in that namespace (Pod Security default privileged). */
export function factsOptions(facts: NamespaceFacts, options: Partial<RewriteOptions> = {}): RewriteOptions {
  return {
    image: 'registry.example.com/osm-healthcheck:envtest',
    placement: 'first',
    cluster: { state: 'known', version: facts.version, sidecarGate: false },
    podSecurity: { state: 'known', policy: enforcedPolicy(facts.labels, 'privileged', facts.namespace) },
    namespaceRules: {
      state: 'known',
      namespace: facts.namespace,
      limitRanges: facts.limitRanges,
      resourceQuotas: facts.resourceQuotas,
    },
    ...options,
  };
}

/** `pod` through the project's own rewrite, as the webhook would patch it. */
export function injectPod(pod: Pod, options: RewriteOptions): { pod: Pod; result: RewriteResult } {
  const result = rewritePodSpec(pod.spec, pod.metadata.annotations, options, `Pod/${podName(pod)}`);
  const annotations = { ...pod.metadata.annotations, ...result.annotations };
  const metadata = Object.keys(annotations).length === 0 ? pod.metadata : { ...pod.metadata, annotations };
  return { pod: { ...pod, metadata, spec: result.spec }, result };
}

export function podName(pod: Pod): string {
  return String(pod.metadata.name ?? `${String(pod.metadata.generateName ?? 'pod-')}*`);
}

/** Our two containers' names in the pod, wherever they went. */
export function ourContainers(pod: { spec: PodSpec }): string[] {
  return [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])]
    .map((c) => String(c.name))
    .filter((name) => name === 'osm-healthcheck' || name === 'osm-healthcheck-init');
}

/** Where the companion went: a native sidecar (an init container), first among the containers, or nowhere. */
export function companionPlacement(pod: { spec: PodSpec }): 'native-sidecar' | 'first' | 'none' {
  const named = (list: PodSpec['containers']) => (list ?? []).some((c) => c.name === 'osm-healthcheck');
  if (named(pod.spec.initContainers)) return 'native-sidecar';
  return named(pod.spec.containers) ? 'first' : 'none';
}
