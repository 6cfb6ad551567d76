// The namespace rules and pods of issue 26's table, and a few of our choosing, as data: what the namespace holds,
// the pod that is admitted there on its own, and what the rewrite must make of it.

import type { RewriteOptions } from '../../src/rewrite/types.js';
import type { Pod } from '../helpers/envtest-namespace.js';

type Json = Record<string, unknown>;
type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };

export interface RuleCase {
  name: string;
  labels?: Record<string, string>;
  /** Objects to create (ResourceQuota: `status.used` is written as the quota controller would). */
  rules: (namespace: string) => Json[];
  /** Admission reads these from an informer: wait until RULE_PROBE is refused before the cases run. */
  settles?: boolean;
  pod?: Pod;
  /**
   * `either`: the companion, or the pod untouched with a warning; both are admitted. `annotation`: an override
   * annotation pins a value the rule refuses: an error at the annotation (webhook: untouched, with it as warning).
   */
  expected: 'companion' | 'untouched' | 'either' | 'annotation';
  /** What a warning (or the annotation's error) must name when the pod is left untouched. */
  names: RegExp;
  options?: Partial<RewriteOptions>;
}

const APP_RESOURCES: Resources = {
  requests: { cpu: '100m', memory: '64Mi' },
  limits: { cpu: '200m', memory: '128Mi' },
};

/** A web app that declares all it uses: it passes every rule below on its own. */
export function appPod(
  spec: Json = {},
  annotations?: Record<string, string>,
  resources: Resources = APP_RESOURCES,
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'web-', labels: { app: 'web' }, ...(annotations ? { annotations } : {}) },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'ghcr.io/example/web:1.0',
          ports: [{ name: 'http', containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/ready', port: 'http' } },
          livenessProbe: { tcpSocket: { port: 8080 } },
          resources,
        },
      ],
      ...spec,
    },
  };
}

/** Refused by every quota and policy below (huge requests, no limits): tells when they are in force. */
export const RULE_PROBE = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'probe' },
  spec: {
    containers: [{ name: 'hog', image: 'hog', resources: { requests: { cpu: '64', memory: '1Ti' } } }],
  },
};

const limitRange = (item: Json): Json => ({
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: { name: 'lr' },
  spec: { limits: [{ type: 'Container', ...item }] },
});

const quota = (hard: Record<string, string>, used?: Record<string, string>, scopes?: string[]): Json => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'adm' },
  spec: { hard, ...(scopes ? { scopes } : {}) },
  ...(used ? { status: { used } } : {}),
});

const RESTRICTED = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
};
const restrictedPod = (annotations?: Record<string, string>): Pod => {
  const pod = appPod(RESTRICTED, annotations);
  pod.spec.containers = (pod.spec.containers ?? []).map((c) => ({
    ...c,
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  }));
  return pod;
};

const LIMIT_RANGE = /LimitRange/;
const QUOTA = /"adm"/;

