// Test-side clients: a kubelet-like GET, and a raw socket for requests no HTTP client would send.

import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';

export interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A kubelet-like GET: a new connection, kube-probe's User-Agent; `from` a loopback address of another caller. */
export function get(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
  from?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: { 'user-agent': 'kube-probe/1.30', ...headers },
        agent: false,
        ...(from === undefined ? {} : { localAddress: from }),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Sends raw bytes and collects everything until the server closes (or `timeoutMs`). */
export function raw(
  port: number,
  data: string | Buffer,
  timeoutMs = 5000,
  host = '127.0.0.1',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host });
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got ${JSON.stringify(text)}`));
    }, timeoutMs);
    socket.on('data', (c) => {
      text += c.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.write(data);
  });
}

/** A GET over TLS to 127.0.0.1:port, the certificate unchecked: what a TLS client of the companion sees. */
export function httpsBody(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve(text));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
