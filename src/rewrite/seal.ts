// The seal setting (inject --seal, the webhook's --seal): `node` makes our init container prove the seal
// through the node agent and the companion read the verdict (docs/security.md#sealed-pods-only-kubelet-gets-in);
// `off`, the default, writes exactly what earlier releases wrote. Pure: our two containers and the pod's
// volumes in, the sealed ones out.

import { SEAL_DIR, SEAL_FILE, SEAL_FILE_ENV } from '../seal/record.js';
import type { Container, PodSpec } from './types.js';

/** The volume init writes its verdict into and the companion reads it from. */
export const SEAL_VOLUME = 'osm-healthcheck-seal';
const HOST_IP_ENV = 'OSM_HEALTHCHECK_HOST_IP';

/** init asks the agent on the node's address; kubelet expands `$(VAR)` in args from the container's env. */
export function sealingInit(init: Container): Container {
  return {
    ...init,
    args: ['init', `--seal-via=$(${HOST_IP_ENV})`],
    env: [{ name: HOST_IP_ENV, valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }],
    volumeMounts: [{ name: SEAL_VOLUME, mountPath: SEAL_DIR }],
  };
}

/** The companion reads init's verdict at start: sealed, it answers only the seal source and loopback. */
export function sealReadingCompanion(companion: Container): Container {
  return {
    ...companion,
    env: [...(companion.env ?? []), { name: SEAL_FILE_ENV, value: SEAL_FILE }],
    volumeMounts: [{ name: SEAL_VOLUME, mountPath: SEAL_DIR, readOnly: true }],
  };
}

/**
 * The pod's volumes with ours (a small in-memory emptyDir), added once. Never removed when the setting goes
 * off: an earlier copy of our containers may still mount it until they are replaced.
 */
export function withSealVolume(spec: PodSpec): PodSpec {
  const volumes = Array.isArray(spec.volumes) ? (spec.volumes as { name?: unknown }[]) : [];
  if (volumes.some((volume) => volume.name === SEAL_VOLUME)) return spec;
  return {
    ...spec,
    volumes: [...volumes, { name: SEAL_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }],
  };
}
