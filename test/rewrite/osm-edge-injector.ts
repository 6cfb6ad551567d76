// What osm-edge's sidecar injector does to a pod (flomesh-io/osm-edge pkg/injector), written again for tests:
// every probe of spec.containers, ours included, is wrapped into GET /osm-healthcheck with the original port (and
// path) in Original-* headers (health_probes.go); osm-init goes last among the init containers (init_container.go),
// its Pipy sidecar, listening on 15901-15903, last among the containers (pipy_container.go), and, where a TCP
// probe was rewritten, its healthcheck container on 15904 (healthcheck.go). Lets tests run the two injectors in
// either order.

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

/** The pod spec after osm-edge's injector, its healthcheck container running `healthcheckImage`; the input is not changed. */
export function osmEdgeInject(
  spec: PodSpec,
  healthcheckImage = 'flomesh/osm-edge-healthcheck:1.3.9',
): PodSpec {
  const next = structuredClone(spec);
  let tcp = false;
  for (const container of next.containers ?? []) {
    for (const kind of PROBE_KINDS) {
      const probe = container[`${kind}Probe`];
      if (probe === undefined) continue;
      tcp ||= probe.tcpSocket !== undefined || probe.httpGet?.scheme === 'HTTPS';
      container[`${kind}Probe`] = wrap(probe, DEFAULT_PORTS[kind], container);
    }
  }
  next.initContainers = [
    ...(next.initContainers ?? []),
    {
      name: 'osm-init',
      image: 'flomesh/osm-edge-sidecar-init:1.3.9',
      securityContext: { capabilities: { add: ['NET_ADMIN'] } },
    },
  ];
  const listeners = [15901, 15902, 15903].map((containerPort) => ({ containerPort }));
  next.containers = [
    ...(next.containers ?? []),
    {
      name: 'sidecar',
      image: 'flomesh/pipy:1.0.0-1',
      ports: [{ name: 'proxy-inbound', containerPort: 15003 }, ...listeners],
    },
    ...(tcp
      ? [
          {
            name: 'osm-healthcheck',
            image: healthcheckImage,
            imagePullPolicy: 'IfNotPresent',
            command: ['/osm-healthcheck'],
            args: ['--verbosity', 'info'],
            ports: [{ containerPort: DEFAULT_PORTS.healthcheck }],
          },
        ]
      : []),
  ];
  return next;
}
