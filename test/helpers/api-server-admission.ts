// What the API server does to a Pod around a mutating webhook, written again for tests (reinvocationPolicy:
// IfNeeded). k8s.io/apiserver admission/reinvocation.go runs the whole mutating chain a second time when a webhook
// changed the object: the in-tree plugins first, then the webhooks that asked for it. Between our two calls:
//   1. our patch is applied and the result decoded, which defaults it (pkg/apis/core/v1/defaults.go and the
//      `+default` tags of k8s.io/api core/v1 types.go), and encoded again in the Go structs' field order;
//   2. ServiceAccount (plugin/pkg/admission/serviceaccount/admission.go) mounts the token into every container
//      that has no mount at its path, our new ones included;
//   3. DefaultTolerationSeconds adds the not-ready / unreachable tolerations, LimitRanger a namespace's default
//      requests and limits to containers without them, Priority the pod's priority.

type Json = Record<string, unknown>;
type Container = Json & { name: string };

import { canonicalQuantity } from '../../src/kube/quantity.js';

export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A namespace's LimitRange `default` (limits) and `defaultRequest`, as LimitRanger applies them. */
export interface LimitRangeDefaults {
  default: Record<string, string>;
  defaultRequest: Record<string, string>;
}

export interface Admission {
  /** The namespace has a LimitRange with these container defaults. */
  limitRange?: LimitRangeDefaults;
  /** The InPlacePodVerticalScaling gate (on by default from 1.33): resizePolicy for containers with requests. */
  inPlaceResize?: boolean;
}

/** The pod the webhook's next call sees, after `pod` left the webhook before. The input is not changed. */
export function betweenCalls(pod: Json, admission: Admission = {}): Json {
  const next = defaulted(pod, admission);
  serviceAccount(next);
  defaultTolerationSeconds(next);
  if (admission.limitRange !== undefined) limitRanger(next, admission.limitRange);
  priority(next);
  return goFieldOrder(defaulted(next, admission)) as Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function specOf(pod: Json): Json & { containers: Container[]; initContainers?: Container[] } {
  return pod.spec as Json & { containers: Container[]; initContainers?: Container[] };
}

function allContainers(pod: Json): Container[] {
  const spec = specOf(pod);
  return [...(spec.initContainers ?? []), ...spec.containers];
}

/** Decoding into v1.Pod: the defaulting functions, and `omitempty` dropping empty lists. */
function defaulted(pod: Json, admission: Admission): Json {
  const next = dropEmptyLists(structuredClone(pod)) as Json;
  const spec = specOf(next);
  // SetDefaults_PodSpec
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.restartPolicy ??= 'Always';
  spec.securityContext ??= {};
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  // SetDefaults_Pod
  spec.enableServiceLinks ??= true;
  for (const container of allContainers(next)) defaultContainer(container, spec.hostNetwork === true);
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
    const resources = container.resources as { limits?: Json; requests?: Json };
    if (resources.limits !== undefined) {
      resources.requests = { ...resources.limits, ...resources.requests };
    }
  }
  if (admission.inPlaceResize === true) {
    for (const container of spec.containers) resizePolicy(container);
  }
  return next;
}

/** SetDefaults_Container, _Probe, _HTTPGetAction, _ObjectFieldSelector, _ResourceList, ContainerPort's protocol. */
function defaultContainer(container: Container, hostNetwork: boolean): void {
  if (container.imagePullPolicy === undefined) {
    const image = String(container.image ?? '');
    const tag = /:([^/:@]+)$/.exec(image.split('@')[0] ?? '')?.[1];
    container.imagePullPolicy = tag === undefined || tag === 'latest' ? 'Always' : 'IfNotPresent';
  }
  container.terminationMessagePath ??= '/dev/termination-log';
  container.terminationMessagePolicy ??= 'File';
  // A struct, not a pointer: encoding/json writes `resources: {}` even when nothing is set.
  container.resources ??= {};
  const resources = container.resources as Record<string, Record<string, string> | undefined>;
  for (const list of ['limits', 'requests']) {
    const quantities = resources[list];
    if (quantities === undefined) continue;
    for (const [name, value] of Object.entries(quantities)) quantities[name] = canonicalQuantity(value);
  }
  for (const port of (container.ports ?? []) as Json[]) {
    port.protocol ??= 'TCP';
    if (hostNetwork) port.hostPort ??= port.containerPort;
  }
  for (const env of (container.env ?? []) as Json[]) {
    const fieldRef = (env.valueFrom as Json | undefined)?.fieldRef as Json | undefined;
    if (fieldRef !== undefined) fieldRef.apiVersion ??= 'v1';
  }
  for (const kind of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const probe = container[kind] as Json | undefined;
    if (probe === undefined) continue;
    probe.timeoutSeconds ??= 1;
    probe.periodSeconds ??= 10;
    probe.successThreshold ??= 1;
    probe.failureThreshold ??= 3;
    defaultHandler(probe);
  }
  const lifecycle = container.lifecycle as Record<string, Json> | undefined;
  for (const hook of Object.values(lifecycle ?? {})) defaultHandler(hook);
}

