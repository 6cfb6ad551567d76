// Each namespace's Pod Security enforce level, kept from a list and watch of namespaces (client-go's reflector:
// list, then watch from the list's resourceVersion; bookmarks move it on; 410 Gone lists again; any other failure
// watches again after a backoff). The AdmissionReview names the pod's namespace but carries none of its labels,
// hence this cache. Admissions never wait for it: a namespace it has not seen is `unknown`, and the rewrite then
// adds nothing the namespace might refuse (interception.ts).

import type { Logger } from '../log.js';
import {
  type EnforcedPolicy,
  enforcedPolicy,
  type PodSecurityKnowledge,
  type PodSecurityLevel,
} from '../rewrite/pod-security.js';
import { BACKOFF, type Backoff, retryDelay } from './cluster-version.js';
import { type KubeApi, kubeRequest, kubeWatch } from './kube-api.js';

export interface NamespacePoliciesOptions {
  api: KubeApi;
  /** The PodSecurity admission configuration's defaults.enforce, for namespaces without the label. */
  defaultLevel: PodSecurityLevel;
  log: Logger;
  backoff?: Backoff;
  /** The watch's timeoutSeconds: the API server ends it then, and it is opened again at once. */
  watchSeconds?: number;
}

export interface NamespacePolicies {
  /** Now, without waiting. */
  knowledge(namespace: string | undefined): PodSecurityKnowledge;
  /** Why admissions would be guesses (namespaces never listed yet), or undefined. */
  notReady(): string | undefined;
  close(): void;
}

const PAGE = 100;
const LIST_TIMEOUT_MS = 10_000;
const WATCH_SECONDS = 300;

type Json = Record<string, unknown>;

interface Namespace {
  metadata?: { name?: unknown; resourceVersion?: unknown; labels?: unknown };
}

/** 410 Gone: the resourceVersion is older than the API server keeps; only a new list helps. */
class Expired extends Error {}

function labelsOf(object: Namespace): Record<string, string> {
  const labels = object.metadata?.labels;
  if (typeof labels !== 'object' || labels === null) return {};
  return Object.fromEntries(
    Object.entries(labels).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function parse(text: string, what: string): Json {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Json;
  } catch {}
  throw new Error(`${what}: the answer is not a JSON object: ${text.slice(0, 120)}`);
}

function statusLine(status: number, text: string): string {
  let message = text.split('\n')[0]?.slice(0, 200) ?? '';
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') message = parsed.message;
  } catch {}
  return `answered ${status}${message === '' ? '' : `: ${message}`}`;
}

