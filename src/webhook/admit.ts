// One admission decision: an AdmissionRequest in, the response and a summary for the log out. Pure: the pod
// goes through the same rewritePodSpec as `inject`, and the patch is the difference between before and after.
// Our own failure never blocks a pod: it answers allowed, without a patch, with a warning that says why.

import { ManifestError } from '../rewrite/manifest-error.js';
import { withAnnotations } from '../rewrite/metadata.js';
import { isOptedOut, rewritePodSpec } from '../rewrite/pod.js';
import type { PodSpec, RewriteOptions, RewriteResult } from '../rewrite/types.js';
import { podTemplates } from '../rewrite/workload.js';
import { OPT_OUT_ANNOTATION, PROBE_KINDS } from '../scheme.js';
import type { ProbeTableDocument } from '../table/types.js';
import { jsonPatch } from './json-patch.js';
import { type AdmissionRequest, type AdmissionResponse, isPod } from './review.js';

/** Prefixes every warning, so `kubectl` users know which webhook said it. */
export const WARNING_PREFIX = 'osm-healthcheck: ';

export interface Admission {
  response: AdmissionResponse;
  /** For the log line. */
  summary: {
    /** The pod's name, or its generateName followed by `*` (pods of a workload have no name yet). */
    pod?: string;
    result: 'patched' | 'unchanged' | 'skipped' | 'failed';
    /** What changed (`liveness/app` per probe the companion answers, patch size) or why nothing did. */
    changed: string;
    patchOperations: number;
  };
  /** The error behind `result: 'failed'`: a ManifestError for a pod we cannot read, else a bug of ours. */
  error?: unknown;
}

export function admit(request: AdmissionRequest, options: RewriteOptions): Admission {
  const { uid } = request;
  const skipped = (changed: string, pod?: string): Admission => ({
    response: { uid, allowed: true },
    summary: { ...(pod === undefined ? {} : { pod }), result: 'skipped', changed, patchOperations: 0 },
  });
  const { kind } = request;
  if (!isPod(kind)) return skipped(`not a Pod: ${kind.group || 'core'}/${kind.version} ${kind.kind}`);
  if (request.subResource !== undefined) return skipped(`subresource ${request.subResource}`);
  if (request.operation !== 'CREATE') return skipped(`operation ${request.operation}`);

  const object = request.object as Record<string, unknown>;
  const name = podName(object);
  try {
    // The kind table inject uses, so the annotations and the resource name are read the same way.
    const template = podTemplates({ ...object, apiVersion: 'v1', kind: 'Pod' })[0];
    if (template === undefined) throw new Error('a Pod without a pod template');
    if (isOptedOut(template.annotations)) return skipped(`opted out (${OPT_OUT_ANNOTATION}: "false")`, name);
    const spec = object.spec as PodSpec;
    let result: RewriteResult;
    try {
      result = rewritePodSpec(spec, template.annotations, options, template.resource);
    } catch (err) {
      // The pure rewrite names fields from the pod spec; the API user reads them from the pod.
      if (!(err instanceof ManifestError)) throw err;
      throw new ManifestError(err.resource, ['spec', ...err.path], err.problem, { cause: err });
    }
    const warnings = result.warnings.map((warning) => `${WARNING_PREFIX}${warning}`);
    const ops = result.changed ? jsonPatch(object, patchedPod(object, result, template.resource)) : [];
    const response: AdmissionResponse = { uid, allowed: true };
    if (ops.length > 0) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
    }
    if (warnings.length > 0) response.warnings = warnings;
    const changed =
      ops.length > 0
        ? `companion answers ${answered(result.table).join(', ')}; ${ops.length} patch operations`
        : 'nothing to change';
    return {
      response,
      summary: {
        pod: name,
        result: ops.length > 0 ? 'patched' : 'unchanged',
        changed,
        patchOperations: ops.length,
      },
    };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const reason = `probes not rewritten: ${why.replaceAll(/\s+/g, ' ')}`;
    return {
      response: { uid, allowed: true, warnings: [`${WARNING_PREFIX}${reason}`] },
      summary: { pod: name, result: 'failed', changed: reason, patchOperations: 0 },
      error: err,
    };
  }
}

/** The pod as inject writes it. jsonPatch adds `/metadata/annotations` whole where the pod has none yet. */
function patchedPod(pod: Record<string, unknown>, result: RewriteResult, resource: string): unknown {
  if (Object.keys(result.annotations).length === 0) return { ...pod, spec: result.spec };
  const metadata = withAnnotations(pod.metadata, result.annotations, resource, ['metadata']);
  return { ...pod, metadata, spec: result.spec };
}

/** `liveness/app` for every entry of the table. */
function answered(table: ProbeTableDocument): string[] {
  return PROBE_KINDS.flatMap((kind) =>
    Object.keys(table[kind] ?? {}).map((container) => `${kind}/${container}`),
  );
}

function podName(pod: Record<string, unknown>): string | undefined {
  const metadata = pod.metadata as Record<string, unknown> | undefined;
  if (typeof metadata?.name === 'string' && metadata.name !== '') return metadata.name;
  if (typeof metadata?.generateName === 'string' && metadata.generateName !== '')
    return `${metadata.generateName}*`;
  return undefined;
}
