// The other webhook order, the mesh's injector seeing a pod we already injected (inject's output applied into a
// meshed namespace): on models of each injector written from its source (test/rewrite/istio-injector.ts,
// osm-edge-injector.ts). Each ends with one prober per probe and our next run a no-op.

import { describe, expect, it } from 'vitest';
import { COMPANION_NAME, DEFAULT_IMAGE, INIT_NAME } from '../../src/rewrite/companion.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import type { PodSpec, RewriteOptions } from '../../src/rewrite/types.js';
import { istioInject } from './istio-injector.js';

const OPTIONS: RewriteOptions = { image: DEFAULT_IMAGE, placement: 'first' };
const spec: PodSpec = {
  containers: [
    {
      name: 'web',
      ports: [{ containerPort: 8080 }],
      livenessProbe: { httpGet: { path: '/live', port: 8080 }, periodSeconds: 5 },
      readinessProbe: { tcpSocket: { port: 8080 } },
    },
  ],
};
const rewrite = (s: PodSpec, a?: Record<string, string>, o: Partial<RewriteOptions> = {}) =>
  rewritePodSpec(s, a, { ...OPTIONS, ...o }, 'Pod/web');
const names = (s: PodSpec) => [...(s.initContainers ?? []), ...(s.containers ?? [])].map((c) => c.name);

describe("Istio's injector after ours", () => {
  it('moves our probes to pilot-agent (two probers); our next run puts them back and then stays', () => {
    const once = rewrite(spec);
    const istio = istioInject(once.spec, { ...once.annotations });
    expect(istio.spec.containers?.find((c) => c.name === 'web')?.livenessProbe?.httpGet?.port).toBe(15020);
    const again = rewrite(istio.spec, istio.annotations);
    expect(again.warnings).toContain(
      "Pod/web: Istio injected this pod after us and moved the companion's probes to pilot-agent; they go back to the companion, from ISTIO_KUBE_APP_PROBERS (docs/meshes.md)",
    );
    const web = again.spec.containers?.find((c) => c.name === 'web');
    const before = once.spec.containers?.find((c) => c.name === 'web');
    expect(web?.livenessProbe).toEqual(before?.livenessProbe);
    expect(web?.readinessProbe).toEqual(before?.readinessProbe);
    expect(again.table).toEqual(once.table);
    // Istio's own containers as Istio wrote them; our init container kept (istio-init's -d lacks our ports).
    expect(again.spec.containers?.find((c) => c.name === 'istio-proxy')).toEqual(
      istio.spec.containers?.find((c) => c.name === 'istio-proxy'),
    );
    expect(names(again.spec)).toEqual([INIT_NAME, 'istio-init', COMPANION_NAME, 'web', 'istio-proxy']);
    expect(rewrite(again.spec, istio.annotations).changed).toBe(false);
  });

  it('with --mesh-exclusion istio first, Istio leaves our probes alone (shouldPatchProbe) and our next run is a no-op', () => {
    const once = rewrite(spec, undefined, { meshExclusion: 'istio' });
    expect(once.annotations['traffic.sidecar.istio.io/excludeInboundPorts']).toBe('15901,15902,15903,15904');
    const istio = istioInject(once.spec, { ...once.annotations });
    expect(istio.spec.containers?.find((c) => c.name === 'web')).toEqual(
      once.spec.containers?.find((c) => c.name === 'web'),
    );
    const again = rewrite(istio.spec, istio.annotations, { meshExclusion: 'istio' });
    expect(again.changed).toBe(false);
    expect(names(again.spec)).not.toContain(INIT_NAME);
  });
});
