// Every pod of ../shared/mesh-goldens (pods as Istio, Linkerd, Kuma, osm-edge and Consul inject them) through
// inject and through the webhook's admission, with no cluster version, 1.28 and 1.36: nothing of the mesh's
// replaced or lost, unique container names and ports, the mesh proxies' probes untouched, every app probe
// answered by one prober (the mesh's, with a note, or ours, never ours in front of the mesh's), a pod without app
// probes left alone, and both idempotent. Read as the envtest suites read ../shared/envtest: a loud skip without
// them, a failure under CI=true.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { injectManifests } from '../../src/manifest/inject.js';
import { COMPANION_NAME, DEFAULT_IMAGE, INIT_NAME } from '../../src/rewrite/companion.js';
import type { ClusterKnowledge } from '../../src/rewrite/placement.js';
import type { Container, PodSpec, Probe, RewriteOptions } from '../../src/rewrite/types.js';
import { podTemplates } from '../../src/rewrite/workload.js';
import { PROBE_KINDS, PROBES_ENV } from '../../src/scheme.js';
import { admit } from '../../src/webhook/admit.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { file, skipWithout } from '../helpers/system-tools.js';
import { startHarness } from '../webhook/harness.js';

const GOLDENS = join(ROOT, '..', 'shared', 'mesh-goldens');
const NEED = file(GOLDENS, 'the mesh-goldens folder beside the checkout (../shared/mesh-goldens)');
const skip = skipWithout('mesh-goldens', [NEED]);

/** Manifests only: Kuma's injector configs (inject.config*.yaml) and the README are not pods. */
function goldenFiles(): string[] {
  if (!NEED.present) return [];
  return readdirSync(GOLDENS, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) =>
      readdirSync(join(GOLDENS, d.name))
        .filter((name) => !name.startsWith('inject.config') && /\.(ya?ml|injected)$/.test(name))
        .map((name) => `${d.name}/${name}`),
    )
    .sort();
}

const known = (minor: number): ClusterKnowledge => ({
  state: 'known',
  version: { major: 1, minor },
  sidecarGate: false,
});

const MODES: Record<string, Partial<RewriteOptions>> = {
  'no version': {},
  '1.28': { cluster: known(28) },
  '1.36': { cluster: known(36) },
};

function options(mode: string): RewriteOptions {
  return { image: DEFAULT_IMAGE, placement: 'auto', ...MODES[mode] };
}

/** The meshes' own containers, by the names their injectors give them (mesh source in recognise.ts). */
const MESH_CONTAINERS = new Set([
  'istio-proxy',
  'istio-init',
  'istio-validation',
  'linkerd-proxy',
  'linkerd-init',
  'linkerd-debug',
  'kuma-sidecar',
  'kuma-init',
  'consul-dataplane',
  'consul-connect-inject-init',
  'osm-init',
  'sidecar',
]);
const PROXY_PROBES = ['istio-proxy', 'linkerd-proxy', 'kuma-sidecar', 'consul-dataplane', 'sidecar'];

function isOurs(c: Container): boolean {
  return (c.name === COMPANION_NAME || c.name === INIT_NAME) && c.command === undefined;
}
function isMeshs(c: Container): boolean {
  return (
    MESH_CONTAINERS.has(String(c.name)) || (Array.isArray(c.command) && c.command[0] === '/osm-healthcheck')
  );
}
function all(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
}

/** Where a mesh's own prober answers an app probe: Istio's pilot-agent, Kuma's probe proxy, Consul's expose paths, osm-edge's sidecar. */
function meshProber(probe: Probe | undefined): boolean {
  const get = probe?.httpGet;
  if (get === undefined) return false;
  const port = Number(get.port);
  return (
    (port === 15020 && String(get.path).startsWith('/app-health/')) ||
    port === 9000 ||
    port === 9001 ||
    (port >= 20300 && port < 20600) ||
    get.path === '/osm-healthcheck'
  );
}

/** The ports an app probe ends at, through our table. */
function tableTargets(spec: PodSpec): number[] {
  const companion = all(spec).find((c) => c.name === COMPANION_NAME && isOurs(c));
  const value = companion?.env?.find((e) => e.name === PROBES_ENV)?.value;
  if (value === undefined) return [];
  const table = JSON.parse(value) as Record<string, Record<string, Probe>>;
  return PROBE_KINDS.flatMap((kind) =>
    Object.values(table[kind] ?? {}).map((e) => Number(e.httpGet?.port ?? e.tcpSocket?.port ?? e.grpc?.port)),
  );
}

