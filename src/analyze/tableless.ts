// Which containers of a pod are our companion running without a probe table, and what any caller can have them
// probe there (docs/security.md#without-a-probe-table): osm-edge's contract, so listed, never a failure. Pure, a
// function of the pod as the API server holds it (test/analyze/tableless.test.ts).

import { isOsmHealthcheckContainer } from '../rewrite/mesh/recognise.js';
import type { Container } from '../rewrite/types.js';
import { PROBES_ENV } from '../scheme.js';
import { asList, asObject, type Json } from './json.js';
import type { Workload } from './workloads.js';

const ALLOWED_ENV = 'OSM_HEALTHCHECK_ALLOWED_PORTS';

export interface TablelessCompanion {
  container: string;
  /** `--allowed-ports` (or its variable) as the container gives it; null: any port, any path. */
  allowedPorts: string | null;
}

/** `registry/osm-healthcheck` of `registry/osm-healthcheck:0.1.0` or `...@sha256:...`: the tag says the release. */
export function imageRepository(image: string): string {
  const bare = image.split('@')[0] ?? '';
  const colon = bare.lastIndexOf(':');
  return colon > bare.lastIndexOf('/') ? bare.slice(0, colon) : bare;
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

/** A flag's value among serve's args, `--flag V` or `--flag=V`; the last one wins, as parseArgs has it. */
function flagValue(args: readonly string[], flag: string): string | undefined {
  let found: string | undefined;
  args.forEach((arg, i) => {
    if (arg === flag) found = args[i + 1];
    else if (arg.startsWith(`${flag}=`)) found = arg.slice(flag.length + 1);
  });
  return found;
}

const envEntry = (container: Container, name: string) => asList(container.env).find((e) => e.name === name);

/**
 * Our companion serving without a table: osm-edge's or OSM's healthcheck container (`/osm-healthcheck`, which runs
 * `serve --osm-edge-compat`), or `serve` given `--osm-edge-compat`, or given neither `--probes` nor
 * OSM_HEALTHCHECK_PROBES. A container with `envFrom` may get the table from there: not listed.
 */
function servesWithoutTable(container: Container): boolean {
  if (isOsmHealthcheckContainer(container)) return true;
  const command = strings(container.command);
  const args = strings(container.args);
  // The image's entrypoint runs its args, `serve` by default (Dockerfile CMD).
  if (command.length > 0 || (args.length > 0 && args[0] !== 'serve')) return false;
  if (args.includes('--osm-edge-compat')) return true;
  if (flagValue(args, '--probes') !== undefined) return false;
  return envEntry(container, PROBES_ENV) === undefined && container.envFrom === undefined;
}

/** The allowed ports as given: the flag wins over the variable (serve's flagOrEnv). */
function allowedPorts(container: Container): string | null {
  const flag = flagValue(strings(container.args), '--allowed-ports');
  if (flag !== undefined) return flag;
  const env = envEntry(container, ALLOWED_ENV);
  if (env === undefined) return null;
  return typeof env.value === 'string'
    ? env.value
    : `${ALLOWED_ENV} from ${Object.keys(asObject(env.valueFrom))[0] ?? 'elsewhere'}`;
}

/**
 * The pod's containers (init sidecars too) whose image is ours (`ourImages`' repositories: the webhook's --image
 * and this release's default) and that serve without a table.
 */
export function tablelessCompanions(pod: Json, ourImages: readonly string[]): TablelessCompanion[] {
  const repositories = new Set(ourImages.map(imageRepository));
  const spec = asObject(pod.spec);
  return [...asList(spec.initContainers), ...asList(spec.containers)]
    .map((c) => c as Container)
    .filter((c) => typeof c.image === 'string' && repositories.has(imageRepository(c.image)))
    .filter(servesWithoutTable)
    .map((c) => ({ container: String(c.name ?? ''), allowedPorts: allowedPorts(c) }));
}

/** What any caller can have it probe: serve's own words at start (server/header-probes.ts). */
export function reachOf(allowedPorts: string | null): string {
  return allowedPorts === null ? 'any port, any path' : `ports ${allowedPorts} (--allowed-ports), any path`;
}

/** One workload's pods whose companion of that name serves without a table, with the same allowed ports. */
export interface TablelessGroup extends Workload, TablelessCompanion {
  pods: string[];
}

/** Adds each of a pod's tableless companions to the groups, keyed by workload, container and allowed ports. */
export function groupTableless(
  groups: Map<string, TablelessGroup>,
  workload: Workload,
  podName: string,
  found: readonly TablelessCompanion[],
): void {
  for (const companion of found) {
    const key = JSON.stringify([
      workload.namespace,
      workload.kind,
      workload.name,
      companion.container,
      companion.allowedPorts,
    ]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { ...workload, ...companion, pods: [podName] });
    else group.pods.push(podName);
  }
}

/** By namespace, kind, name and container, each with its pods sorted. */
export function sortedTableless(groups: ReadonlyMap<string, TablelessGroup>): TablelessGroup[] {
  const sorted = [...groups.values()].sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) ||
      a.kind.localeCompare(b.kind) ||
      a.name.localeCompare(b.name) ||
      a.container.localeCompare(b.container),
  );
  for (const group of sorted) group.pods.sort();
  return sorted;
}
