// kubelet's HTTP prober for the end-to-end tests, written apart from the companion's (src/probe/http*.ts) from
// kubelet's rules, so that the two can be held against each other: k8s pkg/probe/http/http.go DoHTTPProbe on top
// of Go's http.Client with kubelet's RedirectChecker. It yields what kubelet yields, a result and its output text,
// the text being what kubelet's ProbeWarning event and `kubectl describe` show for a Warning.

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

export type KubeletResult = 'success' | 'warning' | 'failure';

export interface KubeletProbe {
  result: KubeletResult;
  /** kubelet's output as bytes (Go strings are bytes): a 2xx's body, or the Warning / Failure text. */
  output: Buffer;
}

export interface HttpAction {
  scheme: 'HTTP' | 'HTTPS';
  port: number;
  path: string;
  headers: { name: string; value: string }[];
}

const USER_AGENT = 'kube-probe/1.30';
/** http.go maxRespBodyLength: ReadAtMost(res.Body, 10*1<<10). */
const MAX_BODY_BYTES = 10 * 1024;
/** RedirectChecker: `if len(via) >= 10 { return errors.New("stopped after 10 redirects") }`. */
const MAX_REDIRECTS = 10;
/** Go's Client.Do follows only these (client.go redirectBehavior); any other 3xx is the answer. */
const FOLLOWED = new Set([301, 302, 303, 307, 308]);

interface Answer {
  status: number;
  location: string | undefined;
  body: Buffer;
}

/** One GET; the body read to its end or to 10 KiB, whichever comes first. */
function get(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: 'GET', headers, agent: false, rejectUnauthorized: false, signal });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => {
        req.destroy();
        const { location } = res.headers;
        resolve({
          status: res.statusCode ?? 0,
          location,
          body: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES),
        });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        read += chunk.length;
        if (read >= MAX_BODY_BYTES) done();
      });
      res.on('end', done);
      res.on('error', reject);
    });
    req.end();
  });
}

/** Go's Client.Do with kubelet's RedirectChecker: the answer it hands DoHTTPProbe. */
async function followAsKubelet(first: URL, action: HttpAction, signal: AbortSignal): Promise<Answer> {
  const headers: Record<string, string> = { 'User-Agent': USER_AGENT, Accept: '*/*', Connection: 'close' };
  for (const h of action.headers) headers[h.name] = h.value;
  let url = first;
  for (let via = 0; ; via++) {
    const answer = await get(url, headers, signal);
    if (!FOLLOWED.has(answer.status) || !answer.location) return answer;
    const next = new URL(answer.location, url);
    // RedirectChecker: another hostname -> http.ErrUseLastResponse: this 3xx is the answer.
    if (next.hostname !== first.hostname) return answer;
    if (via + 1 >= MAX_REDIRECTS) throw new Error(`Get "${next.href}": stopped after 10 redirects`);
    // client.go: a Host override survives only a relative Location.
    if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(answer.location)) delete headers.Host;
    url = next;
  }
}

/** DoHTTPProbe: 2xx Success with the body; 3xx Warning with it; else Failure with the status only. */
export async function kubeletHttpProbe(
  host: string,
  action: HttpAction,
  timeoutMs: number,
): Promise<KubeletProbe> {
  const authority = host.includes(':') ? `[${host}]` : host;
  const first = new URL(
    `${action.scheme === 'HTTPS' ? 'https' : 'http'}://${authority}:${action.port}${action.path}`,
  );
  let answer: Answer;
  try {
    answer = await followAsKubelet(first, action, AbortSignal.timeout(timeoutMs));
  } catch (err) {
    const aborted = (err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError';
    const text = aborted ? `Get "${first.href}": context deadline exceeded` : (err as Error).message;
    return { result: 'failure', output: Buffer.from(text) };
  }
  const { status, body } = answer;
  if (status >= 200 && status < 300) return { result: 'success', output: body };
  if (status >= 300 && status < 400) {
    // `fmt.Sprintf("Probe terminated redirects, Response body: %v", body)`, body = string(b): the bytes as read.
    return {
      result: 'warning',
      output: Buffer.concat([Buffer.from('Probe terminated redirects, Response body: '), body]),
    };
  }
  // "Until https://issue.k8s.io/99425 is addressed, this user-facing failure message must not contain the body."
  return { result: 'failure', output: Buffer.from(`HTTP probe failed with statuscode: ${status}`) };
}
