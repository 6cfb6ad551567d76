// inject over a stream of YAML or JSON documents: find the pod templates, rewrite each spec, and edit the
// YAML nodes in place, so document order, comments, key order and untouched fields come out as they went in.
// One document at a time: parsed, checked, rewritten, printed, its nodes dropped; only the printed text is kept
// until the whole stream has proved valid (all or nothing), so time and memory grow with the input, linearly.
// The room manifest/ is inject's YAML machinery, between commands/inject.ts and rewrite/: it may import rewrite/
// and what sits below it, and only commands/ imports it (docs/architecture.md#the-layout-of-src).

import { isCollection } from 'yaml';
import { formatPath } from '../rewrite/manifest-error.js';
import { mergeRuleSets, type NamespaceRuleSet, ruleDocuments } from '../rewrite/resources/rule-documents.js';
import type { RewriteOptions } from '../rewrite/types.js';
import { atDocument, injectDocument, offsetOf } from './document.js';
import { type Indentation, indentation, jsonStream, printDocument, toBlockStyle } from './print.js';
import { readStream } from './read-stream.js';

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
