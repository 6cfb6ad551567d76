// inject over a stream of YAML or JSON documents: find the pod templates, rewrite each spec, and edit the
// YAML nodes in place, so document order, comments, key order and untouched fields come out as they went in.

import { isDeepStrictEqual } from 'node:util';
import {
  type Document,
  isCollection,
  isMap,
  isNode,
  isPair,
  LineCounter,
  type Node,
  parseAllDocuments,
  type ToStringOptions,
  visit,
} from 'yaml';
import { HealthcheckError } from '../errors.js';
import { AnnotationError, type FieldPath, ManifestError } from './manifest-error.js';
import { exclusionAnnotation, MESH_FORMATS } from './mesh-exclusion.js';
import { withAnnotations } from './metadata.js';
import { isOptedOut, rewritePodSpec } from './pod.js';
import { decideResources } from './resources/defaults.js';
import { mergeRuleSets, type NamespaceRuleSet, ruleDocuments, rulesFor } from './resources/rule-documents.js';
import { syncNode } from './sync.js';
import type { PodSpec, RewriteOptions } from './types.js';
import { podTemplates } from './workload.js';

export type OutputFormat = 'yaml' | 'json';

export interface InjectResult {
  /** The whole output stream: YAML documents, or JSON (one object, or a v1 List of several). */
  output: string;
  /** One line each, in document order. */
  warnings: string[];
  /**
   * Some pod that keeps running (restartPolicy Always) was given the companion: the one placement for the whole
   * run (`choosePlacement`) is about those; pods that must end are decided, and warned about, one by one.
   */
  placedRunningPods: boolean;
  /** Pods that must end and got the companion as a native sidecar: where and why, one line each. */
  notes: string[];
}

/**
 * Rewrites every workload in `source`; throws HealthcheckError (OSM_HC_MANIFEST) naming document and line.
 * `namespaceRules`: LimitRanges and ResourceQuotas from elsewhere (--namespace-rules), with the stream's own.
 */
export function injectManifests(
  source: string,
  options: RewriteOptions,
  format: OutputFormat,
  namespaceRules: NamespaceRuleSet = { limitRanges: [], resourceQuotas: [] },
): InjectResult {
  const lineCounter = new LineCounter();
  const docs = readStream(source, lineCounter);
  const warnings: string[] = [];
  let placedRunningPods = false;
  const notes: string[] = [];
  // Every rule of the stream counts for every workload of its namespace, wherever the two stand in it.
  const rules = mergeRuleSets(
    namespaceRules,
    ...docs.map(({ doc, value, where }) => atDocument(doc, where, () => ruleDocuments(value))),
  );
  for (const { doc, value, where } of docs) {
    if (format === 'yaml' && isCollection(doc.contents) && doc.contents.flow) toBlockStyle(doc);
    const injected = atDocument(doc, where, () => injectDocument(doc, value, options, rules));
    warnings.push(...injected.warnings);
    placedRunningPods ||= injected.placedRunningPods;
    notes.push(...injected.notes);
  }
  const output =
    format === 'yaml'
      ? yamlStream(
          docs.map(({ doc }) => doc),
          lineCounter,
        )
      : jsonStream(docs.map(({ doc }) => doc));
  return { output, warnings, placedRunningPods, notes };
}

/**
 * --namespace-rules FILE: a stream (or a `kind: List`) of LimitRanges and ResourceQuotas, nothing else;
 * errors name the file, the document and the field.
 */
export function readNamespaceRules(source: string, file: string): NamespaceRuleSet {
  const docs = readStream(source, new LineCounter(), `${file}: `);
  return mergeRuleSets(
    ...docs.map(({ doc, value, where }) =>
      atDocument(doc, where, () => {
        const found = ruleDocuments(value);
        if (found.limitRanges.length + found.resourceQuotas.length > 0 || value == null) return found;
        const object = value as { kind?: unknown; metadata?: { name?: unknown } };
        if (object.kind === 'List') return found;
        const resource = `${String(object.kind ?? 'document')}/${String(object.metadata?.name ?? '<unnamed>')}`;
        throw new ManifestError(
          resource,
          ['kind'],
          'is no LimitRange or ResourceQuota (all --namespace-rules takes)',
        );
      }),
    ),
  );
}

interface StreamDocument {
  doc: Document;
  value: unknown;
  where: (offset: number | undefined) => string;
}

