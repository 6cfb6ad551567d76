// Whether the API server admits a pod with the companion in each labelled namespace, before the webhook exists:
// a server-side dry-run create (dryRun=All: every admission runs, nothing is stored) of the sample as the
// rewrite would leave it there, so ValidatingAdmissionPolicies, Pod Security and other webhooks judge it for
// real and a refusal names its rule. Without the right to create pods, the ValidatingAdmissionPolicies on pods
// are listed instead, and said to be untested.

import type { Check } from './checks.js';
import { roundTripPod } from './dry-run.js';
import { asObject } from './json.js';
import type { ClusterClient, Json } from './kube-client.js';
import { eachItem } from './paged-list.js';
import type { Sample } from './pre-namespaces.js';
import { matchesPodCreate } from './pre-webhooks.js';

/** The API's versions of ValidatingAdmissionPolicy, newest first: v1 from 1.30, v1beta1 on 1.28-1.29. */
const POLICY_VERSIONS = ['v1', 'v1beta1'] as const;

export type PolicyList =
  | { state: 'listed'; version: string; onPods: string[] }
  | { state: 'none'; why: string }
  | { state: 'forbidden' };

/** Names of the policies whose matchConstraints take pods as they are created. */
export function policiesOnPods(policies: readonly Json[]): string[] {
  return policies
    .filter((p) => {
      const rules = asObject(asObject(p.spec).matchConstraints).resourceRules;
      return Array.isArray(rules) && rules.map(asObject).some(matchesPodCreate);
    })
    .map((p) => String(asObject(p.metadata).name ?? ''));
}

export async function listPodPolicies(client: ClusterClient): Promise<PolicyList> {
  for (const version of POLICY_VERSIONS) {
    const items: Json[] = [];
    const listed = await eachItem(
      client,
      `/apis/admissionregistration.k8s.io/${version}/validatingadmissionpolicies`,
      (item) => items.push(item),
    );
    if (listed.ok) return { state: 'listed', version, onPods: policiesOnPods(items) };
    if (listed.status === 403) return { state: 'forbidden' };
    if (listed.status !== 404) return { state: 'none', why: `listing them failed: ${listed.message}` };
  }
  return {
    state: 'none',
    why: 'this API server serves no ValidatingAdmissionPolicy (beta from 1.28, GA in 1.30)',
  };
}

export type Trial = { admitted: true } | { admitted: false; message: string } | { forbidden: true };

/** One server-side dry-run create; `forbidden`: RBAC refused the caller, not admission the pod. */
export async function dryRunCreate(client: ClusterClient, namespace: string, pod: Json): Promise<Trial> {
  const reply = await client.post(`/api/v1/namespaces/${namespace}/pods?dryRun=All`, pod);
  if (reply.ok) return { admitted: true };
  if (reply.status === 403 && /cannot create resource "pods"/.test(reply.message)) return { forbidden: true };
  return { admitted: false, message: reply.message };
}

const check = (status: Check['status'], detail: string): Check => ({
  section: 'pre',
  name: 'admission-policies',
  status,
  detail,
});

/**
 * The verdict on one namespace's trials: the sample with the companion, and where it was refused, the pod as it
 * came (a refusal of both is not ours) and the sample with a CPU limit (what --companion-cpu-limit would do).
 */
export function judgeTrials(
  namespace: string,
  withCompanion: { admitted: true } | { admitted: false; message: string },
  plain: Trial | undefined,
  withCpuLimit: { limit: string; trial: Trial } | undefined,
): Check {
  const where = `${namespace}: a server-side dry-run create of a pod with the companion`;
  if (withCompanion.admitted)
    return check(
      'ok',
      `${where} was admitted (ValidatingAdmissionPolicies, Pod Security and webhooks included)`,
    );
  const message = withCompanion.message;
  if (plain !== undefined && 'admitted' in plain && !plain.admitted) {
    return check(
      'warn',
      `${where} was refused, and so is the pod without it: not the companion's doing: ${message}`,
    );
  }
  const hint =
    withCpuLimit !== undefined && 'admitted' in withCpuLimit.trial && withCpuLimit.trial.admitted
      ? `; with --companion-cpu-limit ${withCpuLimit.limit} it is admitted (docs/admission-rules.md)`
      : '';
  return check(
    'fail',
    `${where} was refused, the pod without it admitted: pods the webhook injects here would be refused: ${message}${hint}`,
  );
}

/** The line for a namespace the caller may not create pods in: the policies listed, untested. */
export function untestedCheck(namespace: string, policies: PolicyList): Check {
  const right = `create on pods in ${namespace} (a server-side dry run: nothing is stored)`;
  switch (policies.state) {
    case 'forbidden':
      return check(
        'skip',
        `cannot check the admission policies on pods in ${namespace}: needs ${right}, or list validatingadmissionpolicies`,
      );
    case 'none':
      return check(
        'ok',
        `${namespace}: no ValidatingAdmissionPolicy (${policies.why}); untested by a dry run, which needs ${right}`,
      );
    case 'listed':
      return policies.onPods.length === 0
        ? check(
            'ok',
            `${namespace}: no ValidatingAdmissionPolicy covers pods; untested by a dry run, which needs ${right}`,
          )
        : check(
            'warn',
            `cannot test the ValidatingAdmissionPolicies on pods (${policies.onPods.join(', ')}) against the companion in ${namespace}: needs ${right}`,
          );
  }
}

/** The trials for one namespace: `reinject` gives the sample again with a CPU limit, for the hint. */
export async function testSample(
  client: ClusterClient,
  sample: Sample,
  reinject: ((limit: string) => Sample) | undefined,
  policies: () => Promise<PolicyList>,
): Promise<Check> {
  if (!sample.injected) {
    return check(
      'skip',
      `${sample.namespace}: nothing of ours to test: a pod with a probe is ${sample.untouched ?? 'left untouched'}`,
    );
  }
  const trial = await dryRunCreate(client, sample.namespace, sample.pod);
  if ('forbidden' in trial) return untestedCheck(sample.namespace, await policies());
  if (trial.admitted) return judgeTrials(sample.namespace, trial, undefined, undefined);
  const plain = await dryRunCreate(client, sample.namespace, roundTripPod());
  const limit = '500m';
  const again = reinject?.(limit);
  const limited =
    again === undefined || !again.injected
      ? undefined
      : { limit, trial: await dryRunCreate(client, sample.namespace, again.pod) };
  return judgeTrials(sample.namespace, trial, plain, limited);
}
