// One probe in, one decision out (docs/architecture.md#the-rewrite): point it at the companion, leave it alone, or recognise an
// earlier rewrite. Pure; the caller owns the pod spec and the probe table.

import { describeValue, TableError } from '../errors.js';
import type { HeaderParse } from '../original-headers.js';
import { isCompanionPort, kindProbeGet, type ProbeKind, tcpProbeGet } from '../scheme.js';
import type { ProbeEntry, ProbeEntryDocument } from '../table/types.js';
import { type FieldPath, ManifestError } from './manifest-error.js';
import { originalTarget } from './original-target.js';
import { canonicalEntry, entryDocument } from './table.js';
import type { Container, HTTPGetAction, Probe } from './types.js';

/** Where a probe sits: enough to name it in a warning or an error. */
export interface ProbeSite {
  /** e.g. `Deployment/web` */
  resource: string;
  /** From the pod spec to the container, e.g. `['containers', 0]`. */
  containerPath: FieldPath;
  container: Container & { name: string };
  kind: ProbeKind;
  /** This probe's entry in the table an earlier inject wrote, if any. */
  previous?: ProbeEntry | undefined;
  /** The pod has a companion inject made: a probe on 15901-15904 is then ours (else the app's own, refused). */
  ours?: boolean;
}

export type ProbeDecision =
  /** Rewritten: kubelet now asks the companion, which runs `entry`. */
  | { action: 'rewrite'; probe: Probe; entry: ProbeEntryDocument }
  /**
   * Already points at the companion (an earlier inject, or osm-edge's injector): left exactly as it is. `entry`
   * is the target its Original-* headers name, else the earlier table's entry, with the probe's timeoutSeconds.
   */
  | { action: 'companion'; entry?: ProbeEntryDocument }
  /** Nothing for the companion to do (exec, no handler) or it must not take over (warning says why). */
  | { action: 'keep'; warning?: string };

const HANDLERS = ['httpGet', 'tcpSocket', 'grpc', 'exec'] as const;

export function probeField(kind: ProbeKind): 'livenessProbe' | 'readinessProbe' | 'startupProbe' {
  return `${kind}Probe`;
}

export function decideProbe(value: unknown, site: ProbeSite): ProbeDecision {
  const probe = object(value, site, probeAt(site)) as Probe;
  const present = HANDLERS.filter((name) => probe[name] !== undefined);
  if (present.length > 1)
    fail(site, probeAt(site), `must have exactly one handler, got ${present.join(' and ')}`);
  const handler = present[0];
  switch (handler) {
    case undefined:
    case 'exec':
      // exec runs inside the container: no connection for the proxy to intercept.
      return { action: 'keep' };
    case 'httpGet':
    case 'tcpSocket': {
      const action = object(probe[handler], site, probeAt(site, handler));
      const host = hostOf(action, site, handler);
      if (host !== undefined) {
        return {
          action: 'keep',
          warning: `${describeSite(site)}: ${handler}.host is ${JSON.stringify(host)}, so kubelet dials that host rather than the pod; the probe is left unchanged`,
        };
      }
      const port = resolvePort(action.port, site, probeAt(site, handler, 'port'), true);
      if (typeof port === 'string') {
        return {
          action: 'keep',
          warning: `${describeSite(site)}: port ${JSON.stringify(port)} is none of the container's port names; the probe is left unchanged`,
        };
      }
      if (isCompanionPort(port)) {
        notTheApps(site, probeAt(site, handler, 'port'), port);
        const target = handler === 'httpGet' ? originalTarget(action) : { found: 'none' as const };
        if (target.found === 'wrapped') return wrapped(site);
        return target.found === 'headers' ? fromHeaders(probe, target.parse, site) : carryOver(probe, site);
      }
      return handler === 'httpGet'
        ? rewriteHttpGet(probe, action, port, site)
        : rewriteTcpSocket(probe, port, site);
    }
    case 'grpc': {
      const action = object(probe.grpc, site, probeAt(site, 'grpc'));
      // GRPCAction.port is an int32: Kubernetes has no named gRPC ports.
      const port = resolvePort(action.port, site, probeAt(site, 'grpc', 'port'), false) as number;
      if (isCompanionPort(port)) {
        notTheApps(site, probeAt(site, 'grpc', 'port'), port);
        return carryOver(probe, site);
      }
      const entry = entryFor(site, {
        grpc: { port, service: action.service },
        timeoutSeconds: probe.timeoutSeconds,
      });
      return { action: 'rewrite', probe: withHandler(probe, 'grpc', kindTarget(site)), entry };
    }
    default: {
      const unreachable: never = handler;
      throw new Error(`unhandled probe handler ${String(unreachable)}`);
    }
  }
}

