// One GET of the companion's /healthz, with its own deadline. The outcome is a value: refused, timed out or a
// non-200 answer is a reason to try again, never an exception.

import { boundedGet } from '../bounded-get.js';
import { joinHostPort } from '../probe/result.js';
import { HEALTHZ_PATH } from '../scheme.js';
import type { Attempt } from './schedule.js';

/** Enough of a body to say why (the companion's is one short line); the rest is not read into memory. */
const BODY_CHARS = 200;

export function healthzUrl(host: string, port: number): string {
  return `http://${joinHostPort(host, port)}${HEALTHZ_PATH}`;
}

export async function getHealthz(host: string, port: number, timeoutMs: number): Promise<Attempt> {
  const outcome = await boundedGet({
    host,
    port,
    path: HEALTHZ_PATH,
    headers: {},
    timeoutMs,
    maxBodyBytes: BODY_CHARS,
  });
  if (!outcome.answered) {
    const timedOut = outcome.error === undefined;
    return { ok: false, reason: timedOut ? `no answer within ${timeoutMs} ms` : outcome.reason, timedOut };
  }
  if (outcome.status === 200) return { ok: true };
  const line = outcome.body.toString('utf8').split('\n')[0]?.trim() ?? '';
  return {
    ok: false,
    reason: `answered ${outcome.status}${line === '' ? '' : `: ${line}`}`,
    timedOut: false,
  };
}
