// One rewritten probe sent to the companion the way kubelet sends it: a plain GET with kubelet's headers, a
// fresh connection, one deadline, at most 10 KiB of body, the answer judged by kubelet's rule. What kubelet
// throws away (the companion's one-line body) is kept: it is the reason `check` prints. For a Warning, whose body
// is the app's, the reason comes from a header and the body makes kubelet's own text.
//
//   check --GET :1590x/osm-<kind>-probe/<container>--> companion --original probe--> app

import { boundedGet } from '../bounded-get.js';
import { describeError, kubeletWarning, verdictFor } from '../probe/http-outcome.js';
import { MAX_BODY_BYTES } from '../probe/http-request.js';
import { joinHostPort, type Verdict } from '../probe/result.js';
import { type CompanionGet, DEFAULT_USER_AGENT, REASON_HEADER } from '../scheme.js';

export interface CompanionAnswer {
  verdict: Verdict;
  /** The companion's status; null when it did not answer at all. */
  status: number | null;
  /** The companion's one line (its body, or for a Warning its Osm-Healthcheck-Reason), or why there was none. */
  reason: string;
  /** For a Warning, kubelet's own text, with the body the companion handed on (the app's); else null. */
  kubeletWarning: string | null;
}

export function companionUrl(host: string, get: CompanionGet): string {
  return `http://${joinHostPort(host, get.port)}${get.path}`;
}

/** Never throws: a companion that is down, slow or garbled is a failure with a reason, as kubelet sees it. */
export async function askCompanion(
  host: string,
  get: CompanionGet,
  timeoutMs: number,
): Promise<CompanionAnswer> {
  const url = companionUrl(host, get);
  // kubelet's request (k8s pkg/probe/http/request.go): its User-Agent, Accept */*, no keep-alive.
  const headers: Record<string, string> = {
    'User-Agent': DEFAULT_USER_AGENT,
    Accept: '*/*',
    Connection: 'close',
  };
  for (const { name, value } of get.headers) headers[name] = value;
  const outcome = await boundedGet({
    host,
    port: get.port,
    path: get.path,
    headers,
    timeoutMs,
    maxBodyBytes: MAX_BODY_BYTES,
  });
  if (!outcome.answered) {
    const why = outcome.error === undefined ? outcome.reason : describeError(outcome.error);
    const hint =
      (outcome.error as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED'
        ? ' (is the companion running?)'
        : '';
    return {
      verdict: 'failure',
      status: null,
      reason: `GET ${url} failed: ${why}${hint}`,
      kubeletWarning: null,
    };
  }
  // kubelet's verdict on the status (http.go DoHTTPProbe): 2xx Success, 3xx Warning, else Failure.
  const { verdict } = verdictFor(outcome.status);
  // A Warning's body is the app's (docs/architecture.md#what-kubelet-receives): the reason is in a header (an older companion: the body).
  const header = outcome.headers[REASON_HEADER.toLowerCase()];
  const line =
    verdict === 'warning' && typeof header === 'string' ? header : outcome.body.toString('utf8').trim();
  return {
    verdict,
    status: outcome.status,
    reason: line === '' ? `HTTP ${outcome.status}` : line,
    kubeletWarning: verdict === 'warning' ? kubeletWarning(outcome.body) : null,
  };
}