/**
 * 15901-15904 are the companion's: a probe there in a pod without our companion is the app's own (a mesh's
 * rewrite is recognised before, rewrite/mesh/recognise.ts), and the companion would take its port.
 */
function notTheApps(site: ProbeSite, at: FieldPath, port: number): void {
  if (site.ours !== false) return;
  fail(
    site,
    at,
    `${port} is one of the companion's ports (15901-15904) and this pod has no companion of ours, so the companion would take the port this probe checks: move the app to another port`,
  );
}

/**
 * A probe already on 15901-15904 was rewritten before, by us or by osm-edge (docs/architecture.md#the-rewrite; Istio's
 * app_probe.go likewise skips probes already on its status port): it stays as it is, and its earlier table
 * entry, if any, is carried over.
 */
function carryOver(probe: Probe, site: ProbeSite): ProbeDecision {
  if (site.previous === undefined) return { action: 'companion' };
  const previous = entryDocument(site.previous);
  return {
    action: 'companion',
    entry: entryFor(site, { ...previous, timeoutSeconds: probe.timeoutSeconds }),
  };
}

/**
 * `/osm-healthcheck` with Original-* headers: osm-edge's injector rewrote this probe (or an earlier inject
 * rewrote a tcpSocket probe). It stays as it is, and the target its headers name goes into the table: with a
 * table, serve runs a header-driven request only when it names one of the table's probes (server/header-probes.ts).
 */
function fromHeaders(probe: Probe, parsed: HeaderParse, site: ProbeSite): ProbeDecision {
  if (!parsed.ok) {
    return {
      action: 'keep',
      warning: `${describeSite(site)}: ${parsed.reason}, so the companion would refuse it (400); the probe is left unchanged`,
    };
  }
  const { target } = parsed;
  if (target.type === 'self') return wrapped(site);
  const handler =
    target.type === 'tcp'
      ? { tcpSocket: { port: target.port } }
      : { httpGet: { path: target.path, port: target.port, scheme: 'HTTP' } };
  return { action: 'companion', entry: entryFor(site, { ...handler, timeoutSeconds: probe.timeoutSeconds }) };
}

/**
 * A probe osm-edge's injector wrapped after ours: its headers point the companion at itself. rewritePodSpec sees
 * such a pod as osm-edge's before any probe (mesh/recognise.ts) and makes it osm-edge's alone (mesh/osm-form.ts).
 */
function wrapped(site: ProbeSite): ProbeDecision {
  return {
    action: 'keep',
    warning: `${describeSite(site)}: its Original-* headers point at the companion itself (osm-edge wrapped it); the probe is left unchanged`,
  };
}

function rewriteHttpGet(probe: Probe, action: HTTPGetAction, port: number, site: ProbeSite): ProbeDecision {
  // Custom headers (Host among them) move into the table: the companion sends them, as kubelet would have.
  const { path, scheme, httpHeaders } = action;
  const entry = entryFor(site, {
    httpGet: { path, port, scheme, httpHeaders },
    timeoutSeconds: probe.timeoutSeconds,
  });
  return { action: 'rewrite', probe: withHandler(probe, 'httpGet', kindTarget(site)), entry };
}

function rewriteTcpSocket(probe: Probe, port: number, site: ProbeSite): ProbeDecision {
  const entry = entryFor(site, { tcpSocket: { port }, timeoutSeconds: probe.timeoutSeconds });
  return { action: 'rewrite', probe: withHandler(probe, 'tcpSocket', tcpTarget(port)), entry };
}

/** osm-edge's convention for tcpSocket probes: one healthcheck port, the app port travels in a header. */
function tcpTarget(port: number): HTTPGetAction {
  const get = tcpProbeGet(port);
  return { path: get.path, port: get.port, scheme: 'HTTP', httpHeaders: [...get.headers] };
}

