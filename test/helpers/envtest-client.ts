// The few REST calls the envtest suites make to a real API server, with a bearer token: create, get, put, a
// ResourceQuota's status (no quota controller runs), and a server-side dry run of a pod, which runs every
// mutating and validating admission step and stores nothing.

import { request } from 'node:https';

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

export class KubeClient {
  constructor(
    readonly url: string,
    private readonly ca: string,
    private readonly token: string,
  ) {}

  request(method: string, path: string, body?: unknown): Promise<KubeReply> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.url}${path}`,
        {
          method,
          ca: this.ca,
          agent: false,
          timeout: 15_000,
          headers: {
            authorization: `Bearer ${this.token}`,
            accept: 'application/json',
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => {
            let parsed: Json;
            try {
              parsed = JSON.parse(text) as Json;
            } catch {
              parsed = { text };
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, warnings: warnings(res.rawHeaders) });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 15 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** The object, or an error naming the call and the API server's message. */
  async ok(method: string, path: string, body?: unknown): Promise<Json> {
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

/** `Warning: 299 - "text"` headers, one each (RFC 7234 quoting, as the API server writes them). */
function warnings(raw: string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() !== 'warning') continue;
    const quoted = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(raw[i + 1] ?? '')?.[1];
    if (quoted !== undefined) found.push(quoted.replace(/\\(.)/g, '$1'));
  }
  return found;
}
