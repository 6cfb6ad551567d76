// Every container of a pod spec with its place (list and index), after checking the lists and the names as
// Kubernetes does: what the rewrite's steps walk, and what its errors point at.

import { describeValue } from '../errors.js';
import { type FieldPath, ManifestError } from './manifest-error.js';
import type { Located } from './our-containers.js';
import type { Container, PodSpec } from './types.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Every container with its place, after checking the lists and names (Kubernetes' own rules). */
export function locate(spec: PodSpec, resource: string): Located[] {
  const located: Located[] = [];
  const seen = new Map<string, FieldPath>();
  for (const list of ['initContainers', 'containers'] as const) {
    const items: unknown = spec[list];
    if (items === undefined && list === 'initContainers') continue;
    if (!Array.isArray(items)) {
      throw new ManifestError(resource, [list], `must be a list of containers, got ${describeValue(items)}`);
    }
    items.forEach((item: unknown, index) => {
      const at = [list, index];
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        throw new ManifestError(resource, at, `must be a container object, got ${describeValue(item)}`);
      }
      const { name } = item as Container;
      if (name === undefined || name === '') throw new ManifestError(resource, at, 'container has no name');
      if (typeof name !== 'string' || name.length > 63 || !DNS1123_LABEL.test(name)) {
        throw new ManifestError(
          resource,
          [...at, 'name'],
          `must be a DNS-1123 label (lower-case letters, digits and "-", at most 63), got ${describeValue(name)}`,
        );
      }
      const first = seen.get(name);
      if (first !== undefined) {
        throw new ManifestError(
          resource,
          [...at, 'name'],
          `duplicate container name "${name}" (also ${formatAt(first)})`,
        );
      }
      seen.set(name, at);
      located.push({ list, index, container: item as Located['container'] });
    });
  }
  return located;
}

function formatAt(path: FieldPath): string {
  return `${path[0]}[${path[1]}]`;
}
