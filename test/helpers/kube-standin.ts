// A stand-in Kubernetes API server for self-managed TLS, on loopback over real TLS (a test CA), behaving like the real
// one where the webhook depends on it: the bearer token read from its file at every request (so a rotated token
// works and the old one stops working), Secrets and MutatingWebhookConfigurations stored with a resourceVersion
// (409 Conflict on a stale update, 409 AlreadyExists on a second create, 404 NotFound), the webhook's RBAC enforced
// with the real authoriser's 403 Status and message, namespaces, LimitRanges, ResourceQuotas and nodes served to a
// list and watch (kube-objects.ts), and hooks to break it: refuse or hang every connection, or edit an object behind the webhook's back.

import { readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import type { Collection } from './kube-collection.js';
import type { NamespaceStore } from './kube-namespaces.js';
import { clusterObjects, watchedResource } from './kube-objects.js';
import { forbidden, type Rbac, status, type Verb } from './kube-rbac.js';
import { startLoopbackHttps } from './loopback-https.js';

// biome-ignore lint/suspicious/noExplicitAny: stored objects are JSON as the API server keeps it
type Json = Record<string, any>;

export type { Rbac } from './kube-rbac.js';

export interface KubeStandin {
  url: string;
  caFile: string;
  tokenFile: string;
  user: string;
  rbac: Rbac;
  secret(name: string, namespace?: string): Json | undefined;
  config(name: string): Json | undefined;
  /** Stores (or deletes, with undefined) an object as `kubectl replace` would: a new resourceVersion. */
  putSecret(name: string, object: Json | undefined, namespace?: string): void;
  putConfig(name: string, object: Json | undefined): void;
  /** Namespaces, for the webhook's Pod Security list and watch. */
  namespaces: NamespaceStore;
  /** LimitRanges, ResourceQuotas and nodes, for the webhook's namespace rules and kubelet versions. */
  limitRanges: Collection;
  resourceQuotas: Collection;
  nodes: Collection;
  /** Every request the webhook made, authorised or not: `get secrets tls 200`. */
  log: string[];
  /** 'refuse': every connection is reset; 'hang': accepted, never answered; undefined: serving. */
  outage(mode: 'refuse' | 'hang' | undefined): void;
  /** Holds the answers to the next `count` GETs of any Secret until all have arrived: replicas racing for sure. */
  holdSecretGets(count: number): void;
  /** Writes a new token: from now on only it is accepted. */
  rotateToken(): void;
  close(): Promise<void>;
}

/** A MutatingWebhookConfiguration as deploy/webhook creates it: two entries, empty caBundles. */
/** The environment that points a webhook process at a stand-in API server: its URL, its CA and its token file. */
export function kubeEnv(api: { url: string; caFile: string; tokenFile: string }): NodeJS.ProcessEnv {
  return {
    OSM_HEALTHCHECK_KUBE_API: api.url,
    OSM_HEALTHCHECK_KUBE_CA: api.caFile,
    OSM_HEALTHCHECK_KUBE_TOKEN_FILE: api.tokenFile,
  };
}

export function webhookConfiguration(name: string, namespace: string, service: string): Json {
  const entry = (hook: string) => ({
    name: hook,
    clientConfig: { service: { name: service, namespace, path: '/mutate', port: 443 } },
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
  });
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name },
    webhooks: [entry('pods.osm-healthcheck.flomesh.io'), entry('more.osm-healthcheck.flomesh.io')],
  };
}

const SECRETS = /^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/?]+))?$/;
const CONFIGS = /^\/apis\/admissionregistration\.k8s\.io\/v1\/mutatingwebhookconfigurations\/([^/?]+)$/;

/** The RBAC for a test of the cluster caches, which never looks at the webhook's TLS Secret or configuration. */
export const CACHES_ONLY: Omit<Rbac, 'denied'> = {
  namespace: 'osm-healthcheck',
  secretName: 'tls',
  webhookConfig: 'hook',
};

