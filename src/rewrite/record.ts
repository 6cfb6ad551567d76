// The record on every pod (template) the rewrite gives the companion, `osm-healthcheck/status`, as Istio writes
// `sidecar.istio.io/status`: which version injected it, with which image, where the companion went, how
// 15901-15904 get past the mesh, and a digest of the probe table. `analyze` reads it to tell a pod of this release
// from one an older release injected (docs/analyze.md). One short line of JSON with a fixed key order, a pure
// function of the rewrite's own result, so inject twice and reinvocation write the same bytes again.

import { createHash } from 'node:crypto';
import pkg from '../../package.json' with { type: 'json' };
import { describeValue } from '../errors.js';

export const RECORD_ANNOTATION = 'osm-healthcheck/status';

/**
 * How kubelet's probes get past the mesh (interception.ts): our init container, or that mesh's own exclusion (its
 * annotation, or what its init step was given).
 */
export type RecordedBypass = 'init-container' | `mesh:${string}`;

export interface InjectionRecord {
  /** The release that wrote it (package.json). */
  version: string;
  /** The companion's image. */
  image: string;
  placement: 'native-sidecar' | 'first';
  bypass: RecordedBypass;
  /** `sha256:` and the first 16 hex digits of the probe table's JSON as the companion's env holds it. */
  probes: string;
  /**
   * `node`: the pod asks the node agent to seal it (rewrite/seal.ts); whether it did is init's verdict, in its
   * termination message. Absent when the setting is off, so such a record is byte for byte an earlier one.
   */
  seal?: 'node';
}

/** The version this build writes into records: the release of the package. */
export const RECORD_VERSION: string = pkg.version;

export function tableDigest(tableJson: string): string {
  return `sha256:${createHash('sha256').update(tableJson).digest('hex').slice(0, 16)}`;
}

/** The annotation's value: the keys in the interface's order, whatever order the caller built them in. */
export function formatRecord(record: InjectionRecord): string {
  const { version, image, placement, bypass, probes, seal } = record;
  return JSON.stringify({
    version,
    image,
    placement,
    bypass,
    probes,
    ...(seal === undefined ? {} : { seal }),
  });
}

/**
 * The record on a pod (template): `absent` on a pod injected before records existed (or never), `invalid` with
 * what is wrong when the value is no record this or an earlier release wrote.
 */
export function readRecord(
  annotations: Readonly<Record<string, unknown>> | undefined,
):
  | { state: 'absent' }
  | { state: 'invalid'; problem: string }
  | { state: 'present'; record: InjectionRecord } {
  const raw = annotations?.[RECORD_ANNOTATION];
  if (raw === undefined) return { state: 'absent' };
  if (typeof raw !== 'string')
    return { state: 'invalid', problem: `must be a string, got ${describeValue(raw)}` };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { state: 'invalid', problem: `is no JSON: ${describeValue(raw.slice(0, 80))}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { state: 'invalid', problem: `must be a JSON object, got ${describeValue(value)}` };
  }
  const fields = value as Record<string, unknown>;
  for (const key of ['version', 'image', 'placement', 'bypass', 'probes'] as const) {
    if (typeof fields[key] !== 'string' || fields[key] === '') {
      return {
        state: 'invalid',
        problem: `${key}: must be a non-empty string, got ${describeValue(fields[key])}`,
      };
    }
  }
  if (fields.seal !== undefined && fields.seal !== 'node') {
    return {
      state: 'invalid',
      problem: `seal: must be "node" when present, got ${describeValue(fields.seal)}`,
    };
  }
  if (fields.placement !== 'native-sidecar' && fields.placement !== 'first') {
    return {
      state: 'invalid',
      problem: `placement: must be "native-sidecar" or "first", got ${describeValue(fields.placement)}`,
    };
  }
  return { state: 'present', record: fields as unknown as InjectionRecord };
}

/** The record to set: none when the pod (template) already carries exactly this value, so a rerun changes nothing. */
export function recordAnnotations(
  record: InjectionRecord,
  annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const value = formatRecord(record);
  return annotations?.[RECORD_ANNOTATION] === value ? {} : { [RECORD_ANNOTATION]: value };
}
