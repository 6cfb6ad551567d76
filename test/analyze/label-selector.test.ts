// Label selectors as apimachinery reads them, and written back in the API's labelSelector syntax.

import { describe, expect, it } from 'vitest';
import { type LabelSelector, matchesSelector, selectorQuery } from '../../src/analyze/label-selector.js';

const LABELS = { 'osm-healthcheck-injection': 'enabled', tier: 'web' };

describe('matchesSelector', () => {
  it.each<{ name: string; selector: LabelSelector | undefined; matches: boolean }>([
    { name: 'no selector', selector: undefined, matches: true },
    { name: 'an empty one', selector: {}, matches: true },
    {
      name: 'matchLabels met',
      selector: { matchLabels: { 'osm-healthcheck-injection': 'enabled' } },
      matches: true,
    },
    { name: 'matchLabels another value', selector: { matchLabels: { tier: 'db' } }, matches: false },
    {
      name: 'In',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['db', 'web'] }] },
      matches: true,
    },
    {
      name: 'In, absent key',
      selector: { matchExpressions: [{ key: 'x', operator: 'In', values: ['a'] }] },
      matches: false,
    },
    {
      name: 'NotIn, absent key',
      selector: { matchExpressions: [{ key: 'x', operator: 'NotIn', values: ['a'] }] },
      matches: true,
    },
    {
      name: 'NotIn, listed',
      selector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] },
      matches: false,
    },
    { name: 'Exists', selector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, matches: true },
    {
      name: 'DoesNotExist',
      selector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
      matches: false,
    },
    {
      name: 'an operator it cannot read',
      selector: { matchExpressions: [{ key: 'tier', operator: 'Gt', values: ['1'] }] },
      matches: false,
    },
  ])('$name: $matches', ({ selector, matches }) => {
    expect(matchesSelector(selector, LABELS)).toBe(matches);
  });
});

describe('selectorQuery', () => {
  it('writes every requirement as the API reads labelSelector', () => {
    expect(
      selectorQuery({
        matchLabels: { a: '1' },
        matchExpressions: [
          { key: 'b', operator: 'In', values: ['x', 'y'] },
          { key: 'c', operator: 'NotIn', values: ['z'] },
          { key: 'd', operator: 'Exists' },
          { key: 'e', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('a=1,b in (x,y),c notin (z),d,!e');
    expect(selectorQuery(undefined)).toBe('');
  });
});
