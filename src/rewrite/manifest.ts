// inject over a stream of YAML or JSON documents: find the pod templates, rewrite each spec, and edit the
// YAML nodes in place, so document order, comments, key order and untouched fields come out as they went in.
// One document at a time: parsed, checked, rewritten, printed, its nodes dropped; only the printed text is kept
// until the whole stream has proved valid (all or nothing), so time and memory grow with the input, linearly.

import { isDeepStrictEqual } from 'node:util';
import {
  Composer,
  type Document,
  isCollection,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  type Node,
  Parser,
  type ToStringOptions,
  visit,
} from 'yaml';
import { describeValue, HealthcheckError } from '../errors.js';
import { BUILT_TEXTS, type BuiltTexts } from './built-nodes.js';
import { type DocumentValue, documentValue } from './document-value.js';
import { AnnotationError, type FieldPath, formatPath, ManifestError } from './manifest-error.js';
import { exclusionAnnotation, MESH_FORMATS } from './mesh-exclusion.js';
import { withAnnotations } from './metadata.js';
import { isOptedOut, rewritePodSpec } from './pod.js';
import { decideResources } from './resources/defaults.js';
import { mergeRuleSets, type NamespaceRuleSet, ruleDocuments, rulesFor } from './resources/rule-documents.js';
import { syncNode } from './sync.js';
import type { PodSpec, RewriteOptions } from './types.js';
import { type PassedThrough, readWorkloads } from './workload.js';

export type OutputFormat = 'yaml' | 'json';

