// What osm-edge's sidecar injector does to probes (flomesh-io/osm-edge pkg/injector/health_probes.go), written
// again for tests: every probe of spec.containers, ours included, is wrapped into GET /osm-healthcheck with the
// original port (and path) in Original-* headers. Lets tests run the two injectors in either order.

import type { Container, HTTPGetAction, PodSpec, Probe } from '../../src/rewrite/types.js';
import { DEFAULT_PORTS, PROBE_KINDS } from '../../src/scheme.js';

function portOf(value: unknown, container: Container): number {
  if (typeof value === 'number') return value;
  return container.ports?.find((port) => port.name === value)?.containerPort ?? Number(value);
}

function wrap(probe: Probe, kindPort: number, container: Container): Probe {
  const { httpGet, tcpSocket, ...rest } = probe;
  if (httpGet !== undefined) {
    const port = portOf(httpGet.port, container);
    const headers = [...(httpGet.httpHeaders ?? [])];
    // An HTTPS probe becomes a TCP check; an HTTP one keeps its path in a header.
    if (httpGet.scheme === 'HTTPS') headers.push({ name: 'Original-Tcp-Port', value: String(port) });
    else {
      headers.push({ name: 'Original-Http-Port', value: String(port) });
      headers.push({ name: 'Original-Http-Path', value: httpGet.path ?? '' });
    }
    const wrapped: HTTPGetAction = {
      ...httpGet,
      path: '/osm-healthcheck',
      port: kindPort,
      httpHeaders: headers,
    };
    if (httpGet.scheme === 'HTTPS') wrapped.scheme = 'HTTP';
    return { ...rest, httpGet: wrapped };
  }
  if (tcpSocket !== undefined) {
    const port = portOf(tcpSocket.port, container);
    return {
      ...rest,
      httpGet: {
        port: DEFAULT_PORTS.healthcheck,
        path: '/osm-healthcheck',
        httpHeaders: [{ name: 'Original-Tcp-Port', value: String(port) }],
      },
    };
  }
  return probe;
}

/** The pod spec after osm-edge's injector; the input is not changed. */
export function osmEdgeInject(spec: PodSpec): PodSpec {
  const next = structuredClone(spec);
  for (const container of next.containers ?? []) {
    for (const kind of PROBE_KINDS) {
      const probe = container[`${kind}Probe`];
      if (probe !== undefined) container[`${kind}Probe`] = wrap(probe, DEFAULT_PORTS[kind], container);
    }
  }
  // Its proxy, appended after whatever is there.
  next.containers = [...(next.containers ?? []), { name: 'sidecar', image: 'flomesh/pipy:1.0' }];
  return next;
}
