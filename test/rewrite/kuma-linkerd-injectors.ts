// What Kuma's and Linkerd's injectors do to a pod, written again for tests. Kuma (kumahq/kuma
// pkg/plugins/runtime/k8s/webhooks/injector, overrideHTTPProbes and probes.KumaProbe.ToVirtual): every httpGet
// liveness and readiness probe of spec.containers goes to its virtual probe port as `/<port><path>`; kuma-init and
// kuma-sidecar are added, with `kuma.io/sidecar-injected`. Linkerd (linkerd/linkerd2 pkg/inject, with proxy-await,
// its default): linkerd-proxy first among the containers, linkerd-init last among the init containers with
// `--inbound-ports-to-ignore` from config.linkerd.io/skip-inbound-ports; probes left as they are.

import type { PodSpec } from '../../src/rewrite/types.js';

export function kumaInject(
  spec: PodSpec,
  port = 9000,
): { spec: PodSpec; annotations: Record<string, string> } {
  const next = structuredClone(spec);
  for (const container of next.containers ?? []) {
    for (const field of ['livenessProbe', 'readinessProbe'] as const) {
      const get = container[field]?.httpGet;
      if (get === undefined) continue;
      container[field] = {
        ...container[field],
        httpGet: { ...get, port, path: `/${get.port}${get.path ?? '/'}` },
      };
    }
  }
  next.initContainers = [
    ...(next.initContainers ?? []),
    { name: 'kuma-init', args: ['--config=/tmp/config.yaml'] },
  ];
  next.containers = [
    ...(next.containers ?? []),
    { name: 'kuma-sidecar', args: ['run'], livenessProbe: { httpGet: { path: '/ready', port: 9901 } } },
  ];
  const annotations = {
    'kuma.io/sidecar-injected': 'true',
    'kuma.io/virtual-probes': 'enabled',
    'kuma.io/virtual-probes-port': String(port),
  };
  return { spec: next, annotations };
}

export function linkerdInject(spec: PodSpec, skipInbound = ''): PodSpec {
  const next = structuredClone(spec);
  const ignored = ['4190', '4191', ...(skipInbound === '' ? [] : [skipInbound])].join(',');
  next.initContainers = [
    ...(next.initContainers ?? []),
    { name: 'linkerd-init', args: ['--incoming-proxy-port', '4143', '--inbound-ports-to-ignore', ignored] },
  ];
  next.containers = [
    {
      name: 'linkerd-proxy',
      lifecycle: { postStart: { exec: { command: ['/usr/lib/linkerd/linkerd-await', '--timeout=2m'] } } },
      livenessProbe: { httpGet: { path: '/live', port: 4191 } },
      readinessProbe: { httpGet: { path: '/ready', port: 4191 } },
    },
    ...(next.containers ?? []),
  ];
  return next;
}
