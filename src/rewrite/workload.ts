// Where the pod template sits in each workload kind, and which documents are workloads at all.
// Pure, on plain JSON values; returns paths so the YAML layer can edit the nodes in place.

import { describeValue } from '../errors.js';
import { isObject, type Json } from '../json.js';
import { OPT_OUT_ANNOTATION } from '../scheme.js';
import { type FieldPath, ManifestError } from './manifest-error.js';
import { readOptOut } from './pod.js';
import { RUN_TO_COMPLETION_ANNOTATION, readRunToCompletion } from './run-to-completion.js';

export interface PodTemplateRef {
  /** From the document root to the pod spec, e.g. `['spec', 'template', 'spec']`. */
  specPath: FieldPath;
  /** The pod (template)'s annotations, values as strings. */
  annotations: Record<string, string> | undefined;
  /** `Deployment/web`: names the workload in warnings and errors. */
  resource: string;
  /** The workload's `metadata.namespace`, where it names one. */
  namespace: string | undefined;
  /** From the document root to the workload object (an item of a List, or the document). */
  objectPath: FieldPath;
}

/** An object inject leaves as it is, and why: `manifest/inject.ts` turns it into a warning naming it. */
export interface PassedThrough {
  /** From the document root to the object (an item of a List, or the document). */
  objectPath: FieldPath;
  why: string;
}

interface Kind {
  /** API groups the kind lives in; '' is the core group (`apiVersion: v1`). */
  groups: readonly string[];
  /** From the object to its pod template (the object that has `metadata` and `spec`). */
  template: FieldPath;
  /** A field that stands instead of the template: the object then has no pods of its own to rewrite. */
  insteadOfTemplate?: FieldPath;
}

const KINDS: Readonly<Record<string, Kind>> = {
  Pod: { groups: [''], template: [] },
  ReplicationController: { groups: [''], template: ['spec', 'template'] },
  Deployment: { groups: ['apps', 'extensions'], template: ['spec', 'template'] },
  // apps.kruise.io: OpenKruise's Advanced StatefulSet (v1beta1) and Advanced DaemonSet keep the template where
  // apps/v1 does (github.com/openkruise/kruise apis/apps/v1beta1/statefulset_types.go, v1alpha1/daemonset_types.go).
  StatefulSet: { groups: ['apps', 'apps.kruise.io'], template: ['spec', 'template'] },
  DaemonSet: { groups: ['apps', 'extensions', 'apps.kruise.io'], template: ['spec', 'template'] },
  ReplicaSet: { groups: ['apps', 'extensions'], template: ['spec', 'template'] },
  Job: { groups: ['batch'], template: ['spec', 'template'] },
  CronJob: { groups: ['batch'], template: ['spec', 'jobTemplate', 'spec', 'template'] },
  // OpenKruise's CloneSet (apis/apps/v1alpha1/cloneset_types.go): a Deployment's spec.template.
  CloneSet: { groups: ['apps.kruise.io'], template: ['spec', 'template'] },
  // Argo Rollouts (pkg/apis/rollouts/v1alpha1/types.go): spec.template, or spec.workloadRef naming a Deployment
  // whose template the Rollout runs (that Deployment is rewritten where it stands).
  Rollout: {
    groups: ['argoproj.io'],
    template: ['spec', 'template'],
    insteadOfTemplate: ['spec', 'workloadRef'],
  },
};

/** Where kinds that inject does not know keep a pod template, if they follow the apps/v1 workloads. */
const FOREIGN_TEMPLATE: FieldPath = ['spec', 'template', 'spec', 'containers'];

function at(value: unknown, path: FieldPath): unknown {
  return path.reduce<unknown>(
    (node, key) => (isObject(node) || Array.isArray(node) ? (node as Json)[key] : undefined),
    value,
  );
}

/** `apps/v1` -> `apps`, `v1` -> '' (core). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function resourceName(kind: string, object: Json): string {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const name =
    metadata.name ?? (metadata.generateName === undefined ? undefined : `${metadata.generateName}*`);
  return `${kind}/${typeof name === 'string' && name !== '' ? name : '<unnamed>'}`;
}

function stringAnnotations(value: unknown): Record<string, string> | undefined {
  if (!isObject(value)) return undefined;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, String(v)]));
}

/**
 * The pod templates of one document: none for kinds inject does not know (they pass through untouched), one
 * per workload, and those of every item of a `List` (or `DeploymentList` & co., whose items may omit `kind`).
 * Throws ManifestError, with a path from the document root, for a workload without a pod template.
 */
