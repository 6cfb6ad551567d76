// kubectl's default container, decided on a rewritten spec: named only when the companion is first, only for
// an app container, and never over a value the pod has.

import { describe, expect, it } from 'vitest';
import { COMPANION_NAME, INIT_NAME } from '../../src/rewrite/companion.js';
import {
  DEFAULT_CONTAINER_ANNOTATION,
  defaultContainerAnnotations,
} from '../../src/rewrite/default-container.js';
import type { PodSpec } from '../../src/rewrite/types.js';

const named = (...names: string[]) => names.map((name) => ({ name }));
const KEY = DEFAULT_CONTAINER_ANNOTATION;

describe('defaultContainerAnnotations', () => {
  it.each<{
    name: string;
    spec: PodSpec;
    annotations?: Record<string, string>;
    added: Record<string, string>;
  }>([
    {
      name: 'companion first, no annotations: the first app container',
      spec: { containers: named(COMPANION_NAME, 'web', 'cache') },
      added: { [KEY]: 'web' },
    },
    {
      name: 'companion first, other annotations: added beside them',
      spec: { containers: named(COMPANION_NAME, 'web') },
      annotations: { 'prometheus.io/scrape': 'true' },
      added: { [KEY]: 'web' },
    },
    {
      name: "the pod's own value stays",
      spec: { containers: named(COMPANION_NAME, 'web', 'shell') },
      annotations: { [KEY]: 'shell' },
      added: {},
    },
    {
      name: "the pod's own value stays when it names the companion",
      spec: { containers: named(COMPANION_NAME, 'web') },
      annotations: { [KEY]: COMPANION_NAME },
      added: {},
    },
    {
      name: "the pod's own value stays when it is empty (kubectl then takes the first container, as asked)",
      spec: { containers: named(COMPANION_NAME, 'web') },
      annotations: { [KEY]: '' },
      added: {},
    },
    {
      name: 'native sidecar: the companion is an init container and the app is first already',
      spec: { initContainers: named(INIT_NAME, COMPANION_NAME), containers: named('web') },
      added: {},
    },
    {
      name: 'the companion not first (an earlier release put it last): not ours to judge',
      spec: { containers: named('web', COMPANION_NAME) },
      added: {},
    },
    {
      name: 'no app container beside the companion',
      spec: { containers: named(COMPANION_NAME) },
      added: {},
    },
    { name: 'no containers at all', spec: {}, added: {} },
  ])('$name', ({ spec, annotations, added }) => {
    expect(defaultContainerAnnotations(spec, annotations)).toEqual(added);
  });
});