export function watchNamespacePolicies(options: NamespacePoliciesOptions): NamespacePolicies {
  const { api, defaultLevel, log } = options;
  const backoff = options.backoff ?? BACKOFF;
  const watchSeconds = options.watchSeconds ?? WATCH_SECONDS;
  let policies: Map<string, EnforcedPolicy> | undefined;
  let resourceVersion: string | undefined;
  /** The last failure, while the namespaces were never listed. */
  let why: string | undefined;
  let closed = false;
  /** 410s in a row without an event between: a second one waits, so a confused API server is not hammered. */
  let expiries = 0;
  const stop = new AbortController();

  const notListed = () => `namespaces not listed yet${why === undefined ? '' : `: ${why}`}`;

  const policyOf = (object: Namespace): [string, EnforcedPolicy] | undefined => {
    const name = object.metadata?.name;
    if (typeof name !== 'string' || name === '') return undefined;
    return [name, enforcedPolicy(labelsOf(object), defaultLevel, name)];
  };

  async function list(): Promise<void> {
    const next = new Map<string, EnforcedPolicy>();
    let token: string | undefined;
    let version = '';
    do {
      const path = `/api/v1/namespaces?limit=${PAGE}${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`;
      const answer = await kubeRequest(api, 'GET', path, LIST_TIMEOUT_MS);
      if (answer.status !== 200) throw new Error(`list namespaces ${statusLine(answer.status, answer.text)}`);
      const page = parse(answer.text, 'list namespaces');
      const metadata = (page.metadata ?? {}) as Json;
      for (const item of Array.isArray(page.items) ? (page.items as Namespace[]) : []) {
        const entry = policyOf(item);
        if (entry !== undefined) next.set(...entry);
      }
      version = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : version;
      token =
        typeof metadata.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined;
    } while (token !== undefined);
    // Swapped whole: admissions see the old namespaces until the new list is complete, never a half list.
    policies = next;
    resourceVersion = version;
    log.info({ namespaces: next.size, resourceVersion: version }, 'namespaces listed');
  }

  function apply(line: string): void {
    const event = parse(line, 'watch namespaces');
    const object = (event.object ?? {}) as Namespace & Json;
    if (event.type === 'ERROR') {
      const code = (object as { code?: unknown }).code;
      const message = String((object as { message?: unknown }).message ?? '');
      if (code === 410) throw new Expired(message);
      throw new Error(`watch namespaces: ERROR event ${String(code)}: ${message}`);
    }
    const version = object.metadata?.resourceVersion;
    if (typeof version === 'string') resourceVersion = version;
    expiries = 0;
    if (event.type === 'BOOKMARK') return;
    const entry = policyOf(object);
    if (entry === undefined || policies === undefined) return;
    if (event.type === 'DELETED') policies.delete(entry[0]);
    else policies.set(...entry);
  }

  /** Watches until the stream ends; how many events (bookmarks included) it carried. */
  async function watch(): Promise<number> {
    let lines = 0;
    const path = `/api/v1/namespaces?watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion ?? '')}&timeoutSeconds=${watchSeconds}`;
    // A failing apply (410, a broken event) ends this watch through the error it throws out of kubeWatch.
    let failure: unknown;
    const watching = new AbortController();
    const onStop = () => watching.abort();
    stop.signal.addEventListener('abort', onStop, { once: true });
    try {
      const answer = await kubeWatch(
        api,
        path,
        // The API server's timeoutSeconds, and some room for it to close the stream itself.
        watchSeconds * 1000 + Math.min(30_000, watchSeconds * 1000),
        (line) => {
          if (failure !== undefined) return;
          lines += 1;
          try {
            apply(line);
          } catch (err) {
            failure = err;
            watching.abort();
          }
        },
        watching.signal,
      ).catch((err: unknown) => {
        if (failure !== undefined) return undefined;
        throw err;
      });
      if (failure !== undefined) throw failure;
      if (answer?.status === 410) throw new Expired(statusLine(410, answer.text));
      if (answer !== undefined && answer.status !== 200) {
        throw new Error(`watch namespaces ${statusLine(answer.status, answer.text)}`);
      }
      return lines;
    } finally {
      stop.signal.removeEventListener('abort', onStop);
    }
  }

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      stop.signal.addEventListener('abort', done, { once: true });
    });

  void (async () => {
    let failures = 0;
    while (!closed) {
      try {
        if (resourceVersion === undefined) await list();
        failures = 0;
        const started = performance.now();
        const events = await watch();
        // The API server ended the watch at its timeoutSeconds: watch again from where it stopped. One that
        // ends at once, empty (a proxy in the way), is a failure, or this loop would spin.
        if (events === 0 && performance.now() - started < 1000) {
          throw new Error('watch namespaces: the watch ended at once, without an event');
        }
      } catch (err) {
        if (closed) return;
        if (err instanceof Expired) {
          log.info(
            { reason: err.message, resourceVersion },
            'namespace watch expired (410 Gone): listing again',
          );
          resourceVersion = undefined;
          expiries += 1;
          if (expiries > 1) await pause(retryDelay(backoff, expiries - 1));
          continue;
        }
        failures += 1;
        why = err instanceof Error ? err.message : String(err);
        const retryInMs = retryDelay(backoff, failures);
        const listed = policies !== undefined;
        log.warn(
          { err: why, attempt: failures, retryInMs },
          listed
            ? 'namespace watch failed: Pod Security levels may lag until it is back'
            : 'namespaces not listed: pods get no init container until they are',
        );
        await pause(retryInMs);
      }
    }
  })();

  return {
    knowledge(namespace) {
      if (namespace === undefined) {
        return { state: 'unknown', namespace: '', why: 'the admission request names no namespace' };
      }
      if (policies === undefined) return { state: 'unknown', namespace, why: notListed() };
      const policy = policies.get(namespace);
      return policy === undefined
        ? { state: 'unknown', namespace, why: 'not in the namespace watch yet' }
        : { state: 'known', policy };
    },
    notReady: () => (policies === undefined ? notListed() : undefined),
    close() {
      closed = true;
      stop.abort();
    },
  };
}
