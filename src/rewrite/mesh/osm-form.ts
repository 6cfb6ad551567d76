// A pod we injected that osm-edge or OSM then injected too (their webhook, `osm-webhook-…`, is called after ours,
// `osm-healthcheck`): their sidecar listens on 15901-15903, so our companion cannot stay. On reinvocation the pod
// becomes what their injector alone would have made of the app's original probes, read from our probe table:
// our containers go, each probe takes osm-edge's form (flomesh-io/osm-edge pkg/injector/health_probes.go
// rewriteProbe), and a TCP probe gets their healthcheck container on 15904, as their webhook adds it
// (pkg/injector/healthcheck.go), running our image (docs/meshes.md). Pure.

import {
  DEFAULT_PORTS,
  HEALTHCHECK_PATH,
  HTTP_PATH_HEADER,
  HTTP_PORT_HEADER,
  PROBE_KINDS,
  TCP_PORT_HEADER,
} from '../../scheme.js';
import type { ProbeTable } from '../../table/types.js';
import { COMPANION_NAME, INIT_NAME } from '../companion.js';
import { copyPlain } from '../plain-copy.js';
import { entryDocument } from '../table.js';
import type { Container, HTTPGetAction, PodSpec, Probe } from '../types.js';
import { isOsmHealthcheckContainer } from './recognise.js';

/** Their healthcheck container's name and what its spec holds (getHealthcheckContainerSpec). */
export const OSM_HEALTHCHECK_NAME = 'osm-healthcheck';

export function osmHealthcheckContainer(image: string): Container {
  return {
    name: OSM_HEALTHCHECK_NAME,
    image,
    imagePullPolicy: 'IfNotPresent',
    command: ['/osm-healthcheck'],
    args: ['--verbosity', 'info'],
    ports: [{ containerPort: DEFAULT_PORTS.healthcheck }],
  };
}

/** The probe osm-edge writes for an original probe (our table's entry of it); other fields kept. */
function osmProbe(probe: Probe, kind: (typeof PROBE_KINDS)[number], table: ProbeTable, name: string): Probe {
  const entry = table[kind].get(name);
  if (entry === undefined) return probe;
  const doc = entryDocument(entry);
  const { httpGet: _h, tcpSocket: _t, grpc: _g, ...rest } = probe;
  if (doc.grpc !== undefined) return { ...rest, grpc: { ...doc.grpc } }; // osm-edge leaves gRPC probes alone
  let httpGet: HTTPGetAction;
  if (doc.tcpSocket !== undefined) {
    httpGet = {
      path: HEALTHCHECK_PATH,
      port: DEFAULT_PORTS.healthcheck,
      httpHeaders: [{ name: TCP_PORT_HEADER, value: String(doc.tcpSocket.port) }],
    };
  } else {
    const get = doc.httpGet as NonNullable<typeof doc.httpGet>;
    const headers = [...(get.httpHeaders ?? [])];
    const https = get.scheme === 'HTTPS';
    if (https) headers.push({ name: TCP_PORT_HEADER, value: String(get.port) });
    else {
      headers.push({ name: HTTP_PORT_HEADER, value: String(get.port) });
      headers.push({ name: HTTP_PATH_HEADER, value: get.path ?? '/' });
    }
    // It keeps the probe's own scheme field and sets HTTP only where it was HTTPS; HTTP is the default.
    httpGet = {
      path: HEALTHCHECK_PATH,
      port: DEFAULT_PORTS[kind],
      ...(https ? { scheme: 'HTTP' } : {}),
      httpHeaders: headers,
    };
  }
  return { ...rest, httpGet };
}

/** The spec without our containers, its app probes in osm-edge's form; `image` runs their healthcheck container. */
export function asOsmInjected(spec: PodSpec, table: ProbeTable, image: string): PodSpec {
  const ours = (c: Container) => c.name === COMPANION_NAME || c.name === INIT_NAME;
  const next = copyPlain(spec);
  const containers = (next.containers ?? []).filter((c) => !ours(c) || isOsmHealthcheckContainer(c));
  let tcp = false;
  for (const container of containers) {
    if (isOsmHealthcheckContainer(container)) continue;
    for (const kind of PROBE_KINDS) {
      const field = `${kind}Probe` as const;
      const probe = container[field];
      if (probe === undefined) continue;
      const name = String(container.name);
      container[field] = osmProbe(probe, kind, table, name);
      // Their webhook adds the healthcheck container for what it turned into a TCP check: tcpSocket and HTTPS.
      const handler = table[kind].get(name)?.handler;
      tcp ||= handler?.type === 'tcpSocket' || (handler?.type === 'httpGet' && handler.scheme === 'HTTPS');
    }
  }
  if (tcp && !containers.some(isOsmHealthcheckContainer)) containers.push(osmHealthcheckContainer(image));
  next.containers = containers;
  if (next.initContainers !== undefined) {
    next.initContainers = next.initContainers.filter((c) => !ours(c) || isOsmHealthcheckContainer(c));
    if (next.initContainers.length === 0) delete next.initContainers;
  }
  return next;
}
