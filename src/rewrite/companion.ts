// The two containers inject adds: the companion (`serve`) and the init step (`init`), built from the table.

import pkg from '../../package.json' with { type: 'json' };
import {
  COMPANION_UID,
  DEFAULT_PORTS,
  HEALTHZ_PATH,
  LISTENER_ROLES,
  type ListenerRole,
  PROBES_ENV,
  SHUTDOWN_GRACE_ENV,
} from '../scheme.js';
import type { ProbeTableDocument } from '../table/types.js';
import { copyPlain } from './plain-copy.js';
import type { ContainerResources } from './resources/defaults.js';
import type { Container } from './types.js';

export const COMPANION_NAME = 'osm-healthcheck';
export const INIT_NAME = 'osm-healthcheck-init';
export const DEFAULT_IMAGE = `osm-healthcheck:${pkg.version}`;

/** Container port names: IANA_SVC_NAME, at most 15 characters. */
export const PORT_NAMES: Readonly<Record<ListenerRole, string>> = {
  liveness: 'osm-hc-live',
  readiness: 'osm-hc-ready',
  startup: 'osm-hc-startup',
  healthcheck: 'osm-hc-health',
};

const HEALTHZ = { httpGet: { path: HEALTHZ_PATH, port: DEFAULT_PORTS.healthcheck } };

/**
 * The companion's own liveness: a stuck event loop (the process alive, nothing answered) is killed and restarted
 * by kubelet long before the app's liveness probes, answered by the companion, fail their threshold (Kubernetes'
 * defaults: 3 × 10 s). /healthz costs no probe of the app, so a short period is cheap; three misses at 2 s, 1 s
 * each, detect a hang in 5-7 s. The probe-level grace (GA since 1.25) lets kubelet SIGKILL the hung companion 1 s
 * after its SIGTERM instead of after the pod's grace, which still governs pod deletion and so the stop order
 * (docs/architecture.md#start-and-stop-order). Crashes and OOM kills never reach kubelet: the image's supervisor restarts serve in place
 * (image/supervise.sh, docs/companion-failures.md).
 */
export const COMPANION_LIVENESS = {
  periodSeconds: 2,
  timeoutSeconds: 1,
  failureThreshold: 3,
  terminationGracePeriodSeconds: 1,
} as const;

/**
 * The companion's postStart hook. Exec hooks run their command as is, without the image's entrypoint
 * (`tini -- /app/supervise.sh node /app/dist/cli.mjs`, Dockerfile), so the hook names node and the CLI itself.
 */
export const WAIT_COMMAND: readonly string[] = ['node', '/app/dist/cli.mjs', 'wait'];

/** Kubernetes' default terminationGracePeriodSeconds (pkg/apis/core/v1/defaults.go). */
export const DEFAULT_GRACE_SECONDS = 30;

export interface CompanionOptions {
  image: string;
  table: ProbeTableDocument;
  /**
   * true: an init container with `restartPolicy: Always` (KEP-753); kubelet starts the next container only once
   * its startupProbe passed. false: the first app container, with `wait` as its postStart hook; kubelet starts
   * the next container only once the hook returned. Either way the companion listens before any app probe runs.
   */
  native: boolean;
  /** The pod's terminationGracePeriodSeconds: how long serve may keep answering while the app shuts down. */
  shutdownGraceSeconds: number;
  /** COMPANION_RESOURCES with the pod's overrides, fitted to the pod and its namespace (resource-fit.ts). */
  resources: ContainerResources;
}

export function companionContainer({
  image,
  table,
  native,
  shutdownGraceSeconds,
  resources,
}: CompanionOptions): Container {
  return {
    name: COMPANION_NAME,
    image,
    args: ['serve'],
    ...(native ? { restartPolicy: 'Always' } : {}),
    ports: LISTENER_ROLES.map((role) => ({ name: PORT_NAMES[role], containerPort: DEFAULT_PORTS[role] })),
    env: [
      { name: PROBES_ENV, value: JSON.stringify(table) },
      // What kubelet would have dialled: the companion probes the app at the pod IP, not at 127.0.0.1.
      { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: SHUTDOWN_GRACE_ENV, value: String(shutdownGraceSeconds) },
    ],
    ...(native ? {} : { lifecycle: { postStart: { exec: { command: [...WAIT_COMMAND] } } } }),
    resources: copyPlain(resources),
    securityContext: {
      runAsNonRoot: true,
      runAsUser: COMPANION_UID,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      // Pod Security "restricted" wants a seccomp profile on every container the pod-level one does not cover
      // (check_seccompProfile_restricted.go); RuntimeDefault is allowed at every level, so ours is never the
      // container that gets a pod refused.
      seccompProfile: { type: 'RuntimeDefault' },
    },
    startupProbe: { ...copyPlain(HEALTHZ), periodSeconds: 1, failureThreshold: 30 },
    livenessProbe: { ...copyPlain(HEALTHZ), ...COMPANION_LIVENESS },
  };
}

/**
 * Root with NET_ADMIN and NET_RAW only, as Istio's istio-init runs: iptables needs both, and nothing else.
 * The root filesystem stays writable because iptables-legacy takes a lock under /run.
 */
export function initContainer(image: string, resources: ContainerResources): Container {
  return {
    name: INIT_NAME,
    image,
    args: ['init'],
    resources: copyPlain(resources),
    securityContext: {
      runAsNonRoot: false,
      runAsUser: 0,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { add: ['NET_ADMIN', 'NET_RAW'], drop: ['ALL'] },
    },
  };
}
