// Every file and directory a kustomization names must exist: checked here by reading the kustomizations
// themselves, so a missing file fails the tests even where kubectl is not installed.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import type { Manifest } from './kustomize.js';

export interface Listed {
  /** The kustomization field that names it, e.g. `resources` or `patches[1].path`. */
  field: string;
  path: string;
}

/** The local paths a kustomization names (remote resources and inline patches are not files). */
export function listedPaths(kustomization: Manifest): Listed[] {
  const strings = (field: string): Listed[] =>
    ((kustomization[field] ?? []) as unknown[]).flatMap((path, i) =>
      typeof path === 'string' && !path.includes('\n') && !/^[a-z]+:\/\/|^github\.com\//.test(path)
        ? [{ field: `${field}[${i}]`, path }]
        : [],
    );
  const paths = (field: string): Listed[] =>
    ((kustomization[field] ?? []) as Manifest[]).flatMap((entry, i) =>
      typeof entry?.path === 'string' ? [{ field: `${field}[${i}].path`, path: entry.path as string }] : [],
    );
  return [
    ...strings('resources'),
    ...strings('components'),
    ...strings('configurations'),
    ...strings('patchesStrategicMerge'),
    ...paths('patches'),
    ...paths('patchesJson6902'),
  ];
}

const NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

/**
 * What the kustomization in `dir`, and those of the directories it names, list but do not exist, as
 * `<kustomization file relative to root>: <field> <path>`. A directory without a kustomization counts too.
 */
export function missingListedFiles(dir: string, root = dir, seen = new Set<string>()): string[] {
  if (seen.has(dir)) return [];
  seen.add(dir);
  const name = NAMES.find((n) => existsSync(join(dir, n)));
  if (name === undefined) return [`${relative(root, dir) || '.'}: no kustomization.yaml`];
  const file = join(dir, name);
  return listedPaths(parse(readFileSync(file, 'utf8')) as Manifest).flatMap(({ field, path }) => {
    const target = join(dir, path);
    if (!existsSync(target)) return [`${relative(root, file)}: ${field} ${path}`];
    return statSync(target).isDirectory() ? missingListedFiles(target, root, seen) : [];
  });
}