export function podTemplates(document: unknown, base: FieldPath = []): PodTemplateRef[] {
  return readWorkloads(document, base).templates;
}

/**
 * podTemplates, and the objects passed through that a reader would take for workloads: no kind or apiVersion
 * (not a Kubernetes object), or a kind inject does not rewrite that holds a pod template where a Deployment does.
 */
export function readWorkloads(
  document: unknown,
  base: FieldPath = [],
): { templates: PodTemplateRef[]; passed: PassedThrough[] } {
  const templates: PodTemplateRef[] = [];
  const passed: PassedThrough[] = [];
  visitObject(document, base, templates, passed);
  return { templates, passed };
}

function visitObject(
  document: unknown,
  base: FieldPath,
  templates: PodTemplateRef[],
  passed: PassedThrough[],
): void {
  if (!isObject(document)) return;
  const { kind, apiVersion } = document;
  const missing = [
    ...(typeof kind === 'string' && kind !== '' ? [] : ['kind']),
    ...(typeof apiVersion === 'string' && apiVersion !== '' ? [] : ['apiVersion']),
  ];
  if (missing.length > 0 || typeof kind !== 'string' || typeof apiVersion !== 'string') {
    passed.push({ objectPath: base, why: `no ${missing.join(' and no ')}: not a Kubernetes object` });
    return;
  }
  if (kind.endsWith('List') && Array.isArray(document.items)) {
    // A typed list (DeploymentList) may leave kind and apiVersion off its items: they are the list's.
    const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
    document.items.forEach((item: unknown, index) => {
      const typed =
        isObject(item) && itemKind !== undefined
          ? { ...item, kind: item.kind ?? itemKind, apiVersion: item.apiVersion ?? apiVersion }
          : item;
      visitObject(typed, [...base, 'items', index], templates, passed);
    });
    return;
  }
  const known = Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
  // Another group's kind of the same name (a CRD called Job, say) is not ours to touch.
  if (known === undefined || !known.groups.includes(groupOf(apiVersion))) {
    if (Array.isArray(at(document, FOREIGN_TEMPLATE))) {
      const why = `${resourceName(kind, document)} (${apiVersion}) holds a pod template (spec.template), but inject does not rewrite this kind`;
      passed.push({ objectPath: base, why });
    }
    return;
  }
  const resource = resourceName(kind, document);
  const template = at(document, known.template);
  if (template === undefined && known.insteadOfTemplate !== undefined) {
    if (at(document, known.insteadOfTemplate) !== undefined) return;
  }
  if (!isObject(template)) {
    const problem = `a ${kind} needs a pod template here, got ${describeValue(template)}`;
    throw new ManifestError(resource, [...base, ...known.template], problem);
  }
  const specPath = [...known.template, 'spec'];
  if (!isObject(template.spec)) {
    const problem = `a pod ${kind === 'Pod' ? '' : 'template '}needs a spec here, got ${describeValue(template.spec)}`;
    throw new ManifestError(resource, [...base, ...specPath], problem);
  }
  const annotations = stringAnnotations(at(template, ['metadata', 'annotations']));
  const annotationsPath = [...base, ...known.template, 'metadata', 'annotations'];
  const optOut = readOptOut(annotations);
  if ('invalid' in optOut)
    throw new ManifestError(resource, [...annotationsPath, OPT_OUT_ANNOTATION], optOut.invalid);
  const force = optOut.optedOut ? { force: undefined } : readRunToCompletion(annotations);
  if ('invalid' in force) {
    throw new ManifestError(resource, [...annotationsPath, RUN_TO_COMPLETION_ANNOTATION], force.invalid);
  }
  const metadata = isObject(document.metadata) ? document.metadata : {};
  const namespace =
    typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : undefined;
  templates.push({ specPath: [...base, ...specPath], annotations, resource, namespace, objectPath: base });
}
