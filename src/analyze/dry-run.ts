// The round trip: a server-side dry-run create (dryRun=All: every admission runs, nothing is stored) of a pod
// with a probe, in a namespace the webhook sees, so the API server itself calls our webhook and answers with the
// pod as admission left it. The companion and the record in it, or our webhook's warnings, show what the live
// webhook decided; neither shows the API server went on without it (failurePolicy: Ignore).

import { COMPANION_NAME } from '../rewrite/companion.js';
import { readRecord } from '../rewrite/record.js';
import { WARNING_PREFIX } from '../webhook/admit.js';
import type { Check } from './checks.js';
import { podAnnotations } from './classify.js';
import { asObject } from './json.js';
import type { ClusterClient, Json } from './kube-client.js';

/** What the dry run learnt of the live webhook: the release and image a pod created now gets. */
export interface LiveRecord {
  version: string;
  image: string;
}

/**
 * A pod every Pod Security level admits, with one probe for the companion: what a meshed app looks like to the
 * webhook. Small requests and limits, so a LimitRange or ResourceQuota has nothing to object to on its account.
 */
export function roundTripPod(): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'osm-healthcheck-analyze-',
      labels: { 'app.kubernetes.io/name': 'osm-healthcheck-analyze' },
    },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'app',
          image: 'registry.k8s.io/pause:3.10',
          ports: [{ containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
        },
      ],
    },
  };
}

/** The verdict on what came back: `pod` as admission left it, `warnings` as the API server relayed them. */
export function judgeRoundTrip(
  namespace: string,
  pod: Json,
  warnings: readonly string[],
): { check: Check; live?: LiveRecord } {
  const spec = asObject(pod.spec);
  const all = [
    ...(Array.isArray(spec.initContainers) ? spec.initContainers : []),
    ...(Array.isArray(spec.containers) ? spec.containers : []),
  ];
  const injected = all.some((c) => asObject(c).name === COMPANION_NAME);
  const ours = warnings
    .filter((w) => w.startsWith(WARNING_PREFIX))
    .map((w) => w.slice(WARNING_PREFIX.length));
  const record = readRecord(podAnnotations(pod));
  const where = `a server-side dry-run create of a pod with an httpGet probe in namespace ${namespace}`;
  if (injected && record.state === 'present') {
    const { version, image, placement, bypass } = record.record;
    return {
      check: {
        section: 'install',
        name: 'dry-run',
        status: 'ok',
        detail: `${where}: the API server called the webhook, which injected it (${version}, image ${image}, companion as ${placement === 'native-sidecar' ? 'a native sidecar' : 'the first container'}, ${bypass})`,
      },
      live: { version, image },
    };
  }
  if (injected) {
    return {
      check: {
        section: 'install',
        name: 'dry-run',
        status: 'warn',
        detail: `${where}: the companion was added, but without the osm-healthcheck/status record: a release before records injected it`,
      },
    };
  }
  if (ours.length > 0) {
    return {
      check: {
        section: 'install',
        name: 'dry-run',
        status: 'warn',
        detail: `${where}: the webhook answered and left it untouched: ${ours.join('; ')}`,
      },
    };
  }
  return {
    check: {
      section: 'install',
      name: 'dry-run',
      status: 'fail',
      detail: `${where}: admitted without the companion and without a word from the webhook: the API server did not reach it or did not trust it, and went on without it (failurePolicy Ignore)`,
    },
  };
}

export async function roundTrip(
  client: ClusterClient,
  namespace: string | undefined,
): Promise<{ check: Check; live?: LiveRecord }> {
  if (namespace === undefined) {
    return {
      check: {
        section: 'install',
        name: 'dry-run',
        status: 'skip',
        detail: 'cannot make the round trip: no namespace is labelled for injection',
      },
    };
  }
  const reply = await client.post(`/api/v1/namespaces/${namespace}/pods?dryRun=All`, roundTripPod());
  if (reply.ok) return judgeRoundTrip(namespace, reply.body, reply.warnings);
  if (
    reply.status === 403 &&
    reply.reason === 'Forbidden' &&
    /cannot create resource "pods"/.test(reply.message)
  ) {
    return {
      check: {
        section: 'install',
        name: 'dry-run',
        status: 'skip',
        detail: `cannot make the round trip: needs create on pods in ${namespace} (a server-side dry run: nothing is stored)`,
      },
    };
  }
  return {
    check: {
      section: 'install',
      name: 'dry-run',
      status: 'fail',
      detail: `a server-side dry-run create of a pod in ${namespace} was refused: ${reply.message}`,
    },
  };
}
