// Before install, what the webhook would do once it runs: where the companion goes (the API server's and the
// kubelets' versions), and in each namespace labelled for injection what its Pod Security level and its
// LimitRanges and ResourceQuotas leave of the companion, asked of the same rewritePodSpec the webhook runs on a
// sample pod with a probe. Pure: the facts as read, the checks and the injected sample for the dry run.

import { rewriteOptionsFor } from '../cluster/view.js';
import { COMPANION_NAME, INIT_NAME } from '../rewrite/companion.js';
import { MESH_FORMATS } from '../rewrite/mesh-exclusion.js';
import type { KubeletKnowledge } from '../rewrite/placement.js';
import { rewritePodSpec } from '../rewrite/pod.js';
import type { EnforcedPolicy } from '../rewrite/pod-security.js';
import { COMPANION_RESOURCES } from '../rewrite/resources/defaults.js';
import type { LimitRange, ResourceQuota } from '../rewrite/resources/namespace-rules.js';
import { decideCompanion } from '../rewrite/run-to-completion.js';
import type { Container, PodSpec, RewriteOptions, UntouchedCause } from '../rewrite/types.js';
import type { Check } from './checks.js';
import { type Knowledge, type NamespaceRules, snapshotView } from './cluster-reads.js';
import { roundTripPod } from './dry-run.js';
import type { Json } from './kube-client.js';

/** A labelled namespace as read: its Pod Security policy, and its rules (undefined where they could not be listed). */
export interface NamespaceFacts {
  name: string;
  policy: EnforcedPolicy;
  rules: NamespaceRules | undefined;
}

const check = (name: string, status: Check['status'], detail: string): Check => ({
  section: 'pre',
  name,
  status,
  detail,
});

/** The versions, and where the companion goes in a pod that keeps running and in one that must end (a Job's). */
export function placementChecks(versions: string, knowledge: Knowledge): Check[] {
  const { settings, cluster, kubelets } = knowledge;
  const decide = (restartPolicy: 'Always' | 'Never') =>
    decideCompanion({
      restartPolicy,
      force: undefined,
      placement: settings.placement,
      cluster,
      kubelets,
      existing: 'none',
    });
  const running = decide('Always');
  const ending = decide('Never');
  return [
    check('versions', kubelets.state === 'known' && cluster.state === 'known' ? 'ok' : 'warn', versions),
    check('placement', 'ok', `pods that keep running: ${running.reason}`),
    ending.companion === 'untouched'
      ? check('placement', 'warn', `pods that must end (Jobs, CronJobs): ${ending.reason}`)
      : check('placement', 'ok', `pods that must end (Jobs, CronJobs): ${ending.reason}`),
  ];
}

/** `API server v1.32.13; kubelets: the oldest of 3 nodes ("n1") runs 1.31`. */
export function versionsLine(serverVersion: string, kubelets: KubeletKnowledge): string {
  const nodes =
    kubelets.state === 'known'
      ? `${kubelets.source} runs kubelet ${kubelets.version.major}.${kubelets.version.minor}`
      : kubelets.state === 'unknown'
        ? `the kubelets' versions are not known (${kubelets.why})`
        : 'the kubelets were not asked';
  return `the API server runs ${serverVersion}; ${nodes}`;
}

/** The pod the dry run sends, as the webhook would leave it in the namespace; `injected`: it got the companion. */
export interface Sample {
  namespace: string;
  pod: Json;
  injected: boolean;
  /** The rewrite's reason for leaving it as it came, and its cause. */
  untouched?: string;
  cause?: UntouchedCause;
}

/**
 * Where Pod Security refuses our init container the companion still joins pods whose mesh annotation excludes
 * 15901-15904 (docs/pod-security.md): the sample there carries one, so the dry run tests the companion itself.
 */
const EXCLUSION = { [MESH_FORMATS.istio.annotation]: '15901,15902,15903,15904' };

export const optionsFor = (facts: NamespaceFacts, knowledge: Knowledge): RewriteOptions =>
  // Rules it may not read are left to the dry run, where the API server applies them: the defaults go in.
  rewriteOptionsFor(
    snapshotView(
      knowledge,
      () => facts.policy,
      () => facts.rules,
    ),
    knowledge.settings,
    { namespace: facts.name },
  );

