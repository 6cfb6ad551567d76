// injectManifests: the YAML/JSON stream around the pure rewrite — comments, formats, and errors that name
// the document and the line.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HealthcheckError } from '../../src/errors.js';
import { injectManifests } from '../../src/manifest/inject.js';
import { DEFAULT_IMAGE } from '../../src/rewrite/companion.js';
import { RECORD_ANNOTATION } from '../../src/rewrite/record.js';
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

  it.each([
    { name: 'a trailing ---', tail: '---\n' },
    { name: 'a trailing --- and a blank line', tail: '---\n\n' },
    {
      name: 'an empty document between two',
      tail: '---\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n',
    },
  ])(
    'an empty document ($name) prints as its marker: inject twice is inject once, byte for byte',
    ({ tail }) => {
      const once = injectManifests(`${POD}${tail}`, OPTIONS, 'yaml').output;
      expect(injectManifests(once, OPTIONS, 'yaml').output).toBe(once);
      expect(once).not.toMatch(/---\n\n/);
    },
  );

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
      `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n    - name: a\n      livenessProbe: {tcpSocket: {host: h, port: 1}}\n`;
    const { warnings } = injectManifests(`${host('one')}---\n${host('two')}`, OPTIONS, 'yaml');
    expect(warnings.map((w) => w.split(':')[0])).toEqual(['Pod/one', 'Pod/two']);
  });
});

