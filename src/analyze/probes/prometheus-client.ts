// Thin I/O to a user's Prometheus: its HTTP API's instant and range queries (GET /api/v1/query, /query_range),
// with the auth a Prometheus behind a proxy asks for (a bearer token file, basic auth, a CA file), one deadline
// per request and a capped answer. A Prometheus that cannot be asked is a usage-level error naming the URL.

import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { HealthcheckError } from '../../errors.js';
import { badFlagValue, usageError } from '../../flags.js';
import { asList, asObject } from '../json.js';
import type { Series } from './promql.js';

export interface PrometheusOptions {
  url: string;
  bearerTokenFile?: string | undefined;
  basicAuth?: { user: string; passwordFile: string } | undefined;
  caFile?: string | undefined;
  timeoutMs: number;
}

export interface Prometheus {
  url: string;
  instant(query: string, at: number): Promise<Series[]>;
  range(query: string, from: number, to: number, stepSeconds: number): Promise<Series[]>;
}

/** A Prometheus answer is a few MB even for thousands of pods; more is not Prometheus. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

const fail = (url: string, problem: string, cause?: unknown) =>
  new HealthcheckError('OSM_HC_PROMETHEUS', `--prometheus ${url}: ${problem}`, { cause });

function readSecret(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw usageError(`${flag} ${file}: ${(err as Error).message}`, 'a file you may read', { cause: err });
  }
}

export function prometheus(options: PrometheusOptions): Prometheus {
  const base = URL.parse(options.url);
  if (base === null || (base.protocol !== 'http:' && base.protocol !== 'https:')) {
    throw badFlagValue('--prometheus', options.url, 'an http:// or https:// URL');
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.bearerTokenFile !== undefined) {
    headers.authorization = `Bearer ${readSecret('--prometheus-token-file', options.bearerTokenFile)}`;
  } else if (options.basicAuth !== undefined) {
    const password = readSecret('--prometheus-password-file', options.basicAuth.passwordFile);
    headers.authorization = `Basic ${Buffer.from(`${options.basicAuth.user}:${password}`).toString('base64')}`;
  }
  const ca = options.caFile === undefined ? undefined : readSecret('--prometheus-ca-file', options.caFile);
  const ask = async (path: string, params: Record<string, string>): Promise<Series[]> => {
    const url = new URL(`${base.pathname.replace(/\/$/, '')}${path}`, base);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    const text = await get(url, headers, ca, options.timeoutMs).catch((err: Error) => {
      throw fail(options.url, err.message, err);
    });
    let body: Record<string, unknown>;
    try {
      body = asObject(JSON.parse(text.body));
    } catch (err) {
      throw fail(options.url, `HTTP ${text.status}, and no JSON: is it Prometheus?`, err);
    }
    if (body.status !== 'success') {
      throw fail(options.url, `HTTP ${text.status}: ${String(body.error ?? 'no status "success"')}`);
    }
    return asList(asObject(body.data).result).map((r) => ({
      metric: Object.fromEntries(Object.entries(asObject(r.metric)).map(([k, v]) => [k, String(v)])),
      values: (Array.isArray(r.values) ? r.values : [r.value]).flatMap((pair: unknown) =>
        Array.isArray(pair) ? [[Number(pair[0]), Number(pair[1])] as const] : [],
      ),
    }));
  };
  return {
    url: options.url,
    instant: (query, at) => ask('/api/v1/query', { query, time: String(at) }),
    range: (query, from, to, step) =>
      ask('/api/v1/query_range', { query, start: String(from), end: String(to), step: String(step) }),
  };
}

function get(
  url: URL,
  headers: Record<string, string>,
  ca: string | undefined,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'GET',
      headers,
      ...(ca === undefined ? {} : { ca }),
      timeout: timeoutMs,
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_BODY_BYTES) req.destroy(new Error(`answer over ${MAX_BODY_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}
