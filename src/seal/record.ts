// The seal file: init's verdict, written into the volume it shares with the companion, read by serve at start
// so that a sealed companion answers only the seal source and loopback. One line of JSON; anything else reads
// as open, since a companion that refused kubelet would fail every probe.

import { isObject, type Json } from '../json.js';
import type { SealVerdict } from './verdict.js';

/** Where inject mounts the shared volume in init (read-write) and the companion (read-only). */
export const SEAL_DIR = '/run/osm-healthcheck';
export const SEAL_FILE = `${SEAL_DIR}/seal`;
export const SEAL_FILE_ENV = 'OSM_HEALTHCHECK_SEAL_FILE';

export function formatSealRecord(verdict: SealVerdict): string {
  const record: Json = verdict.sealed
    ? { sealed: true, source: verdict.source }
    : { sealed: false, why: verdict.why };
  return `${JSON.stringify(record)}\n`;
}

/** The verdict a seal file holds; `{ sealed: false }` with why it was not read as sealed otherwise. */
export function parseSealRecord(text: string): SealVerdict {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { sealed: false, why: 'the seal file is not JSON' };
  }
  if (!isObject(value)) return { sealed: false, why: 'the seal file is not a JSON object' };
  if (value.sealed === true && typeof value.source === 'string')
    return { sealed: true, source: value.source };
  return { sealed: false, why: typeof value.why === 'string' ? value.why : 'the seal file says open' };
}
