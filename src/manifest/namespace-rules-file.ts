// --namespace-rules FILE: LimitRanges and ResourceQuotas read from their own stream, nothing else in it.

import { ManifestError } from '../rewrite/manifest-error.js';
import { mergeRuleSets, type NamespaceRuleSet, ruleDocuments } from '../rewrite/resources/rule-documents.js';
import { atDocument } from './document.js';
import { readStream } from './read-stream.js';

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
