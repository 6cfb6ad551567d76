// The webhook learns the cluster's version from a stand-in API server on loopback (HTTPS, a test CA, a bearer
// token it checks) and gives a native sidecar only where that version has them: 1.26, 1.28 without and with the
// SidecarContainers gate, 1.29, 1.33, and an API server it cannot reach. Whatever the answer, the patched pod is
// exactly what `inject` makes of it with the same decision, and one that version's API server accepts.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKOFF, retryDelay } from '../../src/kube/api/backoff.js';
import { inClusterClient, inClusterUrl, type KubeApi } from '../../src/kube/api/in-cluster.js';
import { fetchVersion as fetchFrom } from '../../src/kube/api/version.js';
import { parseKubeVersion } from '../../src/kube-version.js';
import { injectManifests } from '../../src/manifest/inject.js';
import type { ClusterKnowledge, PlacementMode } from '../../src/rewrite/placement.js';
import type { PodSpec } from '../../src/rewrite/types.js';
import { WARNING_PREFIX } from '../../src/webhook/admit.js';

const fetchVersion = (api: KubeApi, timeoutMs: number) => fetchFrom(inClusterClient(api, timeoutMs));

import type { AdmissionResponse } from '../../src/webhook/review.js';
import { admissionWarnings } from '../../src/webhook/warnings.js';
import {
  apiServerRefusals,
  startVersionStandin,
  type VersionStandin,
  versionBody,
} from '../helpers/api-server.js';
import { closedPort, tcpApp } from '../helpers/apps.js';
import { BUSY_MACHINE_SLACK_MS } from '../helpers/deadline.js';
import { makeTestCert } from '../helpers/tls.js';
import { allListed, type Harness, REWRITE, startHarness } from './harness.js';

type Pod = Record<string, unknown>;
const FAST = { firstMs: 20, maxMs: 100 };

const review = JSON.parse(
  readFileSync(new URL('../fixtures/webhook/http-get.json', import.meta.url), 'utf8'),
) as { request: { uid: string; object: Pod } };

const cleanups: (() => Promise<void>)[] = [];

/** A token file holding `token`, removed after the test. */
function tokenFile(token: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'osm-hc-token-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'token');
  writeFileSync(file, token);
  return file;
}
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function standin(...args: Parameters<typeof startVersionStandin>): Promise<VersionStandin> {
  const server = await startVersionStandin(...args);
  // The review's namespace, unlabelled (privileged): what this file tests is the version, not Pod Security.
  server.namespaces.put('shop', {});
  cleanups.push(() => server.close());
  return server;
}

/** A webhook whose API server address refuses every connection (a port nothing listens on). */
async function unreachableWebhook() {
  const port = await closedPort();
  const cert = makeTestCert();
  cleanups.push(async () => cert.cleanup());
  const harness = await webhookFor(
    {
      url: `https://127.0.0.1:${port}`,
      caFile: cert.certFile,
      tokenFile: tokenFile('any'),
    },
    false,
    1000,
    'native-sidecar',
    false,
  );
  return { port, harness };
}

async function webhookFor(
  api: { url: string; caFile: string; tokenFile: string },
  sidecarGate = false,
  timeoutMs = 1000,
  placement: PlacementMode = 'native-sidecar',
  reachable = true,
): Promise<Harness> {
  const harness = await startHarness({
    placement,
    clusterVersion: { sidecarGate, fetchVersion: () => fetchVersion(api, timeoutMs), backoff: FAST },
    // The nodes too: placement needs the kubelets' versions as well as the API server's.
    ...(reachable ? { kube: { api, backoff: FAST } } : {}),
  });
  cleanups.push(() => harness.close());
  // Pods are left untouched while the namespace and its rules are not known: admissions here come after the lists.
  if (reachable) await allListed(harness);
  return harness;
}

async function admitted(harness: Harness, pod: Pod, uid: string): Promise<AdmissionResponse> {
  const reply = await harness.post({ ...review, request: { ...review.request, uid, object: pod } });
  expect(reply.status, reply.body).toBe(200);
  const response = (JSON.parse(reply.body) as { response: AdmissionResponse }).response;
  expect(response.allowed).toBe(true);
  return response;
}

function applied(pod: Pod, response: AdmissionResponse): Pod {
  if (response.patch === undefined) return pod;
  const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as Operation[];
  return jsonpatch.applyPatch(structuredClone(pod), ops, true, false).newDocument;
}

