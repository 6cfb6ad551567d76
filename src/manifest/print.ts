// Prints a rewritten document as it came: YAML in the indentation the source used (else the document's before),
// JSON turned to block style, lines never folded, the nodes inject built printed once (built-nodes.ts); or the
// stream's values as one JSON object (a v1 List of several).

import {
  type Document,
  isCollection,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  type Node,
  type ToStringOptions,
  visit,
} from 'yaml';
import { BUILT_TEXTS, type BuiltTexts } from './built-nodes.js';

/** JSON in, YAML out: block collections and plain scalars where they read the same. */
export function toBlockStyle(doc: Document): void {
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
export function printDocument(doc: Document, style: Indentation): string {
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

export interface Indentation {
  indent?: number;
  indentSeq?: boolean;
}

/**
 * The document's indentation (else the one before it had), so a rewritten manifest diffs cleanly against its
 * source: the first block map under a key gives the width (2 or 4 are common), the first block sequence under a
 * key whether sequences are indented (`key:\n  - item`, as most hand-written manifests) or not (`key:\n- item`,
 * kubectl's own output). Flow collections (JSON) say nothing of either.
 */
export function indentation(doc: Document, source: string, before: Indentation): Indentation {
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

function columnOf(source: string, offset: number): number {
  return offset - (source.lastIndexOf('\n', offset - 1) + 1);
}

export function jsonStream(values: unknown[]): string {
  // An empty document (a trailing `---`) is no object to print.
  if (values.length === 0) return '';
  const value = values.length === 1 ? values[0] : { apiVersion: 'v1', kind: 'List', items: values };
  return `${JSON.stringify(value, null, 2)}\n`;
}
