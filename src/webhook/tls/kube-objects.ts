// The five calls self-managed TLS makes, exactly the verbs the webhook's RBAC grants: get/create/update its Secret,
// get/update its MutatingWebhookConfiguration. An answer other than success is a value naming verb, resource,
// status and the API server's own message (a 403 then says which permission is missing).

import { type KubeApi, kubeRequest } from '../kube-api.js';
import type { WebhookConfiguration } from './ca-bundle.js';
import type { KubeSecret } from './secret.js';

export interface KubeFailure {
  status: number;
  /** The Status reason: NotFound, AlreadyExists, Conflict, Forbidden, Unauthorized, ... */
  reason: string;
  /** `get secrets "tls" in namespace "ns": 403 Forbidden: <the API server's message>` */
  message: string;
}

export type KubeResult<T> = { ok: true; value: T } | { ok: false; failure: KubeFailure };

const TIMEOUT_MS = 10_000;

function statusOf(text: string): { reason?: string; message?: string } {
  try {
    const parsed = JSON.parse(text) as { kind?: unknown; reason?: unknown; message?: unknown };
    return {
      ...(typeof parsed.reason === 'string' ? { reason: parsed.reason } : {}),
      ...(typeof parsed.message === 'string' ? { message: parsed.message } : {}),
    };
  } catch {
    return {};
  }
}

async function call<T>(
  api: KubeApi,
  verb: 'get' | 'create' | 'update',
  target: string,
  path: string,
  body?: unknown,
): Promise<KubeResult<T>> {
  const method = verb === 'get' ? 'GET' : verb === 'create' ? 'POST' : 'PUT';
  const answer = await kubeRequest(api, method, path, api.timeoutMs ?? TIMEOUT_MS, body).catch(
    (err: Error) => {
      throw new Error(`${verb} ${target}: ${err.message}`, { cause: err });
    },
  );
  if (answer.status >= 200 && answer.status < 300) {
    try {
      return { ok: true, value: JSON.parse(answer.text) as T };
    } catch (err) {
      throw new Error(`${verb} ${target}: the answer is not JSON: ${(err as Error).message}`);
    }
  }
  const status = statusOf(answer.text);
  const reason = status.reason ?? `HTTP ${answer.status}`;
  const detail = status.message ?? answer.text.split('\n')[0]?.slice(0, 200) ?? '';
  return {
    ok: false,
    failure: {
      status: answer.status,
      reason,
      message: `${verb} ${target}: ${answer.status} ${reason}: ${detail}`,
    },
  };
}

const enc = encodeURIComponent;
const secretsPath = (namespace: string) => `/api/v1/namespaces/${enc(namespace)}/secrets`;
const secretTarget = (namespace: string, name: string) => `secrets "${name}" in namespace "${namespace}"`;
const CONFIGS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const configTarget = (name: string) => `mutatingwebhookconfigurations "${name}"`;

export function getSecret(api: KubeApi, namespace: string, name: string): Promise<KubeResult<KubeSecret>> {
  return call(api, 'get', secretTarget(namespace, name), `${secretsPath(namespace)}/${enc(name)}`);
}

export function createSecret(api: KubeApi, secret: KubeSecret & { metadata: { namespace: string } }) {
  const { namespace, name } = secret.metadata;
  return call<KubeSecret>(api, 'create', secretTarget(namespace, name), secretsPath(namespace), secret);
}

/** Fails with 409 Conflict when the Secret changed since `secret.metadata.resourceVersion` was read. */
export function updateSecret(api: KubeApi, secret: KubeSecret & { metadata: { namespace: string } }) {
  const { namespace, name } = secret.metadata;
  const path = `${secretsPath(namespace)}/${enc(name)}`;
  return call<KubeSecret>(api, 'update', secretTarget(namespace, name), path, secret);
}

export function getWebhookConfig(api: KubeApi, name: string): Promise<KubeResult<WebhookConfiguration>> {
  return call(api, 'get', configTarget(name), `${CONFIGS}/${enc(name)}`);
}

export function updateWebhookConfig(api: KubeApi, config: WebhookConfiguration) {
  const { name } = config.metadata;
  return call<WebhookConfiguration>(api, 'update', configTarget(name), `${CONFIGS}/${enc(name)}`, config);
}
