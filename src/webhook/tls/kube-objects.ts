// The five calls self-managed TLS makes, exactly the verbs the webhook's RBAC grants: get/create/update its Secret,
// get/update its MutatingWebhookConfiguration. A refusal is a value whose message names verb, resource, status and
// the API server's own message (a 403 then says which permission is missing).

import { inClusterClient, type KubeApi } from '../../kube/api/in-cluster.js';
import type { Reply } from '../../kube/api/reply.js';
import type { WebhookConfiguration } from './ca-bundle.js';
import type { KubeSecret } from './secret.js';

async function call<T>(
  api: KubeApi,
  verb: 'get' | 'create' | 'update',
  target: string,
  path: string,
  body?: unknown,
): Promise<Reply<T>> {
  const client = inClusterClient(api);
  const sent =
    verb === 'get' ? client.get(path) : verb === 'create' ? client.post(path, body) : client.put(path, body);
  const reply = await sent.catch((err: Error) => {
    throw new Error(`${verb} ${target}: ${err.message}`, { cause: err });
  });
  if (reply.ok) return reply as Reply<T>;
  return { ...reply, message: `${verb} ${target}: ${reply.status} ${reply.reason}: ${reply.message}` };
}

const enc = encodeURIComponent;
const secretsPath = (namespace: string) => `/api/v1/namespaces/${enc(namespace)}/secrets`;
const secretTarget = (namespace: string, name: string) => `secrets "${name}" in namespace "${namespace}"`;
const CONFIGS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const configTarget = (name: string) => `mutatingwebhookconfigurations "${name}"`;

export function getSecret(api: KubeApi, namespace: string, name: string): Promise<Reply<KubeSecret>> {
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

export function getWebhookConfig(api: KubeApi, name: string): Promise<Reply<WebhookConfiguration>> {
  return call(api, 'get', configTarget(name), `${CONFIGS}/${enc(name)}`);
}

export function updateWebhookConfig(api: KubeApi, config: WebhookConfiguration) {
  const { name } = config.metadata;
  return call<WebhookConfiguration>(api, 'update', configTarget(name), `${CONFIGS}/${enc(name)}`, config);
}
