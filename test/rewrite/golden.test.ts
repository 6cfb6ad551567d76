// Golden pairs (as Istio's testdata/inject): every x.yaml / x.json in test/fixtures/inject injects to
// x.injected.yaml byte for byte, injects to itself again, carries a table serve accepts that matches the
// rewritten probes, and starts the companion before every container it answers for, with kubectl's default
// container on an app container. An earlier release's output (test/fixtures/inject/earlier/: the companion
// last, or first without kubectl's default container) injects to today's. A VERSIONED input injects once per
// cluster version to x@<version>.injected.yaml, its warnings in x.warnings.json. UPDATE_GOLDEN=1 npx vitest run
// test/rewrite/golden.test.ts rewrites the expected files.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { injectManifests } from '../../src/manifest/inject.js';
import { parseOriginalHeaders } from '../../src/original-headers.js';
import { COMPANION_NAME, DEFAULT_IMAGE, INIT_NAME, WAIT_COMMAND } from '../../src/rewrite/companion.js';
import { DEFAULT_CONTAINER_ANNOTATION } from '../../src/rewrite/default-container.js';
import type { ClusterKnowledge } from '../../src/rewrite/placement.js';
import type { PodSecurityKnowledge, PodSecurityLevel } from '../../src/rewrite/pod-security.js';
import type { Container, PodSpec, RewriteOptions } from '../../src/rewrite/types.js';
import { podTemplates } from '../../src/rewrite/workload.js';
import {
  DEFAULT_PORTS,
  HEALTHCHECK_PATH,
  HTTP_PORT_HEADER,
  isCompanionPort,
  PROBE_KINDS,
  PROBES_ENV,
  probePath,
  TCP_PORT_HEADER,
} from '../../src/scheme.js';
import { headerRule } from '../../src/server/header-probes.js';
import { parseProbeTable } from '../../src/table/parse.js';
import { podSecurityViolations } from '../helpers/pod-security.js';

const DIR = fileURLToPath(new URL('../fixtures/inject/', import.meta.url));
const EARLIER = join(DIR, 'earlier');

const known = (minor: number, sidecarGate = false): ClusterKnowledge => ({
  state: 'known',
  version: { major: 1, minor },
  sidecarGate,
});

const level = (name: PodSecurityLevel): PodSecurityKnowledge => ({
  state: 'known',
  policy: { level: name, version: 'latest', source: '--pod-security' },
});

const OPTIONS: Record<string, Partial<RewriteOptions>> = {
  'native-sidecar-flag': { placement: 'native-sidecar', image: 'registry.example.com/osm-healthcheck:0.1.0' },
  // Pods that must end get the companion as a native sidecar where the cluster has them.
  job: { cluster: known(29) },
  cronjob: { cluster: known(33) },
  // Pod Security: no init container above privileged; the mesh's annotation or nothing.
  'pod-security-baseline': { podSecurity: level('baseline') },
  'mesh-excluded': { podSecurity: level('restricted') },
  'mesh-exclusion-flag': { podSecurity: level('baseline'), meshExclusion: 'linkerd' },
  'mesh-excluded-job': { podSecurity: level('restricted'), cluster: known(29) },
  // Pod-level resources count from 1.34 (on by default).
  'pod-level-resources': { cluster: known(36) },
  // inject --seal node (rewrite/seal.ts).
  sealed: { seal: 'node' },
};

/**
 * Inputs injected once per cluster version (--placement auto unless named); `unknown` is inject without
 * --kube-version. auto makes the companion of a running pod a native sidecar from 1.33 on.
 */
const VERSIONS: Record<string, Partial<RewriteOptions>> = {
  '1.26': { cluster: known(26) },
  '1.28': { cluster: known(28) },
  '1.28+gate': { cluster: known(28, true) },
  '1.29': { cluster: known(29) },
  '1.29+native-sidecar': { cluster: known(29), placement: 'native-sidecar' },
  '1.32': { cluster: known(32) },
  '1.33': { cluster: known(33) },
  '1.33+first': { cluster: known(33), placement: 'first' },
  unknown: {},
  'unknown+native-sidecar': { placement: 'native-sidecar' },
};
const VERSIONED = ['run-to-completion'];

