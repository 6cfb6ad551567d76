// The fields the Kubernetes API requires of each kind deploy/ renders, from the API reference
// (https://kubernetes.io/docs/reference/kubernetes-api/) and cert-manager's (https://cert-manager.io/docs/reference/api-docs/):
// a rendered object without one is refused by the API server, so a test can catch it without a cluster.
// A kind missing from the table is reported too: whoever adds one to deploy/ adds its required fields here.

import type { Manifest } from './kustomize.js';

/**
 * Field paths, dot-separated; `x[]` applies the rest to every element of the list x (when x is there: list the
 * list itself when it is required). A value that is absent, null, "" or an empty list counts as missing.
 */
const POD_TEMPLATE = [
  'spec.template.metadata.labels',
  'spec.template.spec.containers',
  'spec.template.spec.containers[].name',
  'spec.template.spec.containers[].image',
  'spec.template.spec.containers[].ports[].containerPort',
  'spec.template.spec.containers[].env[].name',
  'spec.template.spec.containers[].volumeMounts[].name',
  'spec.template.spec.containers[].volumeMounts[].mountPath',
  'spec.template.spec.volumes[].name',
];
const RULES = ['rules[].verbs', 'rules[].apiGroups', 'rules[].resources'];
const BINDING = [
  'roleRef.apiGroup',
  'roleRef.kind',
  'roleRef.name',
  'subjects',
  'subjects[].kind',
  'subjects[].name',
  'subjects[].namespace',
];

export const REQUIRED: Readonly<Record<string, { namespaced: boolean; fields: readonly string[] }>> = {
  Namespace: { namespaced: false, fields: [] },
  ServiceAccount: { namespaced: true, fields: [] },
  Role: { namespaced: true, fields: ['rules', ...RULES] },
  ClusterRole: { namespaced: false, fields: ['rules', ...RULES] },
  RoleBinding: { namespaced: true, fields: BINDING },
  ClusterRoleBinding: { namespaced: false, fields: BINDING },
  Service: { namespaced: true, fields: ['spec.ports', 'spec.ports[].port'] },
  Deployment: { namespaced: true, fields: ['spec.selector', 'spec.template', ...POD_TEMPLATE] },
  DaemonSet: { namespaced: true, fields: ['spec.selector', 'spec.template', ...POD_TEMPLATE] },
  PodDisruptionBudget: { namespaced: true, fields: ['spec.selector'] },
  CronJob: {
    namespaced: true,
    fields: [
      'spec.schedule',
      'spec.jobTemplate.spec.template.spec.containers',
      'spec.jobTemplate.spec.template.spec.containers[].name',
      'spec.jobTemplate.spec.template.spec.containers[].image',
      'spec.jobTemplate.spec.template.spec.restartPolicy',
    ],
  },
  MutatingWebhookConfiguration: {
    namespaced: false,
    fields: [
      'webhooks',
      'webhooks[].name',
      'webhooks[].clientConfig',
      'webhooks[].clientConfig.service.name',
      'webhooks[].clientConfig.service.namespace',
      'webhooks[].sideEffects',
      'webhooks[].admissionReviewVersions',
    ],
  },
  Certificate: { namespaced: true, fields: ['spec.secretName', 'spec.issuerRef.name'] },
  Issuer: { namespaced: true, fields: ['spec'] },
  // Prometheus Operator's CRDs (https://prometheus-operator.dev/docs/api-reference/api/), deploy/monitoring.
  PodMonitor: { namespaced: true, fields: ['spec.selector'] },
  ServiceMonitor: { namespaced: true, fields: ['spec.selector', 'spec.endpoints'] },
  PrometheusRule: {
    namespaced: true,
    fields: ['spec.groups', 'spec.groups[].name', 'spec.groups[].rules[].expr'],
  },
  ConfigMap: { namespaced: true, fields: [] },
};

function isMissing(value: unknown): boolean {
  return (
    value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)
  );
}

/** The paths (with list indexes) under `value` where `path` finds nothing. */
function missingAt(value: unknown, path: readonly string[], at: string): string[] {
  const [head, ...rest] = path;
  if (head === undefined) return isMissing(value) ? [at] : [];
  // A missing parent is what to report (a binding without roleRef lacks roleRef, not roleRef.name).
  if (value === null || typeof value !== 'object') return [at === '' ? head : at];
  const list = head.endsWith('[]');
  const key = list ? head.slice(0, -2) : head;
  const next = (value as Manifest)[key];
  const here = at === '' ? key : `${at}.${key}`;
  if (!list) return missingAt(next, rest, here);
  if (!Array.isArray(next)) return [];
  return next.flatMap((item, i) => missingAt(item, rest, `${here}[${i}]`));
}

/** What a rendered object lacks that the API requires, e.g. `Service/web: spec.ports[0].port`. */
export function missingFields(object: Manifest): string[] {
  const id = `${object?.kind ?? '?'}/${object?.metadata?.name ?? '?'}`;
  const common = ['apiVersion', 'kind', 'metadata.name'].flatMap((f) => missingAt(object, f.split('.'), ''));
  const rule = REQUIRED[object?.kind as string];
  if (rule === undefined)
    return [...common, `no required-field table for kind ${object?.kind}`].map((m) => `${id}: ${m}`);
  const own = [...(rule.namespaced ? ['metadata.namespace'] : []), ...rule.fields].flatMap((f) =>
    missingAt(object, f.split('.'), ''),
  );
  return [...new Set([...common, ...own])].map((m) => `${id}: ${m}`);
}
