// withAnnotations: a pod (template)'s metadata with annotations added, whatever shape it had, without touching
// the input; a shape the API server would refuse is an error naming the field.

import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/rewrite/manifest-error.js';
import { withAnnotations } from '../../src/rewrite/metadata.js';

const ADDED = { 'kubectl.kubernetes.io/default-container': 'web' };

describe('withAnnotations', () => {
  it.each<{ name: string; metadata: unknown; want: Record<string, unknown> }>([
    { name: 'no metadata', metadata: undefined, want: { annotations: ADDED } },
    { name: 'metadata: null (an empty YAML value)', metadata: null, want: { annotations: ADDED } },
    {
      name: 'metadata without annotations: the other fields kept',
      metadata: { labels: { app: 'web' } },
      want: { labels: { app: 'web' }, annotations: ADDED },
    },
    {
      name: 'annotations: null',
      metadata: { name: 'p', annotations: null },
      want: { name: 'p', annotations: ADDED },
    },
    {
      name: 'annotations: added after the existing ones',
      metadata: { annotations: { 'prometheus.io/scrape': 'true' } },
      want: { annotations: { 'prometheus.io/scrape': 'true', ...ADDED } },
    },
  ])('$name', ({ metadata, want }) => {
    const before = structuredClone(metadata);
    const result = withAnnotations(metadata, ADDED, 'Pod/p', ['metadata']);
    expect(result).toEqual(want);
    expect(Object.keys(result.annotations as object)).toEqual(Object.keys(want.annotations as object));
    expect(metadata).toEqual(before);
  });

  it.each([
    {
      name: 'metadata is a list',
      metadata: ['a'],
      message: 'Deployment/d: spec.template.metadata: must be an object, got an array',
    },
    {
      name: 'annotations is a string',
      metadata: { annotations: 'a=b' },
      message: 'Deployment/d: spec.template.metadata.annotations: must be a map of annotations, got "a=b"',
    },
  ])('refuses $name, naming the field', ({ metadata, message }) => {
    const call = () => withAnnotations(metadata, ADDED, 'Deployment/d', ['spec', 'template', 'metadata']);
    expect(call).toThrow(ManifestError);
    expect(call).toThrow(message);
  });
});