const WARNINGS: Record<string, string[]> = {
  'host-set': [
    'Pod/edge: container "app" livenessProbe: httpGet.host is "status.example.com", so kubelet dials that host rather than the pod; the probe is left unchanged',
    'Pod/edge: container "app" readinessProbe: tcpSocket.host is "10.0.0.7", so kubelet dials that host rather than the pod; the probe is left unchanged',
  ],
  'unresolvable-named-port': [
    `Pod/typo: container "app" livenessProbe: port "htpp" is none of the container's port names; the probe is left unchanged`,
  ],
  'pod-security-baseline': [
    `Deployment/shop: left untouched: Pod Security "baseline:latest" (--pod-security) refuses our init container's NET_ADMIN, NET_RAW; list 15901-15904 in the mesh's exclusion annotation (inject --mesh-exclusion; docs/pod-security.md)`,
  ],
  'untouched-pods': [
    "Pod/node-agent: left untouched: spec.hostNetwork is true: our init container's iptables rules and the companion's ports 15901-15904 would be the node's, so no mesh touches such pods",
    'Pod/iis: left untouched: spec.os.name is windows: the companion and its init container are Linux containers, so no mesh touches such pods',
    'Pod/app: left untouched: ResourceQuota "adm" (namespace "tight") has requests.cpu 100m left, the pod needs 150m',
  ],
  'native-sidecar': [
    'Pod/with-sidecar: native sidecar "log-shipper" has probes answered by the companion, so the companion runs as a native sidecar too',
  ],
};

const ORIGINAL_PORT_HEADERS = [TCP_PORT_HEADER, HTTP_PORT_HEADER];

const sources = readdirSync(DIR)
  .filter((file) => /\.(yaml|json)$/.test(file) && !/\.(injected|warnings)\./.test(file))
  .sort();

const plain = sources
  .filter((file) => !VERSIONED.includes(file.replace(/\.(yaml|json)$/, '')))
  .map((file) => {
    const base = file.replace(/\.(yaml|json)$/, '');
    return {
      name: file,
      source: join(DIR, file),
      golden: join(DIR, `${base}.injected.yaml`),
      options: { image: DEFAULT_IMAGE, placement: 'auto' as const, ...OPTIONS[base] },
      warnings: WARNINGS[base] ?? [],
      warningsFile: undefined as string | undefined,
      version: undefined as string | undefined,
    };
  });

const versioned = VERSIONED.flatMap((base) => {
  const warningsFile = join(DIR, `${base}.warnings.json`);
  const expected = JSON.parse(read(warningsFile)) as Record<string, string[]>;
  return Object.entries(VERSIONS).map(([version, options]) => ({
    name: `${base}.yaml at ${version}`,
    source: join(DIR, `${base}.yaml`),
    golden: join(DIR, `${base}@${version}.injected.yaml`),
    options: { image: DEFAULT_IMAGE, placement: 'auto' as const, ...options },
    warnings: expected[version] ?? [],
    warningsFile: warningsFile as string | undefined,
    version: version as string | undefined,
  }));
});

const cases = [...plain, ...versioned];
const updated: Record<string, Record<string, string[]>> = {};

function read(path: string): string {
  return readFileSync(path, 'utf8');
}

describe('inject golden files', () => {
  it.each(cases)('$name', ({ source, golden, options, warnings, warningsFile, version }) => {
    const result = injectManifests(read(source), options, 'yaml');
    if (process.env.UPDATE_GOLDEN === '1') {
      writeFileSync(golden, result.output);
      if (warningsFile !== undefined && version !== undefined) {
        updated[warningsFile] = { ...updated[warningsFile], [version]: result.warnings };
        writeFileSync(warningsFile, `${JSON.stringify(updated[warningsFile], null, 2)}\n`);
        return;
      }
    }
    expect(result.output).toBe(read(golden));
    expect(result.warnings).toEqual(warnings);
  });
});

describe('inject is idempotent: inject(inject(x)) == inject(x), with the same warnings', () => {
  it.each(cases)('$name', ({ golden, options, warnings }) => {
    const once = read(golden);
    const again = injectManifests(once, options, 'yaml');
    expect(again.output).toBe(once);
    expect(again.warnings).toEqual(warnings);
  });
});

describe("an earlier release's output injects to today's output", () => {
  const earlier = readdirSync(EARLIER)
    .sort()
    .map((file) => {
      const found = cases.find((c) => c.golden.endsWith(`/${file}`));
      if (found === undefined) throw new Error(`${file} in earlier/ has no golden pair`);
      return { ...found, name: file, old: join(EARLIER, file) };
    });

  it.each(earlier)('$name', ({ old, golden, options }) => {
    expect(injectManifests(read(old), options, 'yaml').output).toBe(read(golden));
  });
});

