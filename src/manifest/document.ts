// One document of the stream: find its pod templates through rewrite/'s workload table, check what inject checks
// at the document's own lines (annotations, --mesh-exclusion), hand each pod spec to rewritePodSpec, and sync the
// result back into the document's nodes in place (sync.ts), so comments, key order and styles survive.

import { isDeepStrictEqual } from 'node:util';
import { type Document, isMap, isNode } from 'yaml';
import { HealthcheckError } from '../errors.js';
import { AnnotationError, type FieldPath, ManifestError } from '../rewrite/manifest-error.js';
import { exclusionAnnotation, MESH_FORMATS } from '../rewrite/mesh-exclusion.js';
import { withAnnotations } from '../rewrite/metadata.js';
import { isOptedOut, rewritePodSpec } from '../rewrite/pod.js';
import { decideResources } from '../rewrite/resources/defaults.js';
import { type NamespaceRuleSet, rulesFor } from '../rewrite/resources/rule-documents.js';
import type { PodSpec, RewriteOptions } from '../rewrite/types.js';
import { type PassedThrough, readWorkloads } from '../rewrite/workload.js';
import { syncNode } from './sync.js';

/** `work`, its ManifestError (a path from the document root) turned into one naming the document and line. */
export function atDocument<T>(
  doc: Document,
  where: (offset: number | undefined) => string,
  work: () => T,
): T {
  try {
    return work();
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    // err.path runs from the document root here, so err.message names the field as the reader sees it.
    throw new HealthcheckError('OSM_HC_MANIFEST', `${where(offsetOf(doc, err.path))}: ${err.message}`, {
      cause: err,
    });
  }
}

export interface DocumentResult {
  /** One line each, in the document's order. */
  warnings: string[];
  /** Some pod that keeps running was given the companion (InjectResult.placedRunningPods). */
  placedRunningPods: boolean;
  /** Pods that must end and got the companion as a native sidecar: where and why, one line each. */
  notes: string[];
  passed: PassedThrough[];
  /** Pod templates found (rewritten or not). */
  workloads: number;
  /** Some node of the document was edited. */
  changed: boolean;
}

export function injectDocument(
  doc: Document,
  value: unknown,
  options: RewriteOptions,
  rules: NamespaceRuleSet,
): DocumentResult {
  const warnings: string[] = [];
  const notes: string[] = [];
  let placedRunningPods = false;
  let changed = false;
  const given = rules.limitRanges.length + rules.resourceQuotas.length > 0;
  const { templates, passed } = readWorkloads(value);
  for (const { specPath, annotations, resource, namespace, objectPath } of templates) {
    const spec = valueAt(value, specPath);
    let known = options;
    if (given) {
      try {
        known = { ...options, namespaceRules: rulesFor(rules, namespace, resource) };
      } catch (err) {
        if (!(err instanceof ManifestError)) throw err;
        throw new ManifestError(err.resource, [...objectPath, ...err.path], err.problem, { cause: err });
      }
    }
    const mesh = options.meshExclusion;
    if (mesh !== undefined && !isOptedOut(annotations)) {
      // --mesh-exclusion completes the pod's own list: one the mesh refuses is an error at that annotation.
      const wanted = exclusionAnnotation(mesh, annotations);
      if ('invalid' in wanted) {
        const at = [...specPath.slice(0, -1), 'metadata', 'annotations', MESH_FORMATS[mesh].annotation];
        throw new ManifestError(resource, at, wanted.invalid);
      }
    }
    // A bad resource annotation is an error at its own line, not at the spec (resources/defaults.ts).
    const resources = isOptedOut(annotations) ? undefined : decideResources(annotations);
    if (resources !== undefined && 'invalid' in resources) {
      const { annotation, problem } = resources.invalid;
      const at = [...specPath.slice(0, -1), 'metadata', 'annotations', annotation];
      throw new ManifestError(resource, at, problem);
    }
    let result: ReturnType<typeof rewritePodSpec>;
    try {
      result = rewritePodSpec(spec as PodSpec, annotations, known, resource);
    } catch (err) {
      // The pure rewrite names fields from the pod spec; the document's reader wants them from its root.
      if (!(err instanceof ManifestError)) throw err;
      if (err instanceof AnnotationError) {
        const at = [...specPath.slice(0, -1), 'metadata', 'annotations', err.annotation];
        throw new ManifestError(err.resource, at, err.reason, { cause: err });
      }
      throw new ManifestError(err.resource, [...specPath, ...err.path], err.problem, { cause: err });
    }
    warnings.push(...result.warnings);
    const { placement } = result;
    const { restartPolicy } = spec as PodSpec;
    if (restartPolicy === undefined || restartPolicy === 'Always') {
      placedRunningPods ||= placement !== undefined && placement.companion !== 'untouched';
    } else if (placement?.companion === 'native-sidecar') {
      notes.push(`${resource}: ${placement.reason}`);
    }
    if (!result.changed) continue;
    changed = true;
    syncAt(doc, specPath, result.spec, resource);
    if (Object.keys(result.annotations).length === 0) continue;
    const metadataPath = [...specPath.slice(0, -1), 'metadata'];
    const metadata = valueAt(value, metadataPath);
    syncAt(
      doc,
      metadataPath,
      withAnnotations(metadata, result.annotations, resource, metadataPath),
      resource,
    );
  }
  return { warnings, placedRunningPods, notes, passed, workloads: templates.length, changed };
}

/**
 * Puts `next` at `path` by editing the node there in place; an absent key is added before `spec`, where
 * manifests have `metadata`. getIn stops at an alias: fine when the anchored original holds `next` already (two
 * items sharing one template); otherwise editing the anchor would change its other users behind their back.
 */
function syncAt(doc: Document, path: FieldPath, next: unknown, resource: string): void {
  const node = doc.getIn(path, true);
  if (isNode(node)) {
    const synced = syncNode(doc, node, next);
    if (synced !== node) doc.setIn(path, synced);
    return;
  }
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  const key = path.at(-1);
  if (isMap(parent) && typeof key === 'string' && !parent.has(key)) {
    const entries = Object.entries(parent.toJS(doc) as Record<string, unknown>);
    const spec = entries.findIndex(([name]) => name === 'spec');
    entries.splice(spec < 0 ? entries.length : spec, 0, [key, next]);
    syncNode(doc, parent, Object.fromEntries(entries));
    return;
  }
  if (!isDeepStrictEqual(valueAt(doc.toJS(), path), next)) {
    const problem =
      'is reached through a YAML alias, which inject cannot edit in place; expand the alias first';
    throw new ManifestError(resource, path, problem);
  }
}

export function valueAt(value: unknown, path: FieldPath): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], value);
}

/** Where the deepest existing node on `path` starts, for the line number of an error. */
export function offsetOf(doc: Document, path: FieldPath): number | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node = length === 0 ? doc.contents : doc.getIn(path.slice(0, length), true);
    if (isNode(node) && node.range) return node.range[0];
  }
  return undefined;
}