/** The documents of a YAML (or JSON) stream with their values; a syntax error names its document and line. */
function readStream(source: string, lineCounter: LineCounter, prefix = ''): StreamDocument[] {
  const docs = Array.from(parseAllDocuments(source, { lineCounter }));
  return docs.map((doc, index) => {
    const where = (offset: number | undefined) =>
      `${prefix}document ${index + 1}${offset === undefined ? '' : `, line ${lineCounter.linePos(offset).line}`}`;
    const [error] = doc.errors;
    if (error !== undefined) {
      // yaml's message ends in "at line L, column C:" and a code frame; we say the line our own way.
      const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:$/, '');
      throw new HealthcheckError('OSM_HC_MANIFEST', `${where(error.pos[0])}: ${message}`, { cause: error });
    }
    try {
      return { doc, value: doc.toJS() as unknown, where };
    } catch (err) {
      // e.g. yaml's guard against alias bombs ("Excessive alias count").
      throw new HealthcheckError('OSM_HC_MANIFEST', `${where(undefined)}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  });
}

/** `work`, its ManifestError (a path from the document root) turned into one naming the document and line. */
function atDocument<T>(doc: Document, where: (offset: number | undefined) => string, work: () => T): T {
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

function injectDocument(
  doc: Document,
  value: unknown,
  options: RewriteOptions,
  rules: NamespaceRuleSet,
): Omit<InjectResult, 'output'> {
  const warnings: string[] = [];
  const notes: string[] = [];
  let placedRunningPods = false;
  const given = rules.limitRanges.length + rules.resourceQuotas.length > 0;
  for (const { specPath, annotations, resource, namespace, objectPath } of podTemplates(value)) {
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
  return { warnings, placedRunningPods, notes };
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

function valueAt(value: unknown, path: FieldPath): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], value);
}

/** Where the deepest existing node on `path` starts, for the line number of an error. */
function offsetOf(doc: Document, path: FieldPath): number | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node = length === 0 ? doc.contents : doc.getIn(path.slice(0, length), true);
    if (isNode(node) && node.range) return node.range[0];
  }
  return undefined;
}

/** JSON in, YAML out: block collections and plain scalars where they read the same. */
function toBlockStyle(doc: Document): void {
  visit(doc, {
    Collection(_, node) {
      node.flow = false;
    },
    Scalar(_, node) {
      // The stringifier still quotes any string that would otherwise read as another type.
      if (node.type === 'QUOTE_DOUBLE') node.type = 'PLAIN';
    },
  });
}

function yamlStream(docs: Document[], lineCounter: LineCounter): string {
  const options: ToStringOptions = {
    // Never fold long lines: a long annotation stays on one line.
    lineWidth: 0,
    flowCollectionPadding: false,
    ...indentation(docs, lineCounter),
  };
  return docs.map((doc) => doc.toString(options)).join('');
}

/**
 * The input's indentation, so a rewritten manifest diffs cleanly against its source: the first block map under
 * a key gives the width (2 or 4 are common), the first block sequence under a key whether sequences are
 * indented (`key:\n  - item`, as most hand-written manifests) or not (`key:\n- item`, kubectl's own output).
 */
function indentation(docs: Document[], lineCounter: LineCounter): { indent: number; indentSeq: boolean } {
  let indent: number | undefined;
  let indentSeq: boolean | undefined;
  const depth = (node: Node, parent: unknown): number | undefined => {
    if (!isPair(parent) || !isNode(parent.key) || !parent.key.range || !node.range) return undefined;
    return lineCounter.linePos(node.range[0]).col - lineCounter.linePos(parent.key.range[0]).col;
  };
  for (const doc of docs) {
    visit(doc, {
      Map(_, node, path) {
        if (indent === undefined && !node.flow) indent = depth(node, path.at(-1));
      },
      Seq(_, node, path) {
        if (indentSeq === undefined && !node.flow) {
          const by = depth(node, path.at(-1));
          if (by !== undefined) indentSeq = by > 0;
        }
      },
    });
  }
  return {
    indent: indent !== undefined && indent >= 1 && indent <= 8 ? indent : 2,
    indentSeq: indentSeq ?? true,
  };
}

function jsonStream(docs: Document[]): string {
  // An empty document (a trailing `---`) is no object to print.
  const values = docs
    .map((doc) => doc.toJS() as unknown)
    .filter((value) => value !== null && value !== undefined);
  if (values.length === 0) return '';
  const value = values.length === 1 ? values[0] : { apiVersion: 'v1', kind: 'List', items: values };
  return `${JSON.stringify(value, null, 2)}\n`;
}
