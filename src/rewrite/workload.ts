// Where the pod template sits in each workload kind, and which documents are workloads at all.
// Pure, on plain JSON values; returns paths so the YAML layer can edit the nodes in place.

import { describeValue } from '../errors.js';
import { type FieldPath, ManifestError } from './manifest-error.js';
import { isOptedOut } from './pod.js';
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

interface Kind {
  /** API groups the kind lives in; '' is the core group (`apiVersion: v1`). */
  groups: readonly string[];
  /** From the object to its pod template (the object that has `metadata` and `spec`). */
  template: FieldPath;
}

const KINDS: Readonly<Record<string, Kind>> = {
  Pod: { groups: [''], template: [] },
  ReplicationController: { groups: [''], template: ['spec', 'template'] },
  Deployment: { groups: ['apps', 'extensions'], template: ['spec', 'template'] },
  StatefulSet: { groups: ['apps'], template: ['spec', 'template'] },
  DaemonSet: { groups: ['apps', 'extensions'], template: ['spec', 'template'] },
  ReplicaSet: { groups: ['apps', 'extensions'], template: ['spec', 'template'] },
  Job: { groups: ['batch'], template: ['spec', 'template'] },
  CronJob: { groups: ['batch'], template: ['spec', 'jobTemplate', 'spec', 'template'] },
};

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

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
  if (!isObject(document) || typeof document.kind !== 'string') return [];
  const { kind, apiVersion } = document;
  if (kind.endsWith('List') && Array.isArray(document.items)) {
    const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
    return document.items.flatMap((item: unknown, index) => {
      const typed =
        isObject(item) && item.kind === undefined && itemKind !== undefined
          ? { ...item, kind: itemKind }
          : item;
      return podTemplates(typed, [...base, 'items', index]);
    });
  }
  const known = Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
  // Another group's kind of the same name (a CRD called Job, say) is not ours to touch.
  if (known === undefined) return [];
  if (typeof apiVersion === 'string' && !known.groups.includes(groupOf(apiVersion))) return [];
  const resource = resourceName(kind, document);
  const template = at(document, known.template);
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
  const force = isOptedOut(annotations) ? { force: undefined } : readRunToCompletion(annotations);
  if ('invalid' in force) {
    const path = [...base, ...known.template, 'metadata', 'annotations', RUN_TO_COMPLETION_ANNOTATION];
    throw new ManifestError(resource, path, force.invalid);
  }
  const metadata = isObject(document.metadata) ? document.metadata : {};
  const namespace =
    typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : undefined;
  return [{ specPath: [...base, ...specPath], annotations, resource, namespace, objectPath: base }];
}