/** The sample pod through the rewrite, with the namespace's knowledge. */
export function injectSample(facts: NamespaceFacts, options: RewriteOptions): Sample {
  const pod = roundTripPod();
  const metadata = pod.metadata as Json;
  const annotations: Record<string, string> = facts.policy.level === 'privileged' ? {} : { ...EXCLUSION };
  const result = rewritePodSpec(pod.spec as PodSpec, annotations, options, 'Pod/osm-healthcheck-analyze');
  const all = { ...annotations, ...result.annotations };
  const injected = { ...pod, metadata: { ...metadata, annotations: all }, spec: result.spec };
  if (result.placement?.companion === 'untouched') {
    const { reason, cause } = result.placement;
    return { namespace: facts.name, pod: injected, injected: false, untouched: reason, cause };
  }
  return { namespace: facts.name, pod: injected, injected: companionOf(result.spec) !== undefined };
}

function companionOf(spec: PodSpec): Container | undefined {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])].find((c) => c.name === COMPANION_NAME);
}

/** `requests cpu 50m, memory 32Mi; limits memory 320Mi`. */
export function describeResources(resources: unknown): string {
  const r = (resources ?? {}) as { requests?: Record<string, string>; limits?: Record<string, string> };
  const list = (map: Record<string, string> | undefined) =>
    Object.entries(map ?? {})
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  return `requests ${list(r.requests) || 'none'}; limits ${list(r.limits) || 'none'}`;
}

const DEFAULTS = describeResources(COMPANION_RESOURCES);

const names = (kind: string, list: readonly (LimitRange | ResourceQuota)[]) =>
  list.map((o) => `${kind} ${o.metadata?.name ?? '<unnamed>'}`);

/** The namespace's Pod Security level and what it allows of ours. */
export function podSecurityCheck(facts: NamespaceFacts): Check {
  const { level, version, source } = facts.policy;
  const where = `${facts.name}: Pod Security ${level}:${version} (${source})`;
  return level === 'privileged'
    ? check('pod-security', 'ok', `${where}: the companion and its init container`)
    : check(
        'pod-security',
        'warn',
        `${where} refuses our init container (NET_ADMIN, NET_RAW): pods get the companion only where their mesh's annotation excludes 15901-15904, the others are left untouched (docs/pod-security.md)`,
      );
}

/** The namespace's LimitRanges and ResourceQuotas, and what the fit makes of the companion there. */
export function rulesCheck(facts: NamespaceFacts, sample: Sample, right: string): Check {
  if (facts.rules === undefined) {
    return check(
      'namespace-rules',
      'skip',
      `cannot check ${facts.name}'s LimitRanges and ResourceQuotas and what the fit does with them: needs ${right}`,
    );
  }
  const rules = [
    ...names('LimitRange', facts.rules.limitRanges),
    ...names('ResourceQuota', facts.rules.resourceQuotas),
  ];
  const what = rules.length === 0 ? 'no LimitRange or ResourceQuota' : rules.join(', ');
  if (!sample.injected) {
    return check(
      'namespace-rules',
      sample.cause === 'admission-rules' ? 'warn' : 'ok',
      `${facts.name}: ${what}; a pod with a probe is ${sample.untouched ?? 'left untouched'}`,
    );
  }
  const spec = sample.pod.spec as PodSpec;
  const companion = describeResources(companionOf(spec)?.resources);
  const init = [...(spec.initContainers ?? [])].find((c) => c.name === INIT_NAME);
  const fitted =
    companion === DEFAULTS
      ? `its defaults (${companion})`
      : `${companion} (fitted; the defaults: ${DEFAULTS})`;
  const initResources = describeResources(init?.resources);
  const initText =
    init === undefined
      ? ', no init container'
      : initResources === companion
        ? ', the init container the same'
        : `, the init container ${initResources}`;
  return check('namespace-rules', 'ok', `${facts.name}: ${what}; the companion gets ${fitted}${initText}`);
}