/** Points 1-3 of one pod, before and after. */
function checkPod(before: PodSpec, after: PodSpec, warnings: readonly string[], where: string): void {
  const names = all(after).map((c) => c.name);
  expect(new Set(names).size, `${where}: container names unique`).toBe(names.length);
  // Ours never declare a port another container declares (the meshes' own inputs may repeat one, Istio's do).
  const portsOf = (list: Container[]) => list.flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
  const theirs = new Set(portsOf(all(after).filter((c) => !isOurs(c))));
  for (const port of portsOf(all(after).filter(isOurs))) {
    expect(theirs.has(port), `${where}: our port ${port} declared by another container`).toBe(false);
  }
  // 1, 2: every container not ours comes out as it was, but for app probes (the mesh's exactly as they were).
  for (const c of all(before).filter((c) => !isOurs(c))) {
    const out = all(after).find((o) => o.name === c.name);
    expect(out, `${where}: "${c.name}" kept`).toBeDefined();
    if (isMeshs(c)) expect(out, `${where}: mesh container "${c.name}" untouched`).toEqual(c);
    else {
      const { livenessProbe: _l, readinessProbe: _r, startupProbe: _s, ...rest } = c;
      const { livenessProbe: _l2, readinessProbe: _r2, startupProbe: _s2, ...restOut } = out as Container;
      expect(restOut, `${where}: "${c.name}" kept`).toEqual(rest);
    }
  }
  for (const name of PROXY_PROBES) {
    const c = all(before).find((o) => o.name === name);
    if (c !== undefined) expect(all(after).find((o) => o.name === name)).toEqual(c);
  }
  // 3: never ours in front of the mesh's prober; the mesh's kept with a note.
  const targets = tableTargets(after);
  for (const port of targets) {
    expect(
      port === 15020 || port === 9000 || port === 9001 || (port >= 20300 && port < 20600),
      `${where}: ours in front of the mesh's prober on ${port}`,
    ).toBe(false);
  }
  const apps = all(before).filter((c) => !isMeshs(c) && !isOurs(c));
  const meshProbes = apps.flatMap((c) => PROBE_KINDS.map((k) => c[`${k}Probe`]).filter(meshProber));
  if (meshProbes.length > 0 && !all(before).some(isOurs)) {
    expect(warnings.join('\n'), `${where}: a note on the mesh's prober`).toMatch(
      /osm-edge|own prober answers/,
    );
  }
  // Where the mesh leaves a probe to its proxy (Linkerd, Consul's TCP probes, Istio with its rewrite off), ours
  // take it: the proxy would answer a TCP probe itself.
  const osm = all(before).some((c) => c.name === 'sidecar' || c.name === 'osm-init');
  for (const c of apps) {
    for (const kind of PROBE_KINDS) {
      const probe = c[`${kind}Probe`];
      if (osm || probe === undefined || probe.exec !== undefined || meshProber(probe)) continue;
      const out = all(after).find((o) => o.name === c.name)?.[`${kind}Probe`];
      expect(
        Number(out?.httpGet?.port),
        `${where}: "${c.name}" ${kind} goes to the companion`,
      ).toBeGreaterThanOrEqual(15901);
    }
  }
  const appProbes = apps.flatMap((c) =>
    PROBE_KINDS.map((k) => c[`${k}Probe`]).filter((p) => p !== undefined && p.exec === undefined),
  );
  if (appProbes.length === 0 && !all(before).some(isOurs)) {
    expect(all(after).some(isOurs), `${where}: no app probe, nothing added`).toBe(false);
  }
  // osm-edge's sidecar listens on 15901-15903: never our companion beside it.
  if (all(after).some((c) => c.name === 'sidecar' || c.name === 'osm-init')) {
    expect(all(after).some(isOurs), `${where}: no companion beside osm-edge's sidecar`).toBe(false);
  }
}

interface Pod {
  apiVersion: string;
  kind: string;
  metadata?: Record<string, unknown>;
  spec: PodSpec;
}

