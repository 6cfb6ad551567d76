// init's half of the seal proof (docs/init.md#sealed-pods): listen on 15904 for a moment, ask the node agent on
// the node's address to connect to this pod, and report where its connection came from. Thin I/O: the verdict
// is src/seal/verdict.ts's.

import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { boundedGet } from '../bounded-get.js';
import { listenOn } from '../listen-address.js';
import { PROVE_PATH, seenLine } from '../seal/proof-wire.js';
import type { ProofObservation } from '../seal/verdict.js';

export interface ProofRequest {
  agentAddress: string;
  agentPort: number;
  listenPort: number;
  /** For the agent's answer and the connection together. */
  timeoutMs: number;
}

/** Asks the agent to connect to us and tells what arrived. Never throws: every failure is an observation. */
export async function proveSeal(request: ProofRequest): Promise<ProofObservation> {
  const nonce = randomBytes(16).toString('hex');
  let seen: ProofObservation | undefined;
  const server = createServer((socket: Socket) => {
    socket.setTimeout(request.timeoutMs, () => socket.destroy());
    socket.on('error', () => {});
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (!text.includes('\n') && text.length < 64) return;
      const from = socket.remoteAddress ?? 'an unknown address';
      const nonceMatched = text.split('\n')[0] === nonce;
      if (seen === undefined || nonceMatched) seen = { arrived: true, from, nonceMatched };
      socket.end(seenLine(from));
    });
  });
  try {
    await listenOn(server, request.listenPort, undefined);
  } catch (err) {
    return {
      arrived: false,
      agentAnswer: `cannot listen on ${request.listenPort}: ${(err as Error).message}`,
    };
  }
  try {
    const answer = await boundedGet({
      host: request.agentAddress,
      port: request.agentPort,
      path: `${PROVE_PATH}?nonce=${nonce}`,
      headers: {},
      timeoutMs: request.timeoutMs,
      maxBodyBytes: 1024,
    });
    if (seen !== undefined) return seen;
    const where = `${request.agentAddress}:${request.agentPort}`;
    return {
      arrived: false,
      agentAnswer: answer.answered
        ? `the agent at ${where} answered ${answer.status}: ${answer.body.toString('utf8').trim()}`
        : `no answer from the agent at ${where}: ${answer.reason}`,
    };
  } finally {
    server.close();
  }
}
