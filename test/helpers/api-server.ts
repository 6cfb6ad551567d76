// Stand-ins for the Kubernetes API server: its GET /version over HTTPS (a test CA, a bearer token it checks) and
// the collections the webhook watches (kube-objects.ts: namespaces, LimitRanges, ResourceQuotas, nodes), and what its validation refuses in a pod spec for the fields inject writes.

import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseQuantity } from '../../src/kube/quantity.js';
import { atLeast, type KubeVersion } from '../../src/kube-version.js';
import { hasNativeSidecars } from '../../src/rewrite/placement.js';
import type { Container, PodSpec } from '../../src/rewrite/types.js';
import { PROBE_KINDS } from '../../src/scheme.js';
import type { Collection } from './kube-collection.js';
import type { NamespaceStore } from './kube-namespaces.js';
import { clusterObjects, node } from './kube-objects.js';
import { startLoopbackHttps } from './loopback-https.js';

/** What GET /version answers: a version body as the API server writes it, or a status to fail with. */
export type VersionAnswer =
  | { version: { major: string; minor: string; gitVersion: string } }
  | { status: number }
  | 'hang';

export interface VersionStandin {
  url: string;
  caFile: string;
  tokenFile: string;
  /** Namespaces, for the webhook's Pod Security list and watch. */
  namespaces: NamespaceStore;
  /** LimitRanges, ResourceQuotas and nodes, for the webhook's namespace rules and kubelet versions. */
  limitRanges: Collection;
  resourceQuotas: Collection;
  nodes: Collection;
  /** How many requests reached /version, authorised or not. */
  requests(): number;
  answer(next: VersionAnswer): void;
  close(): Promise<void>;
}

const TOKEN = 'test-service-account-token';

/** `minor` such as "28+" and a gitVersion such as "v1.28.3-eks-4f4795d", as managed clusters report them. */
export function versionBody(minor: string, gitVersion = `v1.${minor.replace('+', '')}.3`) {
  return { version: { major: '1', minor, gitVersion } };
}

export async function startVersionStandin(initial: VersionAnswer): Promise<VersionStandin> {
  let answer = initial;
  let requests = 0;
  const cluster = clusterObjects();
  // A cluster of one node whose kubelet runs the API server's version, so placement (which needs both) follows
  // the version a test sets; tests of kubelet skew put nodes of their own.
  const nodeFollows = (next: VersionAnswer) => {
    if (next !== 'hang' && 'version' in next) cluster.nodes.put(node('n1', next.version.gitVersion));
  };
  nodeFollows(initial);
  const https = await startLoopbackHttps((req, res) => {
    if (cluster.handle(req, res)) return;
    if (req.url !== '/version') {
      res.writeHead(404).end();
      return;
    }
    requests += 1;
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","code":401}\n');
      return;
    }
    if (answer === 'hang') return;
    if ('status' in answer) {
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(`status ${answer.status}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...answer.version, goVersion: 'go1.22.2', platform: 'linux/amd64' }));
  });
  const tokenFile = join(dirname(https.cert.certFile), 'token');
  // kubelet writes the projected token with a trailing newline on some runtimes: the client must trim it.
  writeFileSync(tokenFile, `${TOKEN}\n`);
  return {
    url: https.url,
    caFile: https.cert.certFile,
    tokenFile,
    namespaces: cluster.namespaces,
    limitRanges: cluster.limitRanges,
    resourceQuotas: cluster.resourceQuotas,
    nodes: cluster.nodes,
    requests: () => requests,
    answer: (next) => {
      answer = next;
      nodeFollows(next);
    },
    close: async () => {
      cluster.endWatches();
      await https.close();
    },
  };
}

/**
 * validation.go ValidateContainerResourceRequirements: every quantity valid and not negative, and a request at
 * most its limit ("must be less than or equal to memory limit of 320Mi").
 */
function resourceRefusals(c: Container): string[] {
  const refusals: string[] = [];
  const { requests = {}, limits = {} } = (c.resources ?? {}) as Record<string, Record<string, string>>;
  const read = (list: string, name: string, text: string) => {
    const parsed = parseQuantity(text);
    if ('invalid' in parsed || parsed.milli < 0n) {
      refusals.push(`${c.name}.resources.${list}.${name}: Invalid value: "${text}"`);
      return undefined;
    }
    return parsed.milli;
  };
  for (const [name, text] of Object.entries(limits)) read('limits', name, text);
  for (const [name, text] of Object.entries(requests)) {
    const request = read('requests', name, text);
    const limit = limits[name] === undefined ? undefined : parseQuantity(limits[name]);
    if (request === undefined || limit === undefined || 'invalid' in limit || request <= limit.milli)
      continue;
    refusals.push(
      `${c.name}.resources.requests.${name}: Invalid value: "${text}": must be less than or equal to ${name} limit of ${limits[name]}`,
    );
  }
  return refusals;
}

/**
 * What an API server of `version` refuses in a pod spec, for the fields the rewrite writes: pkg/apis/core/
 * validation validateInitContainers ("may not be set for init containers" for probes, restartPolicy only with
 * the SidecarContainers feature), resources (above), and the strict decoding of fields a version does not know yet (an init
 * container's restartPolicy before 1.28, gRPC probes before 1.24).
 */
export function apiServerRefusals(spec: PodSpec, version: KubeVersion, sidecarGate: boolean): string[] {
  const refusals: string[] = [];
  const sidecars = hasNativeSidecars(version, sidecarGate);
  (spec.initContainers ?? []).forEach((c, i) => {
    const at = `spec.initContainers[${i}]`;
    if (c.restartPolicy !== undefined && !sidecars) {
      refusals.push(
        atLeast(version, 1, 28) ? `${at}.restartPolicy: Forbidden` : `unknown field "${at}.restartPolicy"`,
      );
    }
    for (const kind of PROBE_KINDS) {
      if (c[`${kind}Probe`] !== undefined && !(sidecars && c.restartPolicy === 'Always')) {
        refusals.push(`${at}.${kind}Probe: Forbidden: may not be set for init containers`);
      }
    }
  });
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    refusals.push(...resourceRefusals(c));
    for (const kind of PROBE_KINDS) {
      if (c[`${kind}Probe`]?.grpc !== undefined && !atLeast(version, 1, 24)) {
        refusals.push(`unknown field "${c.name}.${kind}Probe.grpc"`);
      }
    }
  }
  return refusals;
}