it('two items sharing one anchored pod spec are both rewritten, the alias kept', () => {
  const source =
    'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    spec: &s\n      containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n  - apiVersion: v1\n    kind: Pod\n    spec: *s\n';
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
        'apiVersion: v1\nkind: Pod\nmetadata:\nspec:\n  containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n',
      expected:
        'apiVersion: v1\nkind: Pod\nmetadata:\n  annotations:\n    kubectl.kubernetes.io/default-container: a\n    osm-healthcheck/status: <record>\nspec:\n',
    },
    {
      name: 'no metadata: it goes just before spec',
      source: `apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    # the pod\n${probed}`,
      expected:
        'apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    metadata:\n      annotations:\n        kubectl.kubernetes.io/default-container: a\n        osm-healthcheck/status: <record>\n    # the pod\n    spec:\n',
    },
    {
      name: 'a flow map of annotations stays a flow map',
      source: `apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    metadata: {annotations: {x: "1"}}\n${probed}`,
      expected:
        'apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    metadata: {annotations: {x: "1", kubectl.kubernetes.io/default-container: a, osm-healthcheck/status: <record>}}\n',
    },
  ])('$name', ({ source, expected }) => {
    const { output } = injectManifests(source, OPTIONS, 'yaml');
    // The record beside it (its own tests: test/rewrite/pod.test.ts), as one quoted scalar in the same map.
    const shown = output.replace(/'\{"version":[^']*\}'/g, '<record>');
    expect(shown.startsWith(expected), output).toBe(true);
    expect(injectManifests(output, OPTIONS, 'yaml').output).toBe(output);
  });

  it('two workloads sharing one anchored template metadata: the anchor gets it once, the alias is kept', () => {
    const source =
      'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: batch/v1\n    kind: Job\n    spec:\n      template:\n        metadata: &m\n          labels: {app: a}\n  ' +
      probed.replaceAll('\n    ', '\n        ').replace(/^ {4}/, '      ') +
      '  - apiVersion: batch/v1\n    kind: Job\n    spec:\n      template:\n        metadata: *m\n  ' +
      probed.replaceAll('\n    ', '\n        ').replace(/^ {4}/, '      ');
    const { output } = injectManifests(source, OPTIONS, 'yaml');
    expect(output).toContain('metadata: *m');
    const value = JSON.parse(injectManifests(output, OPTIONS, 'json').output);
    for (const item of value.items) {
      expect(item.spec.template.metadata.annotations).toEqual({
        'kubectl.kubernetes.io/default-container': 'a',
        [RECORD_ANNOTATION]: expect.stringContaining('"placement":"first"'),
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
      source: `${POD}---\napiVersion: v1\nkind: Service\nmetadata: {name: x}\nmetadata: {name: y}\n`,
      message: /^document 2, line 14: duplicate key "metadata" in one map$/,
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
      name: 'an opt-out annotation neither "true" nor "false"',
      source:
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    osm-healthcheck/rewrite-probes: "no"\nspec:\n  containers: [{name: a}]\n',
      message:
        /^document 1, line 6: Pod\/p: metadata.annotations.osm-healthcheck\/rewrite-probes: must be "true" or "false", got "no"$/,
    },
    {
      name: 'a container without a name',
      source:
        'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: a\n    - image: b\n',
      message: /^document 1, line 7: Pod\/p: spec.containers\[1\]: container has no name$/,
    },
    {
      name: 'duplicate container names inside a List',
      source:
        'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: p}\n    spec:\n      containers:\n        - name: a\n        - name: a\n',
      message:
        /^document 1, line 10: Pod\/p: items\[0\].spec.containers\[1\].name: duplicate container name "a"/,
    },
    {
      name: "annotations that are no map, where kubectl's default container goes",
      source:
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: [a]\nspec:\n  containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n',
      message:
        /^document 1, line 5: Pod\/p: metadata.annotations: must be a map of annotations, got an array$/,
    },
    {
      name: 'a pod template that is an alias of something inject did not rewrite',
      source:
        'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: PodTemplate\n    template: &t\n      spec:\n        containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n  - apiVersion: batch/v1\n    kind: Job\n    metadata: {name: j}\n    spec:\n      template: *t\n',
      message: /^document 1, line 13: Job\/j: items\[1\].spec.template.spec: is reached through a YAML alias/,
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

/** The message of what `run` throws, which must be a HealthcheckError of OSM_HC_MANIFEST. */
function manifestError(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(HealthcheckError);
    expect(err).toMatchObject({ code: 'OSM_HC_MANIFEST' });
    return (err as Error).message;
  }
  throw new Error('no error thrown');
}

describe('every document accounted for: what is no manifest is an error naming it', () => {
  const elf = `\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00`;
  it.each([
    { name: 'an empty input', source: '', message: /^stdin: no documents: the input is empty/ },
    {
      name: 'only comments and document markers',
      source: '# nothing here\n---\n---\n',
      message: /^stdin: 2 documents, none with an object: the input is empty/,
    },
    {
      name: 'the head of an ELF binary',
      source: elf,
      message:
        /^stdin: document 1, line 1: control character U\+007F: binary data, not a YAML or JSON manifest$/,
    },
    {
      name: 'random bytes (a control character in a quoted-looking text)',
      source: `${POD}---\n"abc\u0001def"\n`,
      message: /^stdin: document 2, line 11: control character U\+0001: binary data/,
    },
    {
      name: 'a top-level string',
      source: 'hello world\n',
      message: /^stdin: document 1, line 1: is a string \("hello world"\), not a Kubernetes object/,
    },
    {
      name: 'a top-level number after a pod',
      source: `${POD}---\n42\n`,
      message: /^stdin: document 2, line 11: is a number \(42\), not a Kubernetes object/,
    },
    {
      name: 'a JSON array of pods',
      source: `[${JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [] } })}]`,
      message: /^stdin: document 1, line 1: is a list, not a Kubernetes object .*items of a v1 List/,
    },
    {
      name: 'a duplicate key in a flow map',
      source: '{"apiVersion": "v1", "kind": "Pod", "kind": "Service"}',
      message: /^stdin: document 1, line 1: duplicate key "kind" in one map$/,
    },
  ])('$name', ({ source, message }) => {
    expect(manifestError(() => injectManifests(source, OPTIONS, 'yaml', undefined, 'stdin'))).toMatch(
      message,
    );
  });

  it('a duplicate key deep in a map of 20,000 keys is found, with its line', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `  k${i}: v`);
    keys.splice(15_000, 0, '  k123: again');
    const source = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n${keys.join('\n')}\n`;
    expect(manifestError(() => injectManifests(source, OPTIONS, 'yaml', undefined, 'big.yaml'))).toBe(
      'big.yaml: document 1, line 15005: duplicate key "k123" in one map',
    );
  });
});

describe('every document accounted for: what inject leaves alone is said', () => {
  const knative =
    'apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: hello\nspec:\n  template:\n    spec:\n      containers:\n        - image: hello\n          livenessProbe: {tcpSocket: {port: 8080}}\n';
  it.each([
    {
      name: 'a document without kind',
      source: 'apiVersion: v1\nmetadata: {name: x}\n',
      warning: 'document 2, line 11: no kind: not a Kubernetes object: passed through unchanged',
    },
    {
      name: 'a document without apiVersion',
      source:
        'kind: Pod\nmetadata: {name: x}\nspec:\n  containers: [{name: a, livenessProbe: {tcpSocket: {port: 1}}}]\n',
      warning: 'document 2, line 11: no apiVersion: not a Kubernetes object: passed through unchanged',
    },
    {
      name: 'a kind with a pod template that inject does not rewrite',
      source: knative,
      warning:
        'document 2, line 11: Service/hello (serving.knative.dev/v1) holds a pod template (spec.template), but inject does not rewrite this kind: passed through unchanged',
    },
    {
      name: 'the item of a List without kind',
      source: 'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    metadata: {name: x}\n',
      warning: 'document 2, line 14: items[0]: no kind: not a Kubernetes object: passed through unchanged',
    },
  ])('$name', ({ source, warning }) => {
    const { output, warnings } = injectManifests(`${POD}---\n${source}`, OPTIONS, 'yaml');
    expect(warnings).toEqual([warning]);
    expect(output.endsWith(`---\n${source}`)).toBe(true);
  });

  it.each([
    ['argoproj.io/v1alpha1', 'Rollout'],
    ['apps.kruise.io/v1alpha1', 'CloneSet'],
    ['apps.kruise.io/v1beta1', 'StatefulSet'],
    ['apps.kruise.io/v1alpha1', 'DaemonSet'],
  ])("%s %s: its pod template is rewritten as a Deployment's is", (apiVersion, kind) => {
    const workload = `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: w\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          livenessProbe: {tcpSocket: {port: 8080}}\n`;
    const { output, warnings } = injectManifests(workload, OPTIONS, 'json');
    expect(warnings).toEqual([]);
    const value = JSON.parse(output);
    expect(value.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual([
      'osm-healthcheck',
      'app',
    ]);
  });
});

it('a LimitRange after the workload counts as one before it', () => {
  const source = fixture('namespace-rules.yaml').replace(/^#.*\n/gm, '');
  const docs = source.split(/^---\n/m);
  const workloads = docs.filter((doc) => !/^kind: (LimitRange|ResourceQuota)$/m.test(doc));
  const rules = docs.filter((doc) => /^kind: (LimitRange|ResourceQuota)$/m.test(doc));
  expect(rules).toHaveLength(2);
  const rulesFirst = injectManifests([...rules, ...workloads].join('---\n'), OPTIONS, 'json').output;
  const rulesLast = injectManifests([...workloads, ...rules].join('---\n'), OPTIONS, 'json').output;
  const workload = (output: string) =>
    JSON.parse(output).items.find((i: { kind: string }) => i.kind === 'Deployment');
  expect(workload(rulesLast)).toEqual(workload(rulesFirst));
  // The rules change what the companion declares: without them the Deployment comes out otherwise.
  const without = JSON.parse(injectManifests(workloads.join('---\n'), OPTIONS, 'json').output);
  expect(without).not.toEqual(workload(rulesFirst));
});
