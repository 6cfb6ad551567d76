// The before-and-after examples of the README ("What changes in a pod") and docs/inject.md ("Before and after") are
// what inject prints: each "before" goes through the real CLI, and every field the "after" shows is in its output
// with the value shown (an "after" may leave fields out, as the pages abbreviate the companion, never differ).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RECORD_ANNOTATION } from '../../src/rewrite/record.js';
import { ROOT, runCli } from '../helpers/cli.js';

type Json = Record<string, unknown>;

/** The fenced yaml blocks of the section of `page` under `heading`, in order. */
function yamlBlocks(page: string, heading: string): string[] {
  const start = page.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`no heading ${heading}`);
  const next = page.indexOf('\n## ', start + heading.length + 2);
  const section = page.slice(start, next === -1 ? page.length : next);
  return [...section.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

/** Where `actual` lacks or differs from what `shown` says: arrays element by element, objects key by key. */
function differences(actual: unknown, shown: unknown, path = ''): string[] {
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual) || actual.length !== shown.length) {
      return [`${path}: shown ${JSON.stringify(shown)}, inject wrote ${JSON.stringify(actual)}`];
    }
    return shown.flatMap((item, i) => differences(actual[i], item, `${path}[${i}]`));
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      return [`${path}: shown an object, inject wrote ${JSON.stringify(actual)}`];
    }
    return Object.entries(shown).flatMap(([key, value]) =>
      differences((actual as Json)[key], value, `${path}.${key}`),
    );
  }
  return actual === shown
    ? []
    : [`${path}: shown ${JSON.stringify(shown)}, inject wrote ${JSON.stringify(actual)}`];
}

async function inject(manifest: Json, args: string[] = []): Promise<Json> {
  const { code, stdout, stderr } = await runCli(['inject', '-o', 'json', ...args], {
    input: JSON.stringify(manifest),
  });
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as Json;
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe("README's What changes in a pod", () => {
  it("the after probes are inject's for the before probes", async () => {
    const [block = ''] = yamlBlocks(read('README.md'), '## What changes in a pod');
    const cut = block.search(/^# after/m);
    expect(cut).toBeGreaterThan(0);
    const before = parse(block.slice(0, cut)) as Json;
    const after = parse(block.slice(cut)) as Json;
    // The probe paths name the container: /osm-readiness-probe/web.
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: { containers: [{ name: 'web', image: 'ghcr.io/example/web:1.0', ...before }] },
    };
    const out = (await inject(pod)) as { spec: { containers: Json[] } };
    const web = out.spec.containers.find((c) => c.name === 'web');
    expect(differences(web, after)).toEqual([]);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
  });
});

describe("docs/inject.md's Before and after", () => {
  const [before = '', after = ''] = yamlBlocks(read('docs/inject.md'), '## Before and after');
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: parse(before) as Json },
  };

  it('without --kube-version: every field the after shows, as inject writes it', async () => {
    const out = (await inject(deployment)) as { spec: { template: Json } };
    expect(differences(out.spec.template, parse(after))).toEqual([]);
  });

  it.each([[['--kube-version', '1.33']], [['--placement', 'native-sidecar', '--kube-version', '1.29']]])(
    '%j: the companion the second init container, restartPolicy Always, no hook; containers only web; no default-container annotation, only the record',
    async (args) => {
      const out = (await inject(deployment, args)) as {
        spec: { template: { metadata: Json; spec: { initContainers: Json[]; containers: Json[] } } };
      };
      const { metadata, spec } = out.spec.template;
      expect(spec.initContainers.map((c) => c.name)).toEqual(['osm-healthcheck-init', 'osm-healthcheck']);
      expect(spec.initContainers[1]?.restartPolicy).toBe('Always');
      expect(spec.initContainers[1]?.lifecycle).toBeUndefined();
      expect(spec.containers.map((c) => c.name)).toEqual(['web']);
      expect(Object.keys(metadata.annotations as Json)).toEqual([RECORD_ANNOTATION]);
    },
  );
});