export const RULE_CASES: RuleCase[] = [
  {
    name: 'LimitRange min cpu 100m, memory 64Mi',
    rules: () => [limitRange({ min: { cpu: '100m', memory: '64Mi' } })],
    expected: 'companion',
    names: LIMIT_RANGE,
  },
  {
    name: 'LimitRange max memory 128Mi',
    rules: () => [limitRange({ max: { memory: '128Mi' } })],
    expected: 'companion',
    names: LIMIT_RANGE,
  },
  {
    name: 'LimitRange max cpu 1 (every container needs a CPU limit)',
    rules: () => [limitRange({ max: { cpu: '1' } })],
    expected: 'companion',
    names: LIMIT_RANGE,
  },
  {
    name: 'LimitRange maxLimitRequestRatio cpu 2, memory 2',
    rules: () => [limitRange({ maxLimitRequestRatio: { cpu: '2', memory: '2' } })],
    expected: 'companion',
    names: LIMIT_RANGE,
  },
  {
    name: 'LimitRange with defaults only',
    rules: () => [
      limitRange({
        default: { cpu: '500m', memory: '256Mi' },
        defaultRequest: { cpu: '100m', memory: '64Mi' },
      }),
    ],
    expected: 'companion',
    names: LIMIT_RANGE,
  },
  {
    name: 'LimitRange type Pod, max cpu 1, memory 1Gi',
    rules: () => [
      {
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'lr' },
        spec: { limits: [{ type: 'Pod', max: { cpu: '1', memory: '1Gi' } }] },
      },
    ],
    expected: 'companion',
    names: LIMIT_RANGE,
  },
  {
    name: 'ResourceQuota on requests and limits of cpu and memory (every container must declare them)',
    rules: () => [
      quota({ 'requests.cpu': '4', 'requests.memory': '4Gi', 'limits.cpu': '4', 'limits.memory': '4Gi' }),
    ],
    settles: true,
    expected: 'companion',
    names: QUOTA,
  },
  {
    name: "ResourceQuota with room for the app's 100m only",
    rules: () => [quota({ 'requests.cpu': '100m' })],
    settles: true,
    expected: 'untouched',
    names: QUOTA,
  },
  {
    name: 'ResourceQuota nearly used up (1 cpu, 900m used)',
    rules: () => [quota({ 'requests.cpu': '1' }, { 'requests.cpu': '900m' })],
    settles: true,
    expected: 'untouched',
    names: QUOTA,
  },
  {
    name: 'ResourceQuota on plain cpu and memory, with room',
    rules: () => [quota({ cpu: '4', memory: '4Gi' })],
    settles: true,
    expected: 'companion',
    names: QUOTA,
  },
  {
    name: 'ResourceQuota scoped to NotBestEffort pods, on limits.cpu',
    rules: () => [quota({ 'limits.cpu': '4' }, undefined, ['NotBestEffort'])],
    settles: true,
    expected: 'companion',
    names: QUOTA,
  },
  {
    name: 'ResourceQuota on limits.cpu with 300m left (a CPU limit must fit the room)',
    rules: () => [quota({ 'limits.cpu': '500m' }, { 'limits.cpu': '200m' })],
    settles: true,
    expected: 'either',
    names: QUOTA,
  },
  {
    name: 'LimitRange max cpu 40m, below our 50m request',
    rules: () => [limitRange({ max: { cpu: '40m' } })],
    pod: appPod({}, undefined, {
      requests: { cpu: '20m', memory: '64Mi' },
      limits: { cpu: '40m', memory: '128Mi' },
    }),
    expected: 'either',
    names: LIMIT_RANGE,
  },
  {
    name: 'LimitRange min memory 400Mi, above our 320Mi limit',
    rules: () => [limitRange({ min: { memory: '400Mi' } })],
    pod: appPod({}, undefined, {
      requests: { cpu: '100m', memory: '400Mi' },
      limits: { cpu: '200m', memory: '512Mi' },
    }),
    expected: 'either',
    names: LIMIT_RANGE,
  },
  {
    name: 'LimitRange min cpu 100m, and the cpu-request annotation at 150m',
    rules: () => [limitRange({ min: { cpu: '100m' } })],
    pod: appPod({}, { 'osm-healthcheck/cpu-request': '150m' }),
    expected: 'companion',
    names: LIMIT_RANGE,
  },
  {
    name: 'LimitRange max memory 128Mi, and the memory-limit annotation at 512Mi',
    rules: () => [limitRange({ max: { memory: '128Mi' } })],
    pod: appPod({}, { 'osm-healthcheck/memory-limit': '512Mi' }),
    expected: 'annotation',
    names: /osm-healthcheck\/memory-limit/,
  },
  {
    name: "pod-level resources with no room beside the app (the issue's)",
    rules: () => [],
    pod: appPod({
      resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } },
    }),
    expected: 'either',
    names: /spec\.resources/,
  },
  {
    name: 'pod-level resources with room for our requests, memory limit 256Mi',
    rules: () => [],
    pod: appPod({
      resources: { requests: { cpu: '200m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    }),
    expected: 'companion',
    names: /spec\.resources/,
  },
  {
    name: 'spec.os.name windows',
    rules: () => [],
    pod: appPod({ os: { name: 'windows' } }),
    expected: 'untouched',
    names: /windows/,
  },
  {
    name: 'hostNetwork true',
    rules: () => [],
    pod: appPod({ hostNetwork: true }),
    expected: 'untouched',
    names: /hostNetwork/,
  },
  {
    name: 'restricted Pod Security, no mesh exclusion annotation',
    labels: { 'pod-security.kubernetes.io/enforce': 'restricted' },
    rules: () => [],
    pod: restrictedPod(),
    expected: 'untouched',
    names: /Pod Security "restricted:latest"/,
  },
  {
    name: "restricted Pod Security, the mesh's exclusion annotation",
    labels: { 'pod-security.kubernetes.io/enforce': 'restricted' },
    rules: () => [],
    pod: restrictedPod({ 'traffic.sidecar.istio.io/excludeInboundPorts': '15901,15902,15903,15904' }),
    expected: 'companion',
    names: /Pod Security/,
  },
];

/** A policy and its binding: every container and init container sets cpu and memory limits. */
export function vapRules(namespace: string): Json[] {
  const limited = `c, has(c.resources) && has(c.resources.limits) && 'cpu' in c.resources.limits && 'memory' in c.resources.limits`;
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'limits-required' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] },
          ],
        },
        validations: [
          {
            expression: `object.spec.containers.all(${limited}) && (!has(object.spec.initContainers) || object.spec.initContainers.all(${limited}))`,
            message: 'every container must set cpu and memory limits',
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'limits-required' },
      spec: {
        policyName: 'limits-required',
        validationActions: ['Deny'],
        matchResources: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
        },
      },
    },
  ];
}
