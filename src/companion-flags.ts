// The flags inject and webhook both take about the companion (--placement and its alias --native-sidecar,
// --companion-cpu-limit, --image), read by the same pure readers and refused in the same words.

import { badFlagValue, flagValue } from './flags.js';
import { PLACEMENT_MODES, type PlacementMode, placementFlags } from './rewrite/placement.js';
import { readCompanionCpuLimit } from './rewrite/resources/defaults.js';
import { SEAL_MODES, type SealMode } from './seal/setting.js';

/**
 * --placement, else its alias --native-sidecar, else auto; the two saying different things is an error. `field`
 * (here and below) names where the value came from in that error: the flag, or `env NAME` (the webhook).
 */
export function placementOf(
  placement: string | undefined,
  nativeSidecar: boolean,
  field = '--placement',
): PlacementMode {
  const accepted = `--placement ${PLACEMENT_MODES.join(', ')}, or --native-sidecar alone`;
  return flagValue(placementFlags(placement, nativeSidecar, field), '', accepted).mode;
}

/** --companion-cpu-limit in the API server's stored form (`0.5` -> `500m`); empty is none (the chart's default). */
export function cpuLimitOf(text: string | undefined, field = '--companion-cpu-limit'): string | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const accepted = 'a CPU quantity above 0, e.g. 500m or 0.5';
  return flagValue(readCompanionCpuLimit(text), `${field} `, accepted).value;
}

/** --seal off|node (default off: nothing changes in a pod until the node agent runs on its nodes). */
export function sealOf(text: string | undefined, field = '--seal'): SealMode {
  if (text === undefined) return 'off';
  if ((SEAL_MODES as readonly string[]).includes(text)) return text as SealMode;
  throw badFlagValue(field, text, SEAL_MODES.join(', '));
}

/** --image: an image reference, which has no spaces. */
export function imageOf(image: string, field = '--image'): string {
  if (image === '' || /\s/.test(image)) throw badFlagValue(field, image, 'an image reference without spaces');
  return image;
}
