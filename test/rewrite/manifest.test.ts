// injectManifests: the YAML/JSON stream around the pure rewrite — comments, formats, and errors that name
// the document and the line.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HealthcheckError } from '../../src/errors.js';
import { DEFAULT_IMAGE } from '../../src/rewrite/companion.js';
import { injectManifests } from '../../src/rewrite/manifest.js';
import type { RewriteOptions } from '../../src/rewrite/types.js';

const OPTIONS: RewriteOptions = { image: DEFAULT_IMAGE, placement: 'first' };
const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/inject/${name}`, import.meta.url), 'utf8');

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
    - name: web
      livenessProbe:
        httpGet: {path: /live, port: 8080}
`;

describe('injectManifests output', () => {
  it('keeps every comment of the input', () => {
    const source = fixture('comments.yaml');
    const { output } = injectManifests(source, OPTIONS, 'yaml');
    const comments = source.split('\n').flatMap((line) => line.match(/#.*$/) ?? []);
    expect(comments.length).toBeGreaterThan(10);
    for (const comment of comments) expect(output).toContain(comment);
  });

  it('an empty input gives an empty output', () => {
    expect(injectManifests('', OPTIONS, 'yaml')).toEqual({
      output: '',
      warnings: [],
      placedRunningPods: false,
      notes: [],
    });
  });

  it('-o json: one document gives one object', () => {
    const { output } = injectManifests(POD, OPTIONS, 'json');
    const value = JSON.parse(output);
    expect(value).toMatchObject({
      kind: 'Pod',
      spec: { containers: [{ name: 'osm-healthcheck' }, { name: 'web' }] },
    });
    expect(output.endsWith('}\n')).toBe(true);
  });

  it('-o json: several documents give a v1 List, which injects to itself again', () => {
    const { output } = injectManifests(
      `${POD}---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n`,
      OPTIONS,
      'json',
    );
    expect(JSON.parse(output)).toMatchObject({
      apiVersion: 'v1',
      kind: 'List',
      items: [{ kind: 'Pod' }, { kind: 'Service' }],
    });
    expect(injectManifests(output, OPTIONS, 'json').output).toBe(output);
  });

  it('JSON in, JSON out, with the same values as the YAML route', () => {
    const json = fixture('pod.json');
    const viaJson = JSON.parse(injectManifests(json, OPTIONS, 'json').output);
    const viaYaml = JSON.parse(
      injectManifests(injectManifests(json, OPTIONS, 'yaml').output, OPTIONS, 'json').output,
    );
    expect(viaJson).toEqual(viaYaml);
  });

  it('warnings come in document order', () => {
    const host = (name: string) =>
      `kind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n    - name: a\n      livenessProbe: {tcpSocket: {host: h, port: 1}}\n`;
    const { warnings } = injectManifests(`${host('one')}---\n${host('two')}`, OPTIONS, 'yaml');
    expect(warnings.map((w) => w.split(':')[0])).toEqual(['Pod/one', 'Pod/two']);
  });
});

it('two items sharing one anchored pod spec are both rewritten, the alias kept', () => {
  const source =
    'kind: List\nitems:\n  - kind: Pod\n    spec: &s\n      containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n  - kind: Pod\n    spec: *s\n';
  const { output } = injectManifests(source, OPTIONS, 'yaml');
  expect(output).toContain('spec: *s');
  const value = JSON.parse(injectManifests(output, OPTIONS, 'json').output);
  expect(value.items[1].spec).toEqual(value.items[0].spec);
  expect(value.items[1].spec.containers[0].name).toBe('osm-healthcheck');
});

describe("kubectl's default container in the pod (template)'s metadata, edited in place", () => {
  const probed = '    spec:\n      containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n';
  it.each([
    {
      name: 'metadata: with no value',
      source:
        'kind: Pod\nmetadata:\nspec:\n  containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n',
      expected:
        'kind: Pod\nmetadata:\n  annotations:\n    kubectl.kubernetes.io/default-container: a\nspec:\n',
    },
    {
      name: 'no metadata: it goes just before spec',
      source: `kind: Job\nspec:\n  template:\n    # the pod\n${probed}`,
      expected:
        'kind: Job\nspec:\n  template:\n    metadata:\n      annotations:\n        kubectl.kubernetes.io/default-container: a\n    # the pod\n    spec:\n',
    },
    {
      name: 'a flow map of annotations stays a flow map',
      source: `kind: Job\nspec:\n  template:\n    metadata: {annotations: {x: "1"}}\n${probed}`,
      expected:
        'kind: Job\nspec:\n  template:\n    metadata: {annotations: {x: "1", kubectl.kubernetes.io/default-container: a}}\n',
    },
  ])('$name', ({ source, expected }) => {
    const { output } = injectManifests(source, OPTIONS, 'yaml');
    expect(output.startsWith(expected), output).toBe(true);
    expect(injectManifests(output, OPTIONS, 'yaml').output).toBe(output);
  });

  it('two workloads sharing one anchored template metadata: the anchor gets it once, the alias is kept', () => {
    const source =
      'kind: List\nitems:\n  - kind: Job\n    spec:\n      template:\n        metadata: &m\n          labels: {app: a}\n  ' +
      probed.replaceAll('\n    ', '\n        ').replace(/^ {4}/, '      ') +
      '  - kind: Job\n    spec:\n      template:\n        metadata: *m\n  ' +
      probed.replaceAll('\n    ', '\n        ').replace(/^ {4}/, '      ');
    const { output } = injectManifests(source, OPTIONS, 'yaml');
    expect(output).toContain('metadata: *m');
    const value = JSON.parse(injectManifests(output, OPTIONS, 'json').output);
    for (const item of value.items) {
      expect(item.spec.template.metadata.annotations).toEqual({
        'kubectl.kubernetes.io/default-container': 'a',
      });
    }
  });
});

describe('injectManifests errors name the document and the line', () => {
  it.each([
    {
      name: 'invalid YAML in the second document',
      source: 'a: 1\n---\nb: [1, 2\nc: 3\n',
      message:
        /^document 2, line 4: Flow sequence in block collection must be sufficiently indented and end with a \]$/,
    },
    {
      name: 'a duplicate key',
      source: `${POD}---\nkind: Service\nmetadata: {name: x}\nmetadata: {name: y}\n`,
      message: /^document 2, line 13: Map keys must be unique$/,
    },
    {
      name: 'invalid JSON',
      source: '{"kind": "Pod", "spec": {"containers": [}\n',
      message: /^document 1, line 1: /,
    },
    {
      name: 'a workload without a pod template, after a valid document',
      source: `${POD}---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 1\n`,
      message:
        /^document 2, line 16: Deployment\/d: spec.template: a Deployment needs a pod template here, got nothing$/,
    },
    {
      name: 'a container without a name',
      source: 'kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: a\n    - image: b\n',
      message: /^document 1, line 6: Pod\/p: spec.containers\[1\]: container has no name$/,
    },
    {
      name: 'duplicate container names inside a List',
      source:
        'kind: List\nitems:\n  - kind: Pod\n    metadata: {name: p}\n    spec:\n      containers:\n        - name: a\n        - name: a\n',
      message:
        /^document 1, line 8: Pod\/p: items\[0\].spec.containers\[1\].name: duplicate container name "a"/,
    },
    {
      name: "annotations that are no map, where kubectl's default container goes",
      source:
        'kind: Pod\nmetadata:\n  name: p\n  annotations: [a]\nspec:\n  containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n',
      message:
        /^document 1, line 4: Pod\/p: metadata.annotations: must be a map of annotations, got an array$/,
    },
    {
      name: 'a pod template that is an alias of something inject did not rewrite',
      source:
        'kind: List\nitems:\n  - kind: PodTemplate\n    template: &t\n      spec:\n        containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n  - kind: Job\n    metadata: {name: j}\n    spec:\n      template: *t\n',
      message: /^document 1, line 10: Job\/j: items\[1\].spec.template.spec: is reached through a YAML alias/,
    },
  ])('$name', ({ source, message }) => {
    let thrown: unknown;
    try {
      injectManifests(source, OPTIONS, 'yaml');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(HealthcheckError);
    expect(thrown).toMatchObject({ code: 'OSM_HC_MANIFEST' });
    expect((thrown as Error).message).toMatch(message);
  });
});