/** Every pod the document's workload makes (a Deployment's template as a Pod), as the API server admits it. */
function podsOf(doc: unknown): Pod[] {
  return podTemplates(doc).map((t) => {
    const spec = t.specPath.reduce<unknown>((n, k) => (n as Record<string, unknown>)[k], doc) as PodSpec;
    const metadata = t.specPath.length === 1 ? (doc as Pod).metadata : { annotations: t.annotations ?? {} };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: structuredClone(metadata ?? {}),
      spec: structuredClone(spec),
    };
  });
}

function admitted(pod: Pod, mode: string): { pod: Pod; ops: Operation[]; warnings: string[] } {
  const { response } = admit(
    {
      uid: 'u',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      operation: 'CREATE',
      namespace: 'ns',
      object: pod,
    },
    options(mode),
  );
  const ops =
    response.patch === undefined
      ? []
      : (JSON.parse(Buffer.from(response.patch, 'base64').toString()) as Operation[]);
  const next = jsonpatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
  return { pod: next, ops, warnings: response.warnings ?? [] };
}

describe.skipIf(skip)('mesh goldens', () => {
  const files = goldenFiles();
  it('finds the goldens', () => {
    expect(files.length).toBeGreaterThan(10);
  });
  for (const name of files) {
    for (const mode of Object.keys(MODES)) {
      it(`${name} (${mode}): inject`, () => {
        const source = readFileSync(join(GOLDENS, name), 'utf8');
        const once = injectManifests(source, options(mode), 'yaml');
        const before = parseAllDocuments(source).map((d) => d.toJS());
        const after = parseAllDocuments(once.output).map((d) => d.toJS());
        before.forEach((doc, i) => {
          const a = podsOf(doc);
          const b = podsOf(after[i]);
          for (const [j, pod] of a.entries())
            checkPod(pod.spec, (b[j] as Pod).spec, once.warnings, `${name}#${i}`);
        });
        const twice = injectManifests(once.output, options(mode), 'yaml').output;
        expect(twice, 'inject twice = once, byte for byte').toBe(once.output);
      });
      it(`${name} (${mode}): webhook`, () => {
        const source = readFileSync(join(GOLDENS, name), 'utf8');
        for (const doc of parseAllDocuments(source).map((d) => d.toJS())) {
          for (const pod of podsOf(doc)) {
            const first = admitted(pod, mode);
            checkPod(pod.spec, first.pod.spec, first.warnings, name);
            expect(admitted(first.pod, mode).ops, 'reinvocation: no patch').toEqual([]);
          }
        }
      });
    }
  }
});

// The same files through the real edges once each: the built CLI (stdin to stdout) and the webhook over HTTPS.
describe.skipIf(skip)('mesh goldens through the built CLI and the running webhook', () => {
  let harness: Awaited<ReturnType<typeof startHarness>>;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  for (const name of goldenFiles()) {
    it(`${name}: osm-healthcheck inject exits 0 with what injectManifests makes`, async () => {
      const source = readFileSync(join(GOLDENS, name), 'utf8');
      const exit = await runCli(['inject'], { input: source, timeoutMs: 30_000 });
      expect(exit.code, exit.stderr).toBe(0);
      const expected = injectManifests(source, options('no version'), 'yaml');
      expect(exit.stdout).toBe(expected.output);
      for (const warning of expected.warnings) expect(exit.stderr).toContain(warning);
    });

    it(`${name}: POST /mutate answers each pod as admit does`, async () => {
      const source = readFileSync(join(GOLDENS, name), 'utf8');
      for (const doc of parseAllDocuments(source).map((d) => d.toJS())) {
        for (const pod of podsOf(doc)) {
          const request = {
            uid: 'u',
            kind: { group: '', version: 'v1', kind: 'Pod' },
            operation: 'CREATE',
            namespace: 'ns',
            object: pod,
          };
          const answer = await harness.post({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            request,
          });
          expect(answer.status, answer.body).toBe(200);
          const { response } = JSON.parse(answer.body) as {
            response: { patch?: string; warnings?: string[] };
          };
          const ops =
            response.patch === undefined
              ? []
              : (JSON.parse(Buffer.from(response.patch, 'base64').toString()) as Operation[]);
          const next = jsonpatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
          checkPod(pod.spec, next.spec, response.warnings ?? [], name);
        }
      }
    });
  }
});