export interface InjectResult {
  /** The whole output stream: YAML documents, or JSON (one object, or a v1 List of several). */
  readonly output: string;
  /**
   * The same as UTF-8, in the pieces it was printed in: the CLI writes them one by one, so a big stream is never
   * held twice (once printed, once joined). Bytes outside V8's heap: held as strings until the stream has proved
   * valid, the output sized the heap, which grew to about twice it before collecting (BENCHMARKS.md, "Inject:
   * time and peak memory by input size").
   */
  chunks: readonly Uint8Array[];
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

const NO_RULES: NamespaceRuleSet = { limitRanges: [], resourceQuotas: [] };

/**
 * Rewrites every workload in `source`; throws HealthcheckError (OSM_HC_MANIFEST) naming the input (`input`:
 * the -f file or stdin, when given), document and line.
 * `namespaceRules`: LimitRanges and ResourceQuotas from elsewhere (--namespace-rules), with the stream's own.
 */
export function injectManifests(
  source: string,
  options: RewriteOptions,
  format: OutputFormat,
  namespaceRules: NamespaceRuleSet = NO_RULES,
  input?: string,
): InjectResult {
  const prefix = input === undefined ? '' : `${input}: `;
  // Every rule of the stream counts for every workload of its namespace, wherever the two stand in it. Rules
  // usually come first or not at all; where one follows a workload, the stream is read again, all rules known.
  const first = injectStream(source, options, format, namespaceRules, prefix, true);
  if (!first.lateRules) return first.result;
  return injectStream(source, options, format, first.rules, prefix, false).result;
}

/**
 * --namespace-rules FILE: a stream (or a `kind: List`) of LimitRanges and ResourceQuotas, nothing else;
 * errors name the file, the document and the field.
 */
export function readNamespaceRules(source: string, file: string): NamespaceRuleSet {
  const sets: NamespaceRuleSet[] = [];
  for (const read of readStream(source, `${file}: `)) {
    const { doc, value, where } = read;
    sets.push(
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
    );
  }
  return mergeRuleSets(...sets);
}

interface StreamPass {
  result: InjectResult;
  /** The rules the rewrite used, with the stream's own when `collect` was asked. */
  rules: NamespaceRuleSet;
  /** A rule stood after a workload, which was rewritten without it: read the stream again with `rules`. */
  lateRules: boolean;
}

function injectStream(
  source: string,
  options: RewriteOptions,
  format: OutputFormat,
  known: NamespaceRuleSet,
  prefix: string,
  collect: boolean,
): StreamPass {
  const warnings: string[] = [];
  const notes: string[] = [];
  const chunks: Uint8Array[] = [];
  const values: unknown[] = [];
  let placedRunningPods = false;
  let rules = known;
  let lateRules = false;
  let workloadsSeen = false;
  let style: Indentation = {};
  for (const { doc, value, where } of readStream(source, prefix)) {
    if (collect) {
      const found = atDocument(doc, where, () => ruleDocuments(value));
      if (found.limitRanges.length + found.resourceQuotas.length > 0) {
        rules = mergeRuleSets(rules, found);
        lateRules ||= workloadsSeen;
      }
    }
    if (format === 'yaml') style = indentation(doc, source, style);
    if (format === 'yaml' && isCollection(doc.contents) && doc.contents.flow) toBlockStyle(doc);
    const injected = atDocument(doc, where, () => injectDocument(doc, value, options, rules));
    workloadsSeen ||= injected.workloads > 0;
    for (const { objectPath, why } of injected.passed) {
      const item = objectPath.length === 0 ? '' : ` ${formatPath(objectPath)}:`;
      warnings.push(`${where(offsetOf(doc, objectPath))}:${item} ${why}: passed through unchanged`);
    }
    warnings.push(...injected.warnings);
    placedRunningPods ||= injected.placedRunningPods;
    notes.push(...injected.notes);
    if (format === 'yaml') chunks.push(Buffer.from(printDocument(doc, style)));
    else if (value !== null && value !== undefined) values.push(injected.changed ? doc.toJS() : value);
  }
  const printed = format === 'yaml' ? chunks : [Buffer.from(jsonStream(values))];
  const result: InjectResult = {
    chunks: printed,
    get output() {
      return Buffer.concat(printed).toString();
    },
    warnings,
    placedRunningPods,
    notes,
  };
  return { result, rules, lateRules };
}

interface StreamDocument {
  doc: Document.Parsed;
  value: unknown;
  where: (offset: number | undefined) => string;
}

/**
 * YAML 1.2 allows none of these anywhere in a stream, not even quoted (they must be escaped): C0 controls but
 * tab, LF and CR, DEL, and C1 controls but NEL (yaml.org/spec/1.2.2, 5.1 Character Set). Seen in a manifest,
 * they are binary data.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const NOT_YAML_TEXT = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]/;

/**
 * The documents of a YAML (or JSON) stream, one at a time, each with its value, checked: a syntax error,
 * binary data, a duplicate key, or a document that is no object (a string, a list) names its document and line;
 * a stream without any object is an error too. With yaml's own duplicate-key check (quadratic in a map's size)
 * off: duplicateKey finds them in one pass.
 */
function* readStream(source: string, prefix: string): Generator<StreamDocument> {
  const binary = NOT_YAML_TEXT.exec(source);
  const composer = new Composer({ uniqueKeys: false });
  let index = 0;
  let objects = 0;
  const fail = (where: string, problem: string, cause?: unknown): never => {
    throw new HealthcheckError('OSM_HC_MANIFEST', `${prefix}${where}: ${problem}`, { cause });
  };
  for (const doc of composer.compose(new Parser().parse(source))) {
    index += 1;
    const number = index;
    const place = (offset: number | undefined) =>
      `document ${number}${offset === undefined ? '' : `, line ${lineOf(source, offset)}`}`;
    const where = (offset: number | undefined) => `${prefix}${place(offset)}`;
    if (binary !== null && binary.index < doc.range[2]) {
      fail(place(binary.index), binaryProblem(binary[0]));
    }
    const [error] = doc.errors;
    if (error !== undefined) {
      // yaml's message may end in "at line L, column C:" and a code frame; we say the line our own way.
      const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:$/, '');
      throw new HealthcheckError('OSM_HC_MANIFEST', `${where(error.pos[0])}: ${message}`, { cause: error });
    }
    let read: DocumentValue;
    try {
      read = documentValue(doc);
    } catch (err) {
      // e.g. yaml's guard against alias bombs ("Excessive alias count").
      return fail(place(undefined), (err as Error).message, err);
    }
    if ('duplicate' in read) {
      const key = JSON.stringify(String(read.duplicate.key.value));
      return fail(place(read.duplicate.offset), `duplicate key ${key} in one map`);
    }
    const { value } = read;
    if (value !== null && value !== undefined) {
      if (typeof value !== 'object' || Array.isArray(value)) {
        fail(place(doc.contents?.range?.[0]), notAnObject(value));
      }
      objects += 1;
    }
    yield { doc, value, where };
  }
  const [error] = composer.streamInfo().errors;
  if (error !== undefined) fail(`line ${lineOf(source, error.pos[0])}`, error.message.split('\n')[0] ?? '');
  if (binary !== null) fail(`line ${lineOf(source, binary.index)}`, binaryProblem(binary[0]));
  if (objects === 0) {
    fail(
      index === 0 ? 'no documents' : `${index} document${index === 1 ? '' : 's'}, none with an object`,
      'the input is empty (or only comments): no YAML or JSON manifest to inject',
    );
  }
}

function binaryProblem(char: string): string {
  const code = `U+${char.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}`;
  return `control character ${code}: binary data, not a YAML or JSON manifest`;
}

