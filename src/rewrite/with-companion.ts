// The pod spec with our two containers in their places: the init container first, the companion right after it
// as a native sidecar or first among the containers, earlier copies replaced or updated in place. Pure.

import { isInjectedContainer } from './our-containers.js';
import { ownedContainer } from './owned-container.js';
import type { Container, PodSpec } from './types.js';

/**
 * Our init container first (a run-to-completion step: the iptables bypass exists before anything listens),
 * unless the mesh's own annotation does its job (interception.ts).
 * Kubelet starts the rest in order and waits, before the next, for a native sidecar's startupProbe and for a
 * container's postStart hook; so the companion goes either right after our init container, as a native
 * sidecar, or first among the containers, with `wait` as its postStart hook. Either way it listens before every
 * sidecar and app container whose probes it answers starts. Earlier copies of both are replaced wherever they
 * were (earlier releases put the companion last), so a new image or placement takes effect. A copy already in
 * the right list is updated in place (owned-container.ts), keeping what the API server added to it.
 */
export function withCompanion(
  spec: PodSpec,
  companion: Container,
  native: boolean,
  init: Container | undefined,
  answered: ReadonlySet<string>,
): PodSpec {
  const notOurs = (list: Container[] | undefined) =>
    (list ?? []).filter((container) => !isInjectedContainer(container.name ?? ''));
  const settled = (list: Container[] | undefined, wanted: Container) =>
    ownedContainer(
      list?.find((container) => container.name === wanted.name),
      wanted,
    );
  const initContainers = [
    ...(init === undefined ? [] : [settled(spec.initContainers, init)]),
    ...(native ? [settled(spec.initContainers, companion)] : []),
    ...notOurs(spec.initContainers),
  ];
  const containers = native
    ? notOurs(spec.containers)
    : (keptInPlace(spec.containers, companion, answered, settled) ?? [
        settled(spec.containers, companion),
        ...notOurs(spec.containers),
      ]);
  // Key order is kept; a new `initContainers` goes just before `containers`, where manifests usually have it.
  const hadInit = Object.hasOwn(spec, 'initContainers');
  return Object.fromEntries(
    Object.entries(spec).flatMap(([key, value]): [string, unknown][] => {
      if (key === 'initContainers') return [[key, initContainers]];
      if (key !== 'containers') return [[key, value]];
      return hadInit || initContainers.length === 0
        ? [[key, containers]]
        : [
            ['initContainers', initContainers],
            [key, containers],
          ];
    }),
  );
}

/**
 * The containers with the companion where it already is, when that is before every container it answers for: a
 * mesh's injector that ran after us may have put its proxy first (Linkerd's proxy-await, linkerd2 pkg/inject), and
 * moving ours back in front of it would make every reinvocation a patch. Undefined when it has to move.
 */
function keptInPlace(
  list: Container[] | undefined,
  companion: Container,
  answered: ReadonlySet<string>,
  settled: (list: Container[] | undefined, wanted: Container) => Container,
): Container[] | undefined {
  const containers = list ?? [];
  const at = containers.findIndex((c) => c.name === companion.name);
  if (
    at < 0 ||
    containers.slice(0, at).some((c) => answered.has(String(c.name)) || isInjectedContainer(String(c.name)))
  ) {
    return undefined;
  }
  return containers.map((c, i) => (i === at ? settled(list, companion) : c));
}
