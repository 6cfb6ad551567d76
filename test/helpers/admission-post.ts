// POST /mutate over real HTTPS, as the API server sends an AdmissionReview: verified against `ca` (for the name
// `servername` where the certificate is for a Service's DNS name), on its own connection unless given an agent.

import type { IncomingHttpHeaders } from 'node:http';
import { type Agent, request } from 'node:https';

export interface AdmissionAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Settles once the connection the answer came on is closed. */
  socketClosed: Promise<void>;
}

export interface AdmissionPost {
  port: number;
  ca: string;
  body: string;
  servername?: string;
  agent?: Agent;
}

export function postAdmission({
  port,
  ca,
  body,
  servername,
  agent,
}: AdmissionPost): Promise<AdmissionAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mutate',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        ca,
        ...(servername === undefined ? {} : { servername }),
        agent: agent ?? false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const { socket } = req;
          const socketClosed = new Promise<void>((done) => {
            if (socket === null || socket.destroyed) done();
            else socket.once('close', () => done());
          });
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, socketClosed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
