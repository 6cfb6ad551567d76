// What Istio's sidecar injector does to a pod, written again for tests from istio/istio pkg/kube/inject:
// app_probe.go patchRewriteProbe moves every probe of every container but istio-proxy (initContainers included)
// whose port traffic.sidecar.istio.io/excludeInboundPorts does not exclude to pilot-agent's
// `/app-health/<container>/livez|readyz|startupz` on 15020, recording the original in istio-proxy's env
// ISTIO_KUBE_APP_PROBERS (DumpAppProbers); inject.go gives istio-init `-d` with 15090,15021,15020 and that
// annotation's ports; the pod gets `sidecar.istio.io/status`. Lets tests run the two injectors in either order.

import type { Container, PodSpec, Probe } from '../../src/rewrite/types.js';
import { PROBE_KINDS, type ProbeKind } from '../../src/scheme.js';

const SUFFIX: Record<ProbeKind, string> = { liveness: 'livez', readiness: 'readyz', startup: 'startupz' };
const EXCLUDE = 'traffic.sidecar.istio.io/excludeInboundPorts';

function portOf(probe: Probe): number | undefined {
  const port = probe.httpGet?.port ?? probe.tcpSocket?.port ?? probe.grpc?.port;
  return typeof port === 'number' ? port : undefined;
}

export function istioInject(
  spec: PodSpec,
  annotations: Record<string, string> = {},
): { spec: PodSpec; annotations: Record<string, string> } {
  const next = structuredClone(spec);
  const excluded = (annotations[EXCLUDE] ?? '')
    .split(',')
    .map((p) => Number(p.trim()))
    .filter((p) => p > 0);
  const recorded: Record<string, unknown> = {};
  for (const container of [...(next.initContainers ?? []), ...(next.containers ?? [])] as Container[]) {
    for (const kind of PROBE_KINDS) {
      const probe = container[`${kind}Probe`];
      const port = probe === undefined ? undefined : portOf(probe);
      if (probe === undefined || port === undefined || excluded.includes(port)) continue;
      if (probe.exec !== undefined) continue;
      const path = `/app-health/${container.name}/${SUFFIX[kind]}`;
      const { httpGet, tcpSocket, grpc, timeoutSeconds, ...rest } = probe;
      recorded[path] = {
        ...(httpGet ? { httpGet } : tcpSocket ? { tcpSocket } : { grpc }),
        ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
      };
      container[`${kind}Probe`] = {
        ...rest,
        ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
        httpGet: { path, port: 15020, ...(httpGet?.scheme === undefined ? {} : { scheme: 'HTTP' }) },
      };
    }
  }
  next.initContainers = [
    ...(next.initContainers ?? []),
    {
      name: 'istio-init',
      args: [
        'istio-iptables',
        '-p',
        '15001',
        '-z',
        '15006',
        '-d',
        ['15090', '15021', '15020', ...excluded].join(','),
      ],
    },
  ];
  next.containers = [
    ...(next.containers ?? []),
    {
      name: 'istio-proxy',
      image: 'docker.io/istio/proxyv2:1.28.0',
      args: ['proxy', 'sidecar'],
      env: [{ name: 'ISTIO_KUBE_APP_PROBERS', value: JSON.stringify(recorded) }],
      ports: [{ containerPort: 15090, name: 'http-envoy-prom' }],
      readinessProbe: { httpGet: { path: '/healthz/ready', port: 15021 } },
    },
  ];
  return {
    spec: next,
    annotations: {
      ...annotations,
      'sidecar.istio.io/status': '{"initContainers":["istio-init"],"containers":["istio-proxy"]}',
    },
  };
}
