// Whether a pod is sealed, decided from what init saw of the node agent's proof connection: sealed only when
// it arrived, carried our nonce and came from the seal source. Every other outcome keeps today's open bypass,
// with the reason a user reads in init's log, the pod's event and analyze.

import { SEAL_SOURCES } from './sources.js';

/** What init saw while it waited for the agent. */
export type ProofObservation =
  | { arrived: true; from: string; nonceMatched: boolean }
  | { arrived: false; agentAnswer: string };

export type SealVerdict = { sealed: true; source: string } | { sealed: false; why: string };

/** `::ffff:169.254.7.127` (a dual-stack socket's IPv4 caller) as `169.254.7.127`. */
export function plainAddress(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export function isSealSource(address: string | undefined): boolean {
  if (address === undefined) return false;
  const plain = plainAddress(address).toLowerCase();
  return plain === SEAL_SOURCES.v4 || plain === SEAL_SOURCES.v6;
}

export function sealVerdict(seen: ProofObservation): SealVerdict {
  if (!seen.arrived) {
    return { sealed: false, why: `no proof connection from the node agent: ${seen.agentAnswer}` };
  }
  const from = plainAddress(seen.from);
  if (!seen.nonceMatched) {
    return { sealed: false, why: `a connection from ${from} arrived without this run's nonce` };
  }
  if (!isSealSource(from)) {
    return {
      sealed: false,
      why:
        `the node agent's connection arrived from ${from}, not from ${SEAL_SOURCES.v4} or ${SEAL_SOURCES.v6}: ` +
        "this node's host-to-pod traffic bypasses the agent's SNAT (a CNI that skips the host's iptables?)",
    };
  }
  return { sealed: true, source: from };
}

/** One line for the log, the termination message and the event. */
export function describeVerdict(verdict: SealVerdict): string {
  return verdict.sealed
    ? `sealed: 15901-15904 bypass the mesh only from ${SEAL_SOURCES.v4} and ${SEAL_SOURCES.v6}, the node agent's source (its proof connection came from ${verdict.source})`
    : `open: 15901-15904 bypass the mesh from every source, as without the node agent, because ${verdict.why}`;
}
