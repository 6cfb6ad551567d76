// lane: isolated: binds the fixed proof port, 15904, on loopback, as init does in its pod.
// The node agent's proof endpoint is fair among callers, since every pod reaches it: one proof in flight per caller
// address (a pod holding its own proof open keeps no other init from proving), and its connections shared among
// addresses, so a pod holding many idle connections keeps no other's request out.

import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveProofs } from '../../src/node/prove-server.js';
import { PROOF_PORT } from '../../src/seal/sources.js';
import { get } from '../helpers/client.js';
import { captureLog } from '../helpers/log-capture.js';

const NONCE = '0123456789abcdef0123456789abcdef';

describe('the proof endpoint under one greedy caller', () => {
  /** init's side, for every loopback address: it never answers, as a pod holding its proof open would. */
  let silentInit: Server;
  const held: Socket[] = [];
  let agent: Awaited<ReturnType<typeof serveProofs>>;

  beforeAll(async () => {
    silentInit = createServer((socket) => void held.push(socket));
    silentInit.listen(PROOF_PORT, '0.0.0.0');
    await once(silentInit, 'listening');
    agent = await serveProofs({ host: '0.0.0.0', port: 0, log: captureLog().log, maxConnections: 4 });
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await agent?.close();
    silentInit?.close();
  });

  const prove = (from: string) => get(`http://127.0.0.1:${agent.port}/prove?nonce=${NONCE}`, {}, 'GET', from);

  it('answers a second proof of one address at once with 429, and another address still proves', async () => {
    const first = prove('127.0.0.1');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await prove('127.0.0.1');
    expect(again.status).toBe(429);
    expect(again.body).toBe('a proof for this address is in flight\n');
    // Another pod's proof is taken (and fails at its deadline, init here never answering): not refused.
    const other = await prove('127.0.0.2');
    expect(other.status).toBe(502);
    expect(other.body).toMatch(/no answer on 15904 within 3000 ms/);
    expect((await first).status).toBe(502);
  }, 20_000);

  it("one address's idle connections keep no other's request out: the newcomer takes the place of one of them", async () => {
    const idle: Socket[] = [];
    for (let i = 0; i < 4; i++) {
      const socket = connect({ host: '127.0.0.1', port: agent.port, localAddress: '127.0.0.3' });
      await once(socket, 'connect');
      idle.push(socket);
    }
    const closed = Promise.race(idle.map((s) => once(s, 'close')));
    const refused = await get(`http://127.0.0.1:${agent.port}/prove?nonce=x`, {}, 'GET', '127.0.0.4');
    expect(refused.status).toBe(400);
    await closed;
    for (const socket of idle) socket.destroy();
  }, 20_000);
});
