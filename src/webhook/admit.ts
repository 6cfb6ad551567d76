// One admission decision: an AdmissionRequest in, the response and a summary for the log out. Pure: the pod
// goes through the same rewritePodSpec as `inject`, and the patch is the difference between before and after.
// Every warning inject would print for the pod goes into the response, which kubectl prints. A workload (a Job,
// a CronJob, a Deployment...) gets those warnings and no patch: its pods are patched as they are created, by
// the controller, whose warnings nobody reads; the person running `kubectl apply` sees the workload's.
// Our own failure never blocks a pod: it answers allowed, without a patch, with a warning that says why.

import { AnnotationError, ManifestError } from '../rewrite/manifest-error.js';
import { withAnnotations } from '../rewrite/metadata.js';
import { isOptedOut, rewritePodSpec } from '../rewrite/pod.js';
import type { PodSpec, RewriteOptions, RewriteResult } from '../rewrite/types.js';
import { type PodTemplateRef, podTemplates } from '../rewrite/workload.js';
import { OPT_OUT_ANNOTATION, PROBE_KINDS } from '../scheme.js';
import type { ProbeTableDocument } from '../table/types.js';
import {
  type AdmissionOutcome,
  failedWith,
  podOutcome,
  type UntouchedReason,
  untouched,
} from './admission-outcome.js';
import { jsonPatch } from './json-patch.js';
import { type AdmissionRequest, type AdmissionResponse, isPod } from './review.js';
import { admissionWarnings } from './warnings.js';

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
    /** Where the companion went (pods with probes for it to answer), and why. */
    companion?: 'native sidecar' | 'first container' | 'untouched';
    placement?: string;
    /** Every warning, before the response's were shortened and counted to the API server's limits. */
    warnings?: string[];
  };
  /** For the metrics: injected, untouched and why, or an error (admission-outcome.ts). */
  outcome: AdmissionOutcome;
  /** The error behind `result: 'failed'`: a ManifestError for a pod we cannot read, else a bug of ours. */
  error?: unknown;
}

const COMPANION_WORDS = {
  'native-sidecar': 'native sidecar',
  first: 'first container',
  untouched: 'untouched',
} as const;

export function admit(request: AdmissionRequest, options: RewriteOptions): Admission {
  const { uid } = request;
  const skipped = (changed: string, reason: UntouchedReason, pod?: string): Admission => ({
    response: { uid, allowed: true },
    summary: { ...(pod === undefined ? {} : { pod }), result: 'skipped', changed, patchOperations: 0 },
    outcome: untouched(reason),
  });
  const { kind } = request;
  if (request.subResource !== undefined) return skipped(`subresource ${request.subResource}`, 'not_a_pod');
  if (!isPod(kind)) {
    return admitWorkload(request, options) ?? skipped(`not a Pod: ${describeKind(request)}`, 'not_a_pod');
  }
  if (request.operation !== 'CREATE') return skipped(`operation ${request.operation}`, 'not_a_pod');

  const object = request.object as Record<string, unknown>;
  const name = podName(object);
  try {
    // The kind table inject uses, so the annotations and the resource name are read the same way.
    const template = podTemplates({ ...object, apiVersion: 'v1', kind: 'Pod' })[0];
    if (template === undefined) throw new Error('a Pod without a pod template');
    if (isOptedOut(template.annotations)) {
      return skipped(`opted out (${OPT_OUT_ANNOTATION}: "false")`, 'opted_out', name);
    }
    const result = rewrite(object, template, options);
    const all = warningsOf(result, options);
    const ops = result.changed ? jsonPatch(object, patchedPod(object, result, template.resource)) : [];
    const response: AdmissionResponse = { uid, allowed: true };
    if (ops.length > 0) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
    }
    const warnings = admissionWarnings(all, WARNING_PREFIX);
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
        ...(result.placement === undefined
          ? {}
          : { companion: COMPANION_WORDS[result.placement.companion], placement: result.placement.reason }),
        ...(all.length > 0 ? { warnings: all } : {}),
      },
      outcome: podOutcome(result.placement, ops.length > 0, answered(result.table).length > 0, options),
    };
  } catch (err) {
    return failed(uid, name, err);
  }
}

/** A workload inject knows (Job, CronJob, Deployment...): the warnings its pods will get, no patch. */
function admitWorkload(request: AdmissionRequest, options: RewriteOptions): Admission | undefined {
  const { uid, kind } = request;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return undefined;
  const object = request.object;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return undefined;
  const apiVersion = kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
  const typed = { ...(object as Record<string, unknown>), apiVersion, kind: kind.kind };
  const name = podName(typed);
  try {
    const templates = podTemplates(typed);
    if (templates.length === 0) return undefined;
    const all = templates.flatMap((template) =>
      isOptedOut(template.annotations) ? [] : warningsOf(rewrite(typed, template, options), options),
    );
    const warnings = admissionWarnings(all, WARNING_PREFIX);
    return {
      response: { uid, allowed: true, ...(warnings.length > 0 ? { warnings } : {}) },
      summary: {
        ...(name === undefined ? {} : { pod: name }),
        result: 'unchanged',
        changed: `${kind.kind}: warnings only, its pods are patched as they are created`,
        patchOperations: 0,
        ...(all.length > 0 ? { warnings: all } : {}),
      },
      outcome: untouched('workload'),
    };
  } catch (err) {
    return failed(uid, name, err);
  }
}

/** rewritePodSpec on the template's spec, errors naming fields from the admitted object's root. */
function rewrite(
  object: Record<string, unknown>,
  template: PodTemplateRef,
  options: RewriteOptions,
): RewriteResult {
  const spec = template.specPath.reduce<unknown>(
    (node, key) => (node as Record<string, unknown>)[key],
    object,
  ) as PodSpec;
  try {
    return rewritePodSpec(spec, template.annotations, options, template.resource);
  } catch (err) {
    // The pure rewrite names fields from the pod spec; the API user reads them from the object.
    if (!(err instanceof ManifestError)) throw err;
    // An annotation sits in the template's metadata, beside its spec: no path from the spec reaches it.
    const path =
      err instanceof AnnotationError
        ? [...template.specPath.slice(0, -1), 'metadata', 'annotations', err.annotation]
        : [...template.specPath, ...err.path];
    throw new ManifestError(err.resource, path, err instanceof AnnotationError ? err.reason : err.problem, {
      cause: err,
    });
  }
}

/**
 * What inject prints for this pod: the rewrite's warnings, and the placement line when a native sidecar was
 * asked for (--placement native-sidecar) and not granted (inject prints that line once for the run, as a warning).
 */
function warningsOf(result: RewriteResult, options: RewriteOptions): string[] {
  const notGranted = options.placement === 'native-sidecar' && result.placement?.companion === 'first';
  return notGranted && result.placement !== undefined
    ? [...result.warnings, result.placement.reason]
    : result.warnings;
}

function failed(uid: string, name: string | undefined, err: unknown): Admission {
  const why = err instanceof Error ? err.message : String(err);
  const reason = `probes not rewritten: ${why.replaceAll(/\s+/g, ' ')}`;
  return {
    response: { uid, allowed: true, warnings: admissionWarnings([reason], WARNING_PREFIX) },
    summary: {
      ...(name === undefined ? {} : { pod: name }),
      result: 'failed',
      changed: reason,
      patchOperations: 0,
    },
    outcome: failedWith(err instanceof ManifestError ? 'invalid_pod' : 'internal'),
    error: err,
  };
}

function describeKind(request: AdmissionRequest): string {
  const { kind } = request;
  return `${kind.group || 'core'}/${kind.version} ${kind.kind}`;
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
