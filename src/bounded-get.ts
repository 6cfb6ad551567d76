// One GET to the companion on loopback or POD_IP: a fresh connection, one deadline over connect, headers and body,
// a capped body. The outcome is a value (an answer, or why there was none), never an exception: `wait` asks
// /healthz with it until the companion listens, `check --via-companion` sends kubelet's rewritten probes.

import { type IncomingHttpHeaders, request } from 'node:http';

export interface GetRequest {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Bytes of body kept; the rest is not read into memory. */
  maxBodyBytes: number;
}

export type GetOutcome =
  | { answered: true; status: number; headers: IncomingHttpHeaders; body: Buffer }
  | { answered: false; error: Error | undefined; reason: string };

export function boundedGet(get: GetRequest): Promise<GetOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: GetOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const fail = (error: Error | undefined, reason: string) => settle({ answered: false, error, reason });
    const req = request({
      host: get.host,
      port: get.port,
      path: get.path,
      method: 'GET',
      headers: { connection: 'close', ...get.headers },
      agent: false,
    });
    const timer = setTimeout(() => fail(undefined, `timeout after ${get.timeoutMs} ms`), get.timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      const done = () =>
        settle({
          answered: true,
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).subarray(0, get.maxBodyBytes),
        });
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes >= get.maxBodyBytes) done();
      });
      res.on('end', done);
      res.on('error', (err) => fail(err, err.message));
    });
    req.on('error', (err) => fail(err, err.message));
    req.end();
  });
}
