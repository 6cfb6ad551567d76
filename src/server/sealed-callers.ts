// Which callers a sealed companion answers: the node agent's seal source (kubelet's probes, SNATed on the node)
// and loopback (`kubectl exec ... check --via-companion`, the postStart `wait`). Defense in depth behind the pod's
// sealed bypass, which already sends every other caller to the mesh (docs/security.md#sealed-pods-only-kubelet-gets-in).

import { isSealSource, plainAddress } from '../seal/verdict.js';

/** Whether a connection from `remoteAddress` is one a sealed companion answers; an unknown address is not. */
export function sealedAdmits(remoteAddress: string | undefined): boolean {
  if (remoteAddress === undefined) return false;
  const plain = plainAddress(remoteAddress);
  return isSealSource(plain) || plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}