/** `/osm-<kind>-probe/<container>` on the kind's own port. */
function kindTarget(site: ProbeSite): HTTPGetAction {
  const get = kindProbeGet(site.kind, site.container.name);
  return { path: get.path, port: get.port, scheme: 'HTTP' };
}

/** The probe with its handler swapped for `httpGet` in the same place; every other field is kept. */
function withHandler(probe: Probe, from: 'httpGet' | 'tcpSocket' | 'grpc', httpGet: HTTPGetAction): Probe {
  return Object.fromEntries(
    Object.entries(probe).map(([key, value]) => (key === from ? ['httpGet', httpGet] : [key, value])),
  ) as Probe;
}

/** serve's validator decides what a valid entry is; its complaint is turned into one about the manifest. */
function entryFor(site: ProbeSite, raw: Record<string, unknown>): ProbeEntryDocument {
  try {
    return canonicalEntry(site.kind, site.container.name, raw);
  } catch (err) {
    if (!(err instanceof TableError)) throw err;
    const prefix = `${site.kind}.${site.container.name}`;
    const rest = err.path.startsWith(`${prefix}.`) ? err.path.slice(prefix.length + 1) : '';
    const problem = err.message.slice(err.path === '' ? 0 : err.path.length + 2);
    fail(site, probeAt(site, ...splitPath(rest)), problem, err);
  }
}

/** `httpGet.httpHeaders[0].name` -> `['httpGet', 'httpHeaders', 0, 'name']`. */
function splitPath(path: string): FieldPath {
  if (path === '') return [];
  return path.split('.').flatMap((part) => {
    const [key = '', ...indexes] = part.split('[');
    return [key, ...indexes.map((index) => Number.parseInt(index, 10))];
  });
}

function hostOf(action: Record<string, unknown>, site: ProbeSite, handler: string): string | undefined {
  const { host } = action;
  if (host === undefined || host === '') return undefined;
  if (typeof host !== 'string')
    fail(site, probeAt(site, handler, 'host'), `must be a string, got ${describeValue(host)}`);
  return host;
}

/**
 * A probe port as kubelet resolves it (k8s.io/kubernetes pkg/probe/util.go, ResolveContainerPort): a number
 * is the port; a string names one of the container's ports, and failing that is tried as a number ("last
 * ditch effort - maybe it was an int stored as string?"). Returns the name when it does not resolve.
 */
function resolvePort(value: unknown, site: ProbeSite, at: FieldPath, allowName: boolean): number | string {
  if (typeof value === 'string' && allowName && value !== '') {
    const { ports } = site.container;
    if (ports !== undefined && !Array.isArray(ports)) {
      fail(site, [...site.containerPath, 'ports'], `must be a list, got ${describeValue(ports)}`);
    }
    const index = (ports ?? []).findIndex((port) => port?.name === value);
    if (index >= 0) {
      const containerPort = [...site.containerPath, 'ports', index, 'containerPort'];
      return checkedPort(ports?.[index]?.containerPort, site, containerPort);
    }
    return /^\d+$/.test(value) ? checkedPort(Number(value), site, at) : value;
  }
  if (typeof value === 'number') return checkedPort(value, site, at);
  return fail(site, at, `must be a port number${allowName ? ' or name' : ''}, got ${describeValue(value)}`);
}

function checkedPort(value: unknown, site: ProbeSite, at: FieldPath): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535) return value;
  return fail(site, at, `must be an integer 1-65535, got ${describeValue(value)}`);
}

function object(value: unknown, site: ProbeSite, at: FieldPath): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return value as Record<string, unknown>;
  return fail(site, at, `must be an object, got ${describeValue(value)}`);
}

/** `container "app" livenessProbe` in `Deployment/web`. */
function describeSite(site: ProbeSite): string {
  return `${site.resource}: container "${site.container.name}" ${probeField(site.kind)}`;
}

/** A field of this probe, from the pod spec: `probeAt(site, 'httpGet', 'port')`. */
function probeAt(site: ProbeSite, ...at: FieldPath): FieldPath {
  return [...site.containerPath, probeField(site.kind), ...at];
}

/** Throws a ManifestError at `path`, a field path from the pod spec. */
function fail(site: ProbeSite, path: FieldPath, problem: string, cause?: unknown): never {
  throw new ManifestError(site.resource, path, problem, cause === undefined ? undefined : { cause });
}
