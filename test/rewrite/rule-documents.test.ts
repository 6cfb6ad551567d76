// inject's offline namespace rules: which documents are LimitRanges and ResourceQuotas, what in them is checked,
// and which rules a workload of some namespace gets.

import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/rewrite/manifest-error.js';
import type { LimitRange, ResourceQuota } from '../../src/rewrite/resources/namespace-rules.js';
import {
  type NamespaceRuleSet,
  ruleDocuments,
  rulesFor,
} from '../../src/rewrite/resources/rule-documents.js';

const limitRange = (name: string, namespace?: string): LimitRange => ({
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
  spec: { limits: [{ type: 'Container', min: { cpu: '100m' } }] },
});
const quota = (name: string, namespace?: string): ResourceQuota => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
  spec: { hard: { 'requests.cpu': '1' } },
});

describe('ruleDocuments', () => {
  it('finds rules as documents and as items of a List or a typed list; other kinds and groups are not rules', () => {
    const typed = { kind: 'LimitRangeList', items: [{ metadata: { name: 'typed' }, spec: { limits: [] } }] };
    const list = { kind: 'List', items: [quota('q'), { kind: 'ConfigMap' }, typed] };
    expect(ruleDocuments(list)).toEqual({
      limitRanges: [{ metadata: { name: 'typed' }, spec: { limits: [] } }],
      resourceQuotas: [quota('q')],
    });
    expect(ruleDocuments(limitRange('lr'))).toEqual({ limitRanges: [limitRange('lr')], resourceQuotas: [] });
    expect(ruleDocuments({ ...quota('crd'), apiVersion: 'example.com/v1' }).resourceQuotas).toEqual([]);
  });

  it.each([
    {
      name: 'a LimitRange without limits',
      doc: { kind: 'LimitRange', metadata: { name: 'lr' }, spec: {} },
      path: ['spec', 'limits'],
      problem: /a LimitRange needs a list of limits here, got nothing/,
    },
    {
      name: 'a max that is no quantity',
      doc: { kind: 'LimitRange', metadata: { name: 'lr' }, spec: { limits: [{ max: { cpu: 'lots' } }] } },
      path: ['spec', 'limits', 0, 'max', 'cpu'],
      problem: /must be a Kubernetes quantity, e.g. 100m or 64Mi, got "lots"/,
    },
    {
      name: "a quota's used that is no map",
      doc: { kind: 'ResourceQuota', metadata: { name: 'q' }, status: { used: ['1'] } },
      path: ['status', 'used'],
      problem: /must be a map of quantities/,
    },
    {
      name: 'scopes that are no list of names',
      doc: { kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { scopes: 'BestEffort' } },
      path: ['spec', 'scopes'],
      problem: /must be a list of scope names/,
    },
  ])('$name: a ManifestError at the field', ({ doc, path, problem }) => {
    try {
      ruleDocuments({ kind: 'List', items: [doc] });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ManifestError);
      expect((err as ManifestError).path).toEqual(['items', 0, ...path]);
      expect((err as ManifestError).problem).toMatch(problem);
    }
  });
});

describe('rulesFor', () => {
  const set = (...rules: (LimitRange | ResourceQuota)[]): NamespaceRuleSet => ({
    limitRanges: rules.filter((r): r is LimitRange => r.kind === 'LimitRange'),
    resourceQuotas: rules.filter((r): r is ResourceQuota => r.kind === 'ResourceQuota'),
  });

  it.each([
    {
      name: "rules of the workload's namespace, and those naming none",
      rules: set(limitRange('shop-lr', 'shop'), quota('anywhere'), limitRange('other', 'other')),
      namespace: 'shop',
      expected: {
        state: 'known',
        namespace: 'shop',
        limitRanges: [limitRange('shop-lr', 'shop')],
        resourceQuotas: [quota('anywhere')],
      },
    },
    {
      name: 'a workload naming no namespace gets the one namespace the rules name',
      rules: set(quota('q', 'shop')),
      namespace: undefined,
      expected: { state: 'known', namespace: 'shop', limitRanges: [], resourceQuotas: [quota('q', 'shop')] },
    },
    {
      name: 'no rule for the namespace: unchecked, as without any',
      rules: set(quota('q', 'shop')),
      namespace: 'other',
      expected: { state: 'unchecked' },
    },
  ])('$name', ({ rules, namespace, expected }) => {
    expect(rulesFor(rules, namespace, 'Deployment/web')).toEqual(expected);
  });

  it('a workload naming no namespace, rules of two: an error at its metadata.namespace', () => {
    const call = () => rulesFor(set(quota('a', 'a'), quota('b', 'b')), undefined, 'Deployment/web');
    expect(call).toThrow(ManifestError);
    expect(call).toThrow(
      'Deployment/web: metadata.namespace: is not set, and the namespace rules given are for namespaces "a", "b": set it',
    );
  });
});
