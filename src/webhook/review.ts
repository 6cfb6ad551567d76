// admission.k8s.io/v1 AdmissionReview in and out: validates what the API server sent (pure) and shapes the answer.
// Field names and meanings: k8s.io/api/admission/v1/types.go.

import { describeValue } from '../errors.js';
import { isObject } from '../json.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** The part of AdmissionRequest the webhook reads. */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  operation: (typeof OPERATIONS)[number];
  namespace?: string;
  subResource?: string;
  /** The object being admitted: for a Pod CREATE, the pod, checked to be an object. */
  object?: unknown;
  /** A Pod's spec.nodeName: created bound to a node (DaemonSet pods, static pods), it runs on that kubelet. */
  nodeName?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: true;
  patchType?: 'JSONPatch';
  /** base64 of the RFC 6902 patch. */
  patch?: string;
  /** Shown by kubectl as `Warning: ...`. */
  warnings?: string[];
}

export type ReviewParse = { ok: true; request: AdmissionRequest } | { ok: false; reason: string };

/** describeValue, with long strings cut: a reason must stay one short line whatever was sent. */
function brief(value: unknown): string {
  return typeof value === 'string' && value.length > 64
    ? `${describeValue(value.slice(0, 64))}...`
    : describeValue(value);
}

/** True for the core v1 Pod, the only kind the webhook rewrites. */
export function isPod(kind: GroupVersionKind): boolean {
  return kind.group === '' && kind.version === 'v1' && kind.kind === 'Pod';
}

/** A decoded request body -> the AdmissionRequest, or the reason it is no v1 AdmissionReview (a 400). */
export function parseAdmissionReview(body: unknown): ReviewParse {
  const fail = (reason: string): ReviewParse => ({ ok: false, reason });
  if (!isObject(body)) return fail(`body must be an AdmissionReview object, got ${brief(body)}`);
  if (body.apiVersion !== ADMISSION_API_VERSION) {
    return fail(
      `apiVersion must be "${ADMISSION_API_VERSION}" (admissionReviewVersions: [v1]), got ${brief(body.apiVersion)}`,
    );
  }
  if (body.kind !== 'AdmissionReview') {
    return fail(`kind must be "AdmissionReview", got ${brief(body.kind)}`);
  }
  const { request } = body;
  if (!isObject(request)) return fail(`request must be an object, got ${brief(request)}`);
  const { uid, kind, operation, namespace, subResource, object } = request;
  if (typeof uid !== 'string' || uid === '') {
    return fail(`request.uid must be a non-empty string, got ${brief(uid)}`);
  }
  if (!isObject(kind) || typeof kind.kind !== 'string') {
    return fail(`request.kind must be a group/version/kind object, got ${brief(kind)}`);
  }
  const gvk: GroupVersionKind = {
    group: typeof kind.group === 'string' ? kind.group : '',
    version: typeof kind.version === 'string' ? kind.version : '',
    kind: kind.kind,
  };
  if (!(OPERATIONS as readonly unknown[]).includes(operation)) {
    return fail(`request.operation must be one of ${OPERATIONS.join(', ')}, got ${brief(operation)}`);
  }
  const parsed: AdmissionRequest = {
    uid,
    kind: gvk,
    operation: operation as AdmissionRequest['operation'],
    object,
  };
  if (typeof namespace === 'string' && namespace !== '') parsed.namespace = namespace;
  if (typeof subResource === 'string' && subResource !== '') parsed.subResource = subResource;
  if (isPod(gvk) && parsed.operation === 'CREATE' && parsed.subResource === undefined && !isObject(object)) {
    return fail(`request.object must be the Pod being created, got ${brief(object)}`);
  }
  const spec = isPod(gvk) && isObject(object) ? object.spec : undefined;
  if (isObject(spec) && typeof spec.nodeName === 'string' && spec.nodeName !== '') {
    parsed.nodeName = spec.nodeName;
  }
  return { ok: true, request: parsed };
}

/** The AdmissionReview the API server expects back. */
export function admissionReview(response: AdmissionResponse): {
  apiVersion: string;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
} {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}
