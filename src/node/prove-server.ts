// The node agent's proof endpoint (docs/init.md#sealed-pods): init asks `GET /prove?nonce=N` from inside its pod,
// and the agent connects from the host to that caller's own address on 15904 (so through its own SNAT, as
// kubelet's probes go), writes the nonce, and relays the address init saw. It connects to nothing else: no
// caller can point it at another pod or port. Bounded: a few proofs at a time, each within a deadline.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { listenOn } from '../listen-address.js';
import type { Logger } from '../log.js';
import { nonceOfTarget, parseSeenLine } from '../seal/proof-wire.js';
import { PROOF_PORT } from '../seal/sources.js';
import { plainAddress } from '../seal/verdict.js';

/** What one proof showed, for the log. */
export type ProofReport = { pod: string; seen: string } | { pod: string; failed: string };

const MAX_IN_FLIGHT = 16;
const PROOF_TIMEOUT_MS = 3_000;

/** Connects to `host`:PROOF_PORT, sends the nonce, reads init's `seen` line. */
function connectAndAsk(host: string, nonce: string): Promise<ProofReport> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect({ host, port: PROOF_PORT });
    const done = (report: ProofReport) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(report);
    };
    const timer = setTimeout(
      () => done({ pod: host, failed: `no answer on ${PROOF_PORT} within ${PROOF_TIMEOUT_MS} ms` }),
      PROOF_TIMEOUT_MS,
    );
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${nonce}\n`));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (!text.includes('\n') && text.length < 128) return;
      const seen = parseSeenLine(text.split('\n')[0] ?? '');
      done(seen === undefined ? { pod: host, failed: 'init answered no seen line' } : { pod: host, seen });
    });
    socket.on('end', () => done({ pod: host, failed: 'init closed without a seen line' }));
    socket.on('error', (err) => done({ pod: host, failed: `connect to ${PROOF_PORT}: ${err.message}` }));
  });
}

export interface ProveServer {
  port: number;
  close(): Promise<void>;
}

export async function serveProofs(options: {
  host: string | undefined;
  port: number;
  log: Logger;
  /** After each proof init answered: the caller's address and the address init saw (the seal events). */
  onSeen?: (pod: string, seen: string) => void;
}): Promise<ProveServer> {
  let inFlight = 0;
  const answer = (res: ServerResponse, status: number, line: string) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
    res.end(`${line}\n`);
  };
  const server = createServer(
    { requestTimeout: 5_000, headersTimeout: 5_000 },
    (req: IncomingMessage, res) => {
      const target = nonceOfTarget(req.url ?? '/');
      if (req.method !== 'GET') return answer(res, 405, 'GET only');
      if ('refused' in target) return answer(res, 400, target.refused);
      if (inFlight >= MAX_IN_FLIGHT) return answer(res, 503, `${MAX_IN_FLIGHT} proofs in flight; try again`);
      const caller = plainAddress(req.socket.remoteAddress ?? '');
      inFlight++;
      connectAndAsk(caller, target.nonce).then((report) => {
        inFlight--;
        if ('seen' in report) {
          options.log.info({ pod: caller, seen: report.seen }, 'seal proof: init saw the connection');
          answer(res, 200, `seen ${report.seen}`);
          options.onSeen?.(caller, report.seen);
        } else {
          options.log.warn({ pod: caller, reason: report.failed }, 'seal proof failed');
          answer(res, 502, report.failed);
        }
      });
    },
  );
  server.maxConnections = 256;
  const port = await listenOn(server, options.port, options.host);
  return {
    port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
