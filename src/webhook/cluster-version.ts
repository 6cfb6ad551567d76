// What the webhook knows of the cluster's version: asked at start-up and again, with backoff, until the API
// server answers. Admissions never wait for it: until it is known they get the placement every version accepts.
// Once known it is kept: an API server is only ever upgraded in place, and a stale (older) version only means a
// companion placed first where a native sidecar would have been allowed.

import { BACKOFF, type Backoff, retryDelay } from '../kube/api/backoff.js';
import { formatVersion, type KubeVersion } from '../kube-version.js';
import type { Logger } from '../log.js';
import { type ClusterKnowledge, hasNativeSidecars } from '../rewrite/placement.js';

export interface ClusterVersionOptions {
  fetch: () => Promise<KubeVersion>;
  /** 1.28's SidecarContainers feature gate is on (the webhook cannot ask the API server for its gates). */
  sidecarGate: boolean;
  log: Logger;
  backoff?: Backoff;
}

export interface ClusterVersion {
  /** Now, without waiting. */
  knowledge(): ClusterKnowledge;
  close(): void;
}

export function learnClusterVersion(options: ClusterVersionOptions): ClusterVersion {
  const { log, sidecarGate } = options;
  const backoff = options.backoff ?? BACKOFF;
  let version: KubeVersion | undefined;
  let why = 'not asked yet';
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const attempt = () => {
    timer = undefined;
    options.fetch().then(
      (learnt) => {
        if (closed) return;
        version = learnt;
        log.info(
          {
            kubernetesVersion: formatVersion(learnt),
            sidecarContainersGate: sidecarGate,
            nativeSidecars: hasNativeSidecars(learnt, sidecarGate),
          },
          'kubernetes version learnt',
        );
      },
      (err: unknown) => {
        if (closed) return;
        failures += 1;
        why = err instanceof Error ? err.message : String(err);
        const retryInMs = retryDelay(backoff, failures);
        log.warn(
          { err: why, attempt: failures, retryInMs },
          'kubernetes version not known: the companion goes first, not as a native sidecar, until it is',
        );
        timer = setTimeout(attempt, retryInMs);
        // Asking again is no reason to keep the process alive.
        timer.unref();
      },
    );
  };
  attempt();

  return {
    knowledge: () =>
      version === undefined ? { state: 'unknown', why } : { state: 'known', version, sidecarGate },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