export async function startKubeStandin(rbac: Omit<Rbac, 'denied'>): Promise<KubeStandin> {
  let tokenFile = '';
  let generation = 1;
  const user = `system:serviceaccount:${rbac.namespace}:osm-healthcheck-webhook`;
  const policy: Rbac = { ...rbac, denied: new Set() };
  const secrets = new Map<string, Json>();
  const configs = new Map<string, Json>();
  let resourceVersion = 100;
  let outage: 'refuse' | 'hang' | undefined;
  const log: string[] = [];
  const cluster = clusterObjects();

  const stamp = (object: Json): Json => {
    resourceVersion += 1;
    return {
      ...object,
      metadata: {
        ...object.metadata,
        resourceVersion: String(resourceVersion),
        uid: object.metadata?.uid ?? `uid-${resourceVersion}`,
      },
    };
  };

  function handle(req: IncomingMessage, res: ServerResponse, body: string): true {
    const token = readFileSync(tokenFile, 'utf8').trim();
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    const verb: Verb =
      method === 'POST' ? 'create' : method === 'PUT' ? 'update' : method === 'PATCH' ? 'patch' : 'get';
    const secretPath = SECRETS.exec(path);
    const configPath = CONFIGS.exec(path);
    const resource = secretPath ? 'secrets' : configPath ? 'mutatingwebhookconfigurations' : path;
    const name = secretPath ? secretPath[2] : configPath?.[1];
    const done = (code: number): void => {
      log.push(`${verb} ${resource}${name === undefined ? '' : ` ${name}`} ${code}`);
    };
    const fail = (code: number, reason: string, message: string): true => {
      done(code);
      status(res, code, reason, message);
      return true;
    };
    if (req.headers.authorization !== `Bearer ${token}`) {
      return fail(401, 'Unauthorized', 'Unauthorized');
    }
    if (path === '/version') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"major":"1","minor":"30","gitVersion":"v1.30.2"}');
      return true;
    }
    const watched = watchedResource(path);
    if (watched !== undefined) {
      const query = new URL(req.url ?? '/', 'https://x').searchParams.get('watch');
      const listVerb: Verb = query === '1' || query === 'true' ? 'watch' : 'list';
      const refused = forbidden(policy, user, listVerb, watched, undefined);
      log.push(`${listVerb} ${watched} ${refused === undefined ? 200 : 403}`);
      if (refused !== undefined) {
        status(res, 403, 'Forbidden', refused);
        return true;
      }
      cluster.handle(req, res);
      return true;
    }
    if (!secretPath && !configPath) {
      return fail(404, 'NotFound', 'the server could not find the requested resource');
    }
    const namespace = secretPath?.[1];
    const denied = forbidden(
      policy,
      user,
      verb,
      secretPath ? 'secrets' : 'mutatingwebhookconfigurations',
      verb === 'create' ? undefined : name,
      namespace,
    );
    if (denied !== undefined) {
      return fail(403, 'Forbidden', denied);
    }
    const store = secretPath ? secrets : configs;
    const kind = secretPath ? 'secrets' : 'mutatingwebhookconfigurations.admissionregistration.k8s.io';
    const send = (code: number, object: Json): true => {
      done(code);
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(object));
      return true;
    };
    let object: Json = {};
    if (body !== '') object = JSON.parse(body) as Json;
    const objectName = verb === 'create' ? object.metadata?.name : name;
    const key = `${namespace ?? ''}/${objectName}`;
    const existing = store.get(key);
    if (verb === 'get') {
      if (existing === undefined) {
        return fail(404, 'NotFound', `${kind} "${name}" not found`);
      }
      return send(200, existing);
    }
    if (verb === 'create') {
      if (existing !== undefined) {
        return fail(409, 'AlreadyExists', `${kind} "${objectName}" already exists`);
      }
      const created = stamp({ ...object, metadata: { ...object.metadata, namespace } });
      store.set(key, created);
      return send(201, created);
    }
    if (verb === 'update') {
      if (existing === undefined) {
        return fail(404, 'NotFound', `${kind} "${name}" not found`);
      }
      const given = object.metadata?.resourceVersion;
      if (given !== undefined && given !== existing.metadata.resourceVersion) {
        return fail(
          409,
          'Conflict',
          `Operation cannot be fulfilled on ${kind} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      }
      const updated = stamp({
        ...object,
        metadata: {
          ...object.metadata,
          uid: existing.metadata.uid,
          ...(namespace === undefined ? {} : { namespace }),
        },
      });
      store.set(key, updated);
      return send(200, updated);
    }
    return fail(405, 'MethodNotAllowed', `${verb} is not served here`);
  }

  let held: { count: number; waiting: Array<() => void> } | undefined;
  const https = await startLoopbackHttps(
    (req, res) => {
      if (outage === 'hang') return;
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        const answer = () => handle(req, res, body);
        if (held === undefined || req.method !== 'GET' || !SECRETS.test(req.url ?? '')) return void answer();
        held.waiting.push(answer);
        if (held.waiting.length < held.count) return;
        const { waiting } = held;
        held = undefined;
        for (const release of waiting) release();
      });
    },
    () => outage !== 'refuse',
  );
  tokenFile = join(dirname(https.cert.certFile), 'token');
  writeFileSync(tokenFile, `token-${generation}\n`);
  const put = (store: Map<string, Json>, key: string, object: Json | undefined) => {
    if (object === undefined) store.delete(key);
    else store.set(key, stamp(object));
  };
  return {
    url: https.url,
    caFile: https.cert.certFile,
    tokenFile,
    user,
    rbac: policy,
    secret: (name, namespace = rbac.namespace) => secrets.get(`${namespace}/${name}`),
    config: (name) => configs.get(`/${name}`),
    putSecret: (name, object, namespace = rbac.namespace) => put(secrets, `${namespace}/${name}`, object),
    putConfig: (name, object) => put(configs, `/${name}`, object),
    namespaces: cluster.namespaces,
    limitRanges: cluster.limitRanges,
    resourceQuotas: cluster.resourceQuotas,
    nodes: cluster.nodes,
    log,
    outage(mode) {
      outage = mode;
      if (mode !== undefined) for (const socket of https.sockets) socket.destroy();
    },
    holdSecretGets(count) {
      held = { count, waiting: [] };
    },
    rotateToken() {
      generation += 1;
      writeFileSync(tokenFile, `token-${generation}\n`);
    },
    close: async () => {
      cluster.endWatches();
      await https.close();
    },
  };
}