async function patchedPod(harness: Harness, uid: string, pod: Pod = review.request.object): Promise<Pod> {
  return applied(pod, await admitted(harness, pod, uid));
}

/** `inject --kube-version` (or without, `unknown`) of the pod, with the webhook's prefix on its warnings. */
function injectedWith(
  pod: Pod,
  cluster: ClusterKnowledge,
  placement: PlacementMode = 'native-sidecar',
): { pod: Pod; warnings: string[] } {
  const { output, warnings } = injectManifests(
    JSON.stringify(pod),
    {
      ...REWRITE,
      placement,
      cluster,
      // The stand-in's one node runs the API server's version (api-server.ts), as the webhook learns.
      ...(cluster.state === 'known'
        ? { kubelets: { state: 'known', version: cluster.version, source: 'the only node ("n1")' } as const }
        : {}),
    },
    'json',
  );
  // The response carries them shaped to the API server's limits (src/webhook/warnings.ts).
  return { pod: JSON.parse(output) as Pod, warnings: admissionWarnings(warnings, WARNING_PREFIX) };
}

/** inject --placement native-sidecar of the pod, on a cluster with native sidecars (1.29) or not known. */
function injected(native: boolean): Pod {
  const cluster: ClusterKnowledge = native
    ? { state: 'known', version: { major: 1, minor: 29 }, sidecarGate: false }
    : { state: 'unknown', why: 'x' };
  return injectedWith(review.request.object, cluster).pod;
}

/** A Job's pod: restartPolicy Never. */
const jobPod = (
  JSON.parse(readFileSync(new URL('../fixtures/webhook/job-pod.json', import.meta.url), 'utf8')) as {
    request: { object: Pod };
  }
).request.object;