/** Every pod (template) in a YAML stream, by way of the same kind table inject uses. */
function pods(text: string): { spec: PodSpec; annotations: Record<string, string> | undefined }[] {
  return parseAllDocuments(text).flatMap((doc) => {
    const value: unknown = doc.toJS();
    return podTemplates(value).map(({ specPath, annotations }) => ({
      spec: specPath.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], value) as PodSpec,
      annotations,
    }));
  });
}

function podSpecs(text: string): PodSpec[] {
  return pods(text).map(({ spec }) => spec);
}

/** `kind/container` for every probe that kubelet now sends to the companion with a table entry behind it. */
function rewrittenProbes(spec: PodSpec): string[] {
  const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])].filter(
    (container: Container) => container.name !== 'osm-healthcheck',
  );
  return all.flatMap((container) =>
    PROBE_KINDS.flatMap((kind) => {
      const httpGet = container[`${kind}Probe`]?.httpGet;
      const name = container.name as string;
      if (httpGet?.port === DEFAULT_PORTS[kind] && httpGet.path === probePath(kind, name))
        return [`${kind}/${name}`];
      // Header-driven: our tcpSocket rewrite, or osm-edge's on any companion port.
      const target = httpGet?.httpHeaders?.find((header) => ORIGINAL_PORT_HEADERS.includes(header.name));
      return typeof httpGet?.port === 'number' &&
        isCompanionPort(httpGet.port) &&
        httpGet.path === HEALTHCHECK_PATH &&
        target !== undefined
        ? [`${kind}/${name}`]
        : [];
    }),
  );
}

describe('the companion starts before every container it answers for, in a shape every API server accepts', () => {
  it.each(cases)('$name', ({ golden }) => {
    for (const spec of podSpecs(read(golden))) {
      const init = spec.initContainers ?? [];
      const containers = spec.containers ?? [];
      const ours = init.some((c) => c.name === INIT_NAME);
      const native = init.some((c) => c.name === COMPANION_NAME);
      // No companion, or an earlier release's left in a pod kept untouched (run-to-completion).
      if (!ours && !native && containers[0]?.name !== COMPANION_NAME) continue;
      // Our init container first where there is one (the mesh's annotation may stand in for it).
      if (ours) expect(init[0]?.name).toBe(INIT_NAME);
      const companion = native ? init[ours ? 1 : 0] : containers[0];
      expect(companion?.name).toBe(COMPANION_NAME);
      if (native) {
        // Kubelet starts the next container once this native sidecar's startupProbe passed.
        expect(companion).toMatchObject({ restartPolicy: 'Always', startupProbe: {} });
        expect(companion?.lifecycle).toBeUndefined();
      } else {
        // Kubelet starts the next container once this postStart hook returned.
        expect(companion?.lifecycle).toEqual({ postStart: { exec: { command: [...WAIT_COMMAND] } } });
        // Before Kubernetes 1.28 an init container with restartPolicy or probes is refused.
        const refused = init.filter(
          (c) => c.restartPolicy !== undefined || PROBE_KINDS.some((kind) => c[`${kind}Probe`] !== undefined),
        );
        expect(refused).toEqual([]);
        expect(containers.filter((c) => c.name === COMPANION_NAME)).toHaveLength(1);
      }
    }
  });
});

describe("every emitted table passes serve's validator and matches the rewritten probes", () => {
  it.each(cases)('$name', ({ golden }) => {
    for (const spec of podSpecs(read(golden))) {
      const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
      const companion = all.find((container) => container.name === 'osm-healthcheck');
      const json = companion?.env?.find((env) => env.name === PROBES_ENV)?.value;
      if (json === undefined) {
        // Nothing for the companion to answer here: then no companion was added either.
        expect(all.some((container) => container.name === 'osm-healthcheck-init')).toBe(false);
        continue;
      }
      const table = parseProbeTable(JSON.parse(json));
      const entries = PROBE_KINDS.flatMap((kind) => [...table[kind].keys()].map((name) => `${kind}/${name}`));
      expect(entries.sort()).toEqual(rewrittenProbes(spec).sort());
    }
  });
});