function defaultHandler(handler: Json): void {
  const httpGet = handler.httpGet as Json | undefined;
  if (httpGet === undefined) return;
  httpGet.path ??= '/';
  httpGet.scheme ??= 'HTTP';
}

function resizePolicy(container: Container): void {
  const requests = (container.resources as Json).requests as Json | undefined;
  if (requests === undefined) return;
  const policy = (container.resizePolicy ?? []) as Json[];
  for (const resourceName of ['cpu', 'memory']) {
    if (requests[resourceName] !== undefined && !policy.some((p) => p.resourceName === resourceName)) {
      policy.push({ resourceName, restartPolicy: 'NotRequired' });
    }
  }
  if (policy.length > 0) container.resizePolicy = policy;
}

/** mountServiceAccountToken: the `kube-api-access-*` volume, mounted in every container without that path. */
function serviceAccount(pod: Json): void {
  const spec = specOf(pod);
  spec.serviceAccountName ??= 'default';
  if (spec.automountServiceAccountToken === false) return;
  const volumes = (spec.volumes ?? []) as Json[];
  let name = volumes.find((volume) => String(volume.name).startsWith('kube-api-access-'))?.name as string;
  const hasVolume = name !== undefined;
  name ??= 'kube-api-access-r4nd0';
  let needsVolume = false;
  for (const container of allContainers(pod)) {
    const mounts = (container.volumeMounts ?? []) as Json[];
    if (mounts.some((mount) => mount.mountPath === TOKEN_MOUNT_PATH)) continue;
    container.volumeMounts = [...mounts, { name, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
    needsVolume = true;
  }
  if (!hasVolume && needsVolume) {
    spec.volumes = [
      ...volumes,
      {
        name,
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            {
              downwardAPI: {
                items: [
                  { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                ],
              },
            },
          ],
        },
      },
    ];
  }
}

/** plugin/pkg/admission/defaulttolerationseconds: 300 s for each taint no toleration covers yet. */
function defaultTolerationSeconds(pod: Json): void {
  const spec = specOf(pod);
  const tolerations = (spec.tolerations ?? []) as Json[];
  const covers = (toleration: Json, key: string) =>
    (toleration.key === key || (toleration.key ?? '') === '') &&
    (toleration.effect === 'NoExecute' || (toleration.effect ?? '') === '');
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (tolerations.some((toleration) => covers(toleration, key))) continue;
    tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
  spec.tolerations = tolerations;
}

/** plugin/pkg/admission/limitranger: a default for every resource a container leaves unset. */
function limitRanger(pod: Json, limits: LimitRangeDefaults): void {
  for (const container of allContainers(pod)) {
    const resources = (container.resources ?? {}) as { limits?: Json; requests?: Json };
    resources.limits = { ...limits.default, ...resources.limits };
    resources.requests = { ...limits.defaultRequest, ...resources.requests };
    container.resources = resources;
  }
}

/** plugin/pkg/admission/priority, in a cluster without a default PriorityClass. */
function priority(pod: Json): void {
  const spec = specOf(pod);
  spec.priority ??= 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
}

/** `omitempty` on every list of a Container. */
function dropEmptyLists(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropEmptyLists);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, item]) => !(Array.isArray(item) && item.length === 0))
      .map(([key, item]) => [key, dropEmptyLists(item)]),
  );
}

/**
 * The API server writes the object back in its Go structs' field order, not in ours. Sorted keys stand in for
 * that order: a comparison that depends on key order fails here as it would against a real API server.
 */
function goFieldOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(goFieldOrder);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, goFieldOrder(value[key])]),
  );
}
