// The seal setting inject and the webhook take (--seal): `node` seals where the node agent proves it can,
// `off` (the default) changes nothing in a pod (docs/security.md#sealed-pods-only-kubelet-gets-in).

export const SEAL_MODES = ['off', 'node'] as const;
export type SealMode = (typeof SEAL_MODES)[number];
