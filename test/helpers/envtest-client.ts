// The few REST calls the envtest suites make to a real API server, with a bearer token: create, get, put, a
// ResourceQuota's status (no quota controller runs), and a server-side dry run of a pod, which runs every
// mutating and validating admission step and stores nothing.

import { type ApiServer, type Method, send } from '../../src/kube/api/transport.js';

type Json = Record<string, unknown>;

export interface KubeReply {
  status: number;
  body: Json;
  /** The `Warning` headers' texts (admission warnings: PodSecurity's, a webhook's). */
  warnings: string[];
}

export type DryRun =
  | { admitted: true; object: Json; warnings: string[] }
  | { admitted: false; message: string; warnings: string[] };

/** Larger than anything a test writes or lists in one request. */
const MAX_BYTES = 64 * 1024 * 1024;

/** The API server at `url`, verified with `ca`, as the user whose token this is. */
export function bearer(url: string, ca: string, token: string): ApiServer {
  return {
    url,
    async authorise(options) {
      options.ca = ca;
      options.agent = false;
      options.headers = { ...options.headers, authorization: `Bearer ${token}` };
    },
  };
}

/** A user of the test's API server, by bearer token; every request goes through src/kube/api's one transport. */
export class KubeClient {
  private readonly server: ApiServer;

  constructor(
    readonly url: string,
    ca: string,
    token: string,
  ) {
    this.server = bearer(url, ca, token);
  }

  /** Any status is a reply; a body that is no JSON object comes back as `{ text }`. */
  async request(method: Method, path: string, body?: unknown): Promise<KubeReply> {
    const answer = await send(this.server, { method, path, body, timeoutMs: 15_000, maxBytes: MAX_BYTES });
    const text = answer.bytes.toString('utf8');
    let parsed: Json;
    try {
      parsed = JSON.parse(text) as Json;
    } catch {
      parsed = { text };
    }
    return { status: answer.status, body: parsed, warnings: answer.warnings };
  }

  /** The object, or an error naming the call and the API server's message. */
  async ok(method: Method, path: string, body?: unknown): Promise<Json> {
    const reply = await this.request(method, path, body);
    if (reply.status >= 300) {
      throw new Error(`${method} ${path}: ${reply.status} ${String(reply.body.message ?? reply.body.text)}`);
    }
    return reply.body;
  }

  create(path: string, object: unknown): Promise<Json> {
    return this.ok('POST', path, object);
  }

  get(path: string): Promise<Json> {
    return this.ok('GET', path);
  }

  put(path: string, object: unknown): Promise<Json> {
    return this.ok('PUT', path, object);
  }

  /** The quota controller's part: status.hard from spec.hard, status.used as given (zero by default). */
  async writeQuotaStatus(namespace: string, name: string, used: Record<string, string> = {}): Promise<Json> {
    const path = `/api/v1/namespaces/${namespace}/resourcequotas/${name}`;
    const quota = await this.get(path);
    const hard = ((quota.spec as Json | undefined)?.hard ?? {}) as Record<string, string>;
    const zero = Object.fromEntries(Object.keys(hard).map((key) => [key, '0']));
    return this.put(`${path}/status`, { ...quota, status: { hard, used: { ...zero, ...used } } });
  }

  /** POST ?dryRun=All of `pod`: what the API server would store, or its refusal. */
  dryRunPod(namespace: string, pod: unknown): Promise<DryRun> {
    return this.dryRun(`/api/v1/namespaces/${namespace}/pods`, pod);
  }

  /** POST ?dryRun=All of `object` to the collection at `path`, or the API server's refusal. */
  async dryRun(path: string, object: unknown): Promise<DryRun> {
    const reply = await this.request('POST', `${path}?dryRun=All`, object);
    if (reply.status === 201 || reply.status === 200) {
      return { admitted: true, object: reply.body, warnings: reply.warnings };
    }
    if (reply.status >= 500 || reply.body.kind !== 'Status') {
      throw new Error(`dry run at ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    }
    return { admitted: false, message: String(reply.body.message), warnings: reply.warnings };
  }
}
