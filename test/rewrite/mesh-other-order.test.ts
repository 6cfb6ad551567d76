// The other webhook order, the mesh's injector seeing a pod we already injected (inject's output applied into a
// meshed namespace): on models of each injector written from its source (test/rewrite/istio-injector.ts,
// kuma-linkerd-injectors.ts; osm-edge's in pod.test.ts and mutate.test.ts). Each ends with one prober per probe
// and our next run a no-op.

import { describe, expect, it } from 'vitest';
import { COMPANION_NAME, DEFAULT_IMAGE, INIT_NAME } from '../../src/rewrite/companion.js';
import { rewritePodSpec } from '../../src/rewrite/pod.js';
import { RECORD_ANNOTATION } from '../../src/rewrite/record.js';
import type { PodSpec, RewriteOptions } from '../../src/rewrite/types.js';
import { istioInject } from './istio-injector.js';
import { kumaInject, linkerdInject } from './kuma-linkerd-injectors.js';

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

describe("Kuma's injector after ours", () => {
  it('moves our httpGet probes to its virtual probe port; our next run puts them back and then stays', () => {
    const once = rewrite(spec);
    const kuma = kumaInject(once.spec);
    expect(kuma.spec.containers?.find((c) => c.name === 'web')?.livenessProbe?.httpGet).toMatchObject({
      port: 9000,
      path: '/15901/osm-liveness-probe/web',
    });
    const annotations = { ...once.annotations, ...kuma.annotations };
    const again = rewrite(kuma.spec, annotations);
    expect(again.warnings).toContain(
      "Pod/web: Kuma injected this pod after us and moved the companion's probes to its probe proxy; they go back to the companion (docs/meshes.md)",
    );
    for (const name of ['web', COMPANION_NAME]) {
      expect(again.spec.containers?.find((c) => c.name === name)).toEqual(
        once.spec.containers?.find((c) => c.name === name),
      );
    }
    expect(again.spec.containers?.find((c) => c.name === 'kuma-sidecar')).toEqual(
      kuma.spec.containers?.find((c) => c.name === 'kuma-sidecar'),
    );
    expect(rewrite(again.spec, annotations).changed).toBe(false);
  });
});

describe("Linkerd's injector after ours", () => {
  it('leaves the probes, puts linkerd-proxy first: the result works as it is, and our next run is a no-op', () => {
    const once = rewrite(spec);
    const linkerd = linkerdInject(once.spec);
    const again = rewrite(linkerd, once.annotations);
    expect(again.changed).toBe(false);
    // The companion still starts before the container it answers for; our init container excludes our ports
    // (linkerd-init's --inbound-ports-to-ignore does not list them).
    expect(names(again.spec)).toEqual([INIT_NAME, 'linkerd-init', 'linkerd-proxy', COMPANION_NAME, 'web']);
  });

  it('with linkerd-init told to skip 15901-15904, the init container is no longer needed, and goes', () => {
    const once = rewrite(spec);
    const again = rewrite(linkerdInject(once.spec, '15901-15904'), once.annotations);
    expect(names(again.spec)).toEqual(['linkerd-init', 'linkerd-proxy', COMPANION_NAME, 'web']);
    // The record says so: probes now pass by linkerd-init's arguments, not by our init container.
    expect(again.annotations[RECORD_ANNOTATION]).toContain('"bypass":"mesh:linkerd"');
    expect(rewrite(again.spec, { ...once.annotations, ...again.annotations }).changed).toBe(false);
  });
});
