// Our two containers (the companion and its init container), told apart from a user's or a mesh's container
// of the same name by what inject writes (companion.ts).

import { COMPANION_NAME, INIT_NAME } from './companion.js';
import type { Container } from './types.js';

export type ListName = 'initContainers' | 'containers';

/** A container of the pod spec with its place. */
export interface Located {
  list: ListName;
  index: number;
  container: Container & { name: string };
}

/** The companion and its init container: inject owns them and rebuilds them on every run. */
export function isInjectedContainer(name: string): boolean {
  return name === COMPANION_NAME || name === INIT_NAME;
}

/**
 * A container inject made: the companion runs `serve`, the init container `init`, both with the image's own
 * entrypoint. osm-edge's and OSM's `osm-healthcheck` runs `command: [/osm-healthcheck]`; a user's is anything.
 */
export function isInjectMade(container: Container): boolean {
  if (container.command !== undefined) return false;
  const first = Array.isArray(container.args) ? container.args[0] : undefined;
  return (
    (container.name === COMPANION_NAME && first === 'serve') ||
    (container.name === INIT_NAME && first === 'init')
  );
}