// docs/security.md: serve runs a header-driven request only when it names a table probe, and pipes TLS only with
// --tls-passthrough. Every pod inject writes keeps to both: its header-driven probes name its table's probes, and
// no probe speaks HTTPS to the companion, so no companion inject writes needs (or gets) the pipe.
describe('every pod inject writes needs no more of the companion than its table: header probes named, no TLS', () => {
  it.each(cases)('$name', ({ golden }) => {
    for (const spec of podSpecs(read(golden))) {
      const all = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
      const companion = all.find((container) => container.name === COMPANION_NAME);
      const json = companion?.env?.find((env) => env.name === PROBES_ENV)?.value;
      if (json === undefined) continue;
      expect(companion?.env?.map((env) => env.name)).not.toContain('OSM_HEALTHCHECK_TLS_PASSTHROUGH');
      const rule = headerRule(parseProbeTable(JSON.parse(json)), undefined);
      for (const container of all.filter((c) => c !== companion)) {
        for (const kind of PROBE_KINDS) {
          const httpGet = container[`${kind}Probe`]?.httpGet;
          if (typeof httpGet?.port !== 'number' || !isCompanionPort(httpGet.port)) continue;
          const at = `${container.name} ${kind}`;
          expect(httpGet.scheme ?? 'HTTP', at).toBe('HTTP');
          if (httpGet.path !== HEALTHCHECK_PATH) continue;
          const names = Object.fromEntries(
            (httpGet.httpHeaders ?? []).map((h) => [h.name.toLowerCase(), [h.value]]),
          );
          const parsed = parseOriginalHeaders(names);
          if (!parsed.ok || parsed.target.type === 'self') continue;
          expect(rule.resolve(parsed.target), at).toMatchObject({ ok: true });
        }
      }
    }
  });
});

describe("kubectl's default container is an app container wherever the companion is first, and the pod's own value stays", () => {
  it.each(cases)('$name', ({ source, golden }) => {
    const before = pods(read(source));
    const after = pods(read(golden));
    expect(after).toHaveLength(before.length);
    after.forEach(({ spec, annotations }, index) => {
      const own = before[index]?.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
      const [first, app] = spec.containers ?? [];
      const expected = own ?? (first?.name === COMPANION_NAME ? app?.name : undefined);
      expect(annotations?.[DEFAULT_CONTAINER_ANNOTATION]).toBe(expected);
    });
  });
});

describe('Pod Security: the rewrite never makes an admissible pod refused (test/helpers/pod-security.ts)', () => {
  const companionOf = (spec: PodSpec | undefined) =>
    [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].find((c) => c.name === COMPANION_NAME);
  it.each(cases)('$name: the companion alone passes "restricted"', ({ source, golden }) => {
    const before = podSpecs(read(source));
    for (const [index, spec] of podSpecs(read(golden)).entries()) {
      const companion = companionOf(spec);
      // An earlier release's companion, in a pod left untouched, is not one this rewrite built.
      if (companion === undefined || isDeepStrictEqual(companion, companionOf(before[index]))) continue;
      expect(podSecurityViolations({ containers: [companion] }, 'restricted')).toEqual([]);
    }
  });

  const levelled = cases.filter(({ options }) => options.podSecurity?.state === 'known');
  it.each(levelled)(
    '$name: admissible at its level before, admissible after',
    ({ source, golden, options }) => {
      const policy = options.podSecurity?.state === 'known' ? options.podSecurity.policy : undefined;
      if (policy === undefined) throw new Error('unreachable');
      const before = podSpecs(read(source));
      const after = podSpecs(read(golden));
      before.forEach((spec, index) => {
        const was = podSecurityViolations(spec as Record<string, unknown>, policy.level);
        const now = podSecurityViolations(after[index] as Record<string, unknown>, policy.level);
        if (was.length === 0) expect(now).toEqual([]);
        else expect(now.length).toBeLessThanOrEqual(was.length);
      });
    },
  );

  it('the init container is what "baseline" refuses, in the words of the issue', () => {
    const spec = podSpecs(read(join(DIR, 'deployment.injected.yaml')))[0] as Record<string, unknown>;
    expect(podSecurityViolations(spec, 'baseline')).toEqual([
      'non-default capabilities (container "osm-healthcheck-init" must not include "NET_ADMIN", "NET_RAW" in securityContext.capabilities.add)',
    ]);
  });
});
