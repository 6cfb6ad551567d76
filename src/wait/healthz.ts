// One GET of the companion's /healthz, with its own deadline. The outcome is a value: refused, timed out or a
// non-200 answer is a reason to try again, never an exception.

import { request } from 'node:http';
import { HEALTHZ_PATH } from '../scheme.js';
import type { Attempt } from './schedule.js';

/** Enough of a body to say why (the companion's is one short line); the rest is not read into memory. */
const BODY_CHARS = 200;

export function healthzUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}${HEALTHZ_PATH}`;
}

export function getHealthz(host: string, port: number, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(attempt);
    };
    const req = request(
      { host, port, path: HEALTHZ_PATH, method: 'GET', agent: false, headers: { connection: 'close' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < BODY_CHARS) body += chunk;
        });
        res.on('end', () => {
          if (res.statusCode === 200) return done({ ok: true });
          const line = body.split('\n')[0]?.slice(0, BODY_CHARS).trim() ?? '';
          done({ ok: false, reason: `answered ${res.statusCode}${line === '' ? '' : `: ${line}`}` });
        });
        res.on('error', (err) => done({ ok: false, reason: err.message }));
      },
    );
    const timer = setTimeout(
      () => done({ ok: false, reason: `no answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    req.on('error', (err) => done({ ok: false, reason: err.message }));
    req.end();
  });
}