describe('the webhook with --placement native-sidecar, per cluster version', () => {
  it.each([
    { name: '1.26', answer: versionBody('26'), gate: false, native: false },
    {
      name: '1.28 (EKS: "28+"), gate off',
      answer: versionBody('28+', 'v1.28.3-eks-4f4795d'),
      gate: false,
      native: false,
    },
    { name: '1.28, gate on', answer: versionBody('28'), gate: true, native: true },
    { name: '1.29', answer: versionBody('29'), gate: false, native: true },
    { name: '1.33', answer: versionBody('33'), gate: false, native: true },
  ])('$name: native sidecar $native', async ({ answer, gate, native }) => {
    const api = await standin(answer);
    const harness = await webhookFor(api, gate);
    const learnt = await harness.logLine((l) => l.msg === 'kubernetes version learnt');
    const version = parseKubeVersion(answer.version.gitVersion);
    if (version === undefined) throw new Error('a stand-in version that does not parse');
    expect(learnt).toMatchObject({
      kubernetesVersion: `${version.major}.${version.minor}`,
      sidecarContainersGate: gate,
      nativeSidecars: native,
    });
    const pod = await patchedPod(harness, `v-${answer.version.minor}-${gate}`);
    expect(pod).toEqual(injected(native));
    expect(apiServerRefusals(pod.spec as PodSpec, version, gate)).toEqual([]);
    const line = await harness.logLine((l) => l.uid === `v-${answer.version.minor}-${gate}`);
    expect(line).toMatchObject({
      result: 'patched',
      companion: native ? 'native sidecar' : 'first container',
    });
    // A Job's pod: a native sidecar where the version has them, else untouched; exactly as inject decides it,
    // warnings and all, and one that version's API server accepts.
    const cluster: ClusterKnowledge = { state: 'known', version, sidecarGate: gate };
    const uid = `job-${answer.version.minor}-${gate}`;
    const jobAnswer = await admitted(harness, jobPod, uid);
    const expected = injectedWith(jobPod, cluster);
    expect(applied(jobPod, jobAnswer)).toEqual(expected.pod);
    expect(jobAnswer.warnings ?? []).toEqual(expected.warnings);
    expect(jobAnswer.patch === undefined).toBe(!native);
    expect(apiServerRefusals(applied(jobPod, jobAnswer).spec as PodSpec, version, gate)).toEqual([]);
    expect(await harness.logLine((l) => l.uid === uid)).toMatchObject({
      companion: native ? 'native sidecar' : 'untouched',
    });
    expect(api.requests()).toBe(1);
  });

  it('an API server it cannot reach: the companion first, and it keeps asking', async () => {
    const { port, harness } = await unreachableWebhook();
    const first = await harness.logLine((l) => String(l.msg).startsWith('kubernetes version not known'));
    expect(first).toMatchObject({ level: 'warn', attempt: 1, retryInMs: 20 });
    expect(String(first.err)).toMatch(`GET https://127.0.0.1:${port}/version: connect ECONNREFUSED`);
    await harness.logLine((l) => l.attempt === 3);
    const pod = await patchedPod(harness, 'unreachable');
    expect(pod).toEqual(injected(false));
    // What every version accepts, the oldest included.
    expect(apiServerRefusals(pod.spec as PodSpec, { major: 1, minor: 24 }, false)).toEqual([]);
  });

  it('learns the version once the API server answers, and only then gives native sidecars', async () => {
    const api = await standin({ status: 503 });
    const harness = await webhookFor(api);
    const failed = await harness.logLine((l) => String(l.msg).startsWith('kubernetes version not known'));
    expect(String(failed.err)).toBe(`GET ${api.url}/version answered 503: status 503`);
    expect(await patchedPod(harness, 'before')).toEqual(injected(false));
    api.answer(versionBody('30'));
    await harness.logLine((l) => l.msg === 'kubernetes version learnt');
    expect(await patchedPod(harness, 'after')).toEqual(injected(true));
  });

  it('never waits for the API server: admissions are answered while /version hangs', async () => {
    const api = await standin('hang');
    const harness = await webhookFor(api, false, 10_000);
    const started = performance.now();
    expect(await patchedPod(harness, 'hanging')).toEqual(injected(false));
    // Well within the 10 s the version request may take, with a busy machine's slack.
    expect(performance.now() - started).toBeLessThan(BUSY_MACHINE_SLACK_MS);
    await expect.poll(() => api.requests()).toBe(1);
  });

  it('an API server it cannot reach: a Job pod untouched, the warning saying why', async () => {
    const { harness } = await unreachableWebhook();
    const failed = await harness.logLine((l) => String(l.msg).startsWith('kubernetes version not known'));
    const response = await admitted(harness, jobPod, 'job-unreachable');
    expect(response.patch).toBeUndefined();
    const expected = injectedWith(jobPod, { state: 'unknown', why: String(failed.err) });
    expect(response.warnings).toEqual(expected.warnings);
    expect(response.warnings?.[0]).toMatch(
      /^osm-healthcheck: Pod\/report-\*: restartPolicy Never: left untouched, as the Kubernetes version is not known \(GET https:\/\/127\.0\.0\.1:\d+\/version: connect ECONNREFUSED/,
    );
  });

  it.each([
    { name: '1.30 (native sidecars, not GA)', minor: '30', native: false },
    { name: '1.32', minor: '32', native: false },
    { name: '1.33 (GA)', minor: '33', native: true },
    { name: '1.36', minor: '36', native: true },
  ])(
    'the default placement, auto, at $name: native sidecar $native; a Job a native sidecar',
    async ({ minor, native }) => {
      const api = await standin(versionBody(minor));
      const harness = await webhookFor(api, false, 1000, 'auto');
      await harness.logLine((l) => l.msg === 'kubernetes version learnt');
      const cluster: ClusterKnowledge = {
        state: 'known',
        version: { major: 1, minor: Number(minor) },
        sidecarGate: false,
      };
      // The kubelets are not given here (the node watch is another part): they are taken to be the API server's.
      const plain = await patchedPod(harness, `plain-${minor}`);
      expect(plain).toEqual(injectedWith(review.request.object, cluster, 'auto').pod);
      const names = ((plain.spec as PodSpec).initContainers ?? []).map((c) => c.name);
      expect(names.includes('osm-healthcheck')).toBe(native);
      const line = await harness.logLine((l) => l.uid === `plain-${minor}`);
      expect(line).toMatchObject({ companion: native ? 'native sidecar' : 'first container' });
      expect(String(line.placement)).toContain(`(placement auto`);
      expect(String(line.placement)).toContain(`Kubernetes 1.${minor}`);
      expect(await patchedPod(harness, `job-${minor}`, jobPod)).toEqual(
        injectedWith(jobPod, cluster, 'auto').pod,
      );
      const spec = (await patchedPod(harness, `job-2-${minor}`, jobPod)).spec as PodSpec;
      expect(spec.initContainers?.[1]).toMatchObject({ name: 'osm-healthcheck', restartPolicy: 'Always' });
    },
  );

  it('--placement first at 1.33: first among the containers; a Job still a native sidecar', async () => {
    const api = await standin(versionBody('33'));
    const harness = await webhookFor(api, false, 1000, 'first');
    await harness.logLine((l) => l.msg === 'kubernetes version learnt');
    const plain = await patchedPod(harness, 'first-33');
    expect((plain.spec as PodSpec).containers?.[0]?.name).toBe('osm-healthcheck');
    const spec = (await patchedPod(harness, 'first-job', jobPod)).spec as PodSpec;
    expect(spec.initContainers?.[1]).toMatchObject({ name: 'osm-healthcheck', restartPolicy: 'Always' });
  });

  it('with no API server to ask it asks nothing, and the companion goes first', async () => {
    const harness = await startHarness();
    cleanups.push(() => harness.close());
    expect(await patchedPod(harness, 'plain')).toEqual(injected(false));
    expect(harness.logs.some((l) => String(l.msg).startsWith('kubernetes version'))).toBe(false);
  });
});

describe('fetchVersion: GET /version as client-go does it in a pod', () => {
  it('sends the token, verifies the server with the CA, reads the version', async () => {
    const api = await standin(versionBody('28+', 'v1.28.3-eks-4f4795d'));
    expect(await fetchVersion(api, 1000)).toEqual({ major: 1, minor: 28 });
  });

  it.each([
    {
      name: 'a token the API server refuses',
      api: (s: VersionStandin) => ({ ...s, tokenFile: tokenFile('someone-else') }),
      message: /answered 401: Unauthorized$/,
    },
    {
      name: 'a server the CA did not sign',
      api: (s: VersionStandin) => {
        const other = makeTestCert();
        cleanups.push(async () => other.cleanup());
        return { ...s, caFile: other.certFile };
      },
      message: /^GET https:\/\/127\.0\.0\.1:\d+\/version: self.signed certificate/,
    },
    {
      name: 'a token file that holds no token',
      api: (s: VersionStandin) => ({ ...s, tokenFile: s.caFile }),
      message: /^the service account token .* is not one line of printable characters$/,
    },
    {
      name: 'no token file (automountServiceAccountToken: false)',
      api: (s: VersionStandin) => ({ ...s, tokenFile: '/nonexistent/token' }),
      message: /^cannot read the service account token \/nonexistent\/token: ENOENT/,
    },
    {
      name: 'an answer without a version',
      api: (s: VersionStandin) => {
        s.answer({ version: { major: '', minor: '', gitVersion: 'devel' } });
        return s;
      },
      message: /\/version: no version in the answer: major "", minor "", gitVersion "devel"$/,
    },
  ])('$name: a clear error', async ({ api, message }) => {
    const server = await standin(versionBody('29'));
    await expect(fetchVersion(api(server), 1000)).rejects.toThrow(message);
  });

  it('a server that never answers: gives up at the timeout', async () => {
    const silent = await tcpApp(() => {});
    cleanups.push(() => silent.close());
    const cert = makeTestCert();
    cleanups.push(async () => cert.cleanup());
    const api = { url: `https://127.0.0.1:${silent.port}`, caFile: cert.certFile, tokenFile: tokenFile('t') };
    const started = performance.now();
    await expect(fetchVersion(api, 300)).rejects.toThrow(/: no answer within 300 ms$/);
    expect(performance.now() - started).toBeLessThan(300 + BUSY_MACHINE_SLACK_MS);
  });
});

describe('inClusterUrl and retryDelay', () => {
  it.each([
    {
      name: 'IPv4',
      env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
      want: 'https://10.96.0.1:443',
    },
    {
      name: 'IPv6',
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      want: 'https://[fd00::1]:443',
    },
    { name: 'outside a pod', env: {}, want: undefined },
    { name: 'no port', env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, want: undefined },
  ])('inClusterUrl: $name', ({ env, want }) => {
    expect(inClusterUrl(env)).toBe(want);
  });

  it.each([
    { failures: 1, want: 1_000 },
    { failures: 2, want: 2_000 },
    { failures: 6, want: 32_000 },
    { failures: 7, want: 60_000 },
    { failures: 100, want: 60_000 },
  ])('retryDelay after $failures failures: $want ms', ({ failures, want }) => {
    expect(retryDelay(BACKOFF, failures)).toBe(want);
  });
});