function notAnObject(value: unknown): string {
  const what = Array.isArray(value) ? 'a list' : `a ${typeof value} (${describeValue(value)})`;
  const hint = Array.isArray(value)
    ? '; a list of objects goes in the items of a v1 List (kind: List), as kubectl get -o yaml writes it'
    : '';
  return `is ${what}, not a Kubernetes object (a map with apiVersion and kind)${hint}`;
}

/** The 1-based line of `offset`: counted only for an error or a warning, so no line table is kept. */
function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let at = source.indexOf('\n'); at >= 0 && at < offset; at = source.indexOf('\n', at + 1)) line += 1;
  return line;
}

function columnOf(source: string, offset: number): number {
  return offset - (source.lastIndexOf('\n', offset - 1) + 1);
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

interface DocumentResult extends Omit<InjectResult, 'output' | 'chunks'> {
  passed: PassedThrough[];
  /** Pod templates found (rewritten or not). */
  workloads: number;
  /** Some node of the document was edited. */
  changed: boolean;
}

function injectDocument(
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

/**
 * The document as YAML. yaml prints its directives first and, to know which %TAG lines to print, walks the whole
 * document for tags; with no %YAML line and no handle but the default `!!` (almost every manifest) it prints
 * nothing whatever that walk finds, so that document's directives print nothing without the walk.
 */
function printDocument(doc: Document, style: Indentation): string {
  // An empty document (a stream's trailing `---`, as Istio's and kubectl's output ends): yaml prints its null with
  // a blank line after the marker, one more on every run, so inject twice would differ from once.
  if (isEmptyDocument(doc)) return doc.directives?.docStart ? '---\n' : '';
  const { directives } = doc;
  const handles = directives === undefined ? [] : Object.keys(directives.tags);
  if (directives !== undefined && !directives.yaml.explicit && handles.length === 1 && handles[0] === '!!') {
    const defaultTags = directives.tags['!!'] === 'tag:yaml.org,2002:';
    if (defaultTags) directives.toString = () => '';
  }
  const built: BuiltTexts = { keys: new WeakMap() };
  return doc.toString({ ...yamlOptions(style), [BUILT_TEXTS]: built } as ToStringOptions);
}

function isEmptyDocument(doc: Document): boolean {
  const { contents } = doc;
  return (
    isScalar(contents) &&
    contents.value === null &&
    contents.source === '' &&
    !contents.commentBefore &&
    !contents.comment &&
    !doc.commentBefore &&
    !doc.comment
  );
}

function yamlOptions(style: Indentation): ToStringOptions {
  return {
    // Never fold long lines: a long annotation stays on one line.
    lineWidth: 0,
    flowCollectionPadding: false,
    indent: style.indent !== undefined && style.indent >= 1 && style.indent <= 8 ? style.indent : 2,
    indentSeq: style.indentSeq ?? true,
  };
}

interface Indentation {
  indent?: number;
  indentSeq?: boolean;
}

/**
 * The document's indentation (else the one before it had), so a rewritten manifest diffs cleanly against its
 * source: the first block map under a key gives the width (2 or 4 are common), the first block sequence under a
 * key whether sequences are indented (`key:\n  - item`, as most hand-written manifests) or not (`key:\n- item`,
 * kubectl's own output). Flow collections (JSON) say nothing of either.
 */
function indentation(doc: Document, source: string, before: Indentation): Indentation {
  let indent: number | undefined;
  let indentSeq: boolean | undefined;
  const depth = (node: Node, parent: unknown): number | undefined => {
    if (!isPair(parent) || !isNode(parent.key) || !parent.key.range || !node.range) return undefined;
    return columnOf(source, node.range[0]) - columnOf(source, parent.key.range[0]);
  };
  // In the order yaml's visit meets the nodes, without its frozen path per node (as duplicateKey).
  const found = () => indent !== undefined && indentSeq !== undefined;
  const walk = (node: unknown, parent: unknown): boolean => {
    if (isMap(node)) {
      if (indent === undefined && !node.flow) indent = depth(node, parent);
      if (found()) return true;
    } else if (isSeq(node)) {
      if (indentSeq === undefined && !node.flow) {
        const by = depth(node, parent);
        if (by !== undefined) indentSeq = by > 0;
      }
      if (found()) return true;
    }
    if (isCollection(node)) return node.items.some((item) => walk(item, node));
    return isPair(node) && (walk(node.key, node) || walk(node.value, node));
  };
  walk(doc.contents, doc);
  return { indent: indent ?? before.indent, indentSeq: indentSeq ?? before.indentSeq };
}

function jsonStream(values: unknown[]): string {
  // An empty document (a trailing `---`) is no object to print.
  if (values.length === 0) return '';
  const value = values.length === 1 ? values[0] : { apiVersion: 'v1', kind: 'List', items: values };
  return `${JSON.stringify(value, null, 2)}\n`;
}
