// The node agent's proof endpoint (docs/init.md#sealed-pods): init asks `GET /prove?nonce=N` from inside its pod,
// and the agent connects from the host to that caller's own address on 15904 (so through its own SNAT, as
// kubelet's probes go), writes the nonce, and relays the address init saw. It connects to nothing else: no
// caller can point it at another pod or port. Bounded, and fair among callers, since every pod reaches it: a few
// proofs at a time and one per caller address (an init asks once), each within a deadline; its connections shared
// among addresses as the companion's are (server/source-shares.ts), so one pod holding many keeps no init out.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { listenOn } from '../listen-address.js';
import type { Logger } from '../log.js';
import { nonceOfTarget, parseSeenLine } from '../seal/proof-wire.js';
import { PROOF_PORT } from '../seal/sources.js';
import { plainAddress } from '../seal/verdict.js';
import { SourceShares, sourceOf } from '../server/source-shares.js';

/** What one proof showed, for the log. */
export type ProofReport = { pod: string; seen: string } | { pod: string; failed: string };

const MAX_IN_FLIGHT = 16;
const MAX_CONNECTIONS = 256;
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
  /** Connections held at once, shared among caller addresses; default MAX_CONNECTIONS. */
  maxConnections?: number;
}): Promise<ProveServer> {
  /** The callers with a proof in flight: at most MAX_IN_FLIGHT, one each. */
  const proving = new Set<string>();
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
      const caller = plainAddress(req.socket.remoteAddress ?? '');
      if (proving.has(caller)) return answer(res, 429, 'a proof for this address is in flight');
      if (proving.size >= MAX_IN_FLIGHT)
        return answer(res, 503, `${MAX_IN_FLIGHT} proofs in flight; try again`);
      proving.add(caller);
      connectAndAsk(caller, target.nonce).then((report) => {
        proving.delete(caller);
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
  const shares = new SourceShares<Socket>(options.maxConnections ?? MAX_CONNECTIONS);
  server.on('connection', (socket: Socket) => {
    const source = sourceOf(socket.remoteAddress);
    const admission = shares.add(source, socket);
    if (!admission.admitted) return void socket.destroy();
    socket.once('close', () => shares.delete(source, socket));
    admission.evicted?.destroy();
  });
  const port = await listenOn(server, options.port, options.host);
  return {
    port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
