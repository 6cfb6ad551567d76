// A stopping webhook and the API server's pooled connections: the API server keeps a connection to the Service
// open across admissions and does not know the replica behind it is stopping. An admission on such a connection
// during the drain is answered in full (not 503, which failurePolicy: Ignore would turn into a pod without its
// companion) and closes the connection; the webhook then closes without waiting out the drain limit.

import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

const review = readFileSync(new URL('../fixtures/webhook/http-get.json', import.meta.url), 'utf8');

interface Answer {
  status: number;
  connection: string | undefined;
  uid: string | undefined;
  socketClosed: Promise<void>;
}

/** POST the review on `agent`'s one pooled connection. */
function post(harness: Harness, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: harness.webhook.port,
        path: '/mutate',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        ca: harness.cert.cert,
        agent,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const socketClosed = new Promise<void>((done) => {
            if (req.socket?.destroyed) done();
            else req.socket?.once('close', () => done());
          });
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            uid: res.statusCode === 200 ? JSON.parse(text).response?.uid : undefined,
            socketClosed,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(review);
  });
}

let harness: Harness | undefined;
afterEach(async () => {
  harness?.cert.cleanup();
  harness = undefined;
});

describe('webhook drain', () => {
  it('answers an admission on a pooled connection while stopping, closes that connection, then stops', async () => {
    // A drain limit far past the test's timeout: close() must end because the connection closed.
    harness = await startHarness({ drainMs: 600_000 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const uid = JSON.parse(review).request.uid;

    const before = await post(harness, agent);
    expect(before).toMatchObject({ status: 200, connection: 'keep-alive', uid });

    const closing = harness.webhook.close();
    const ready = await harness.get('/readyz');
    expect(ready).toMatchObject({ status: 503, body: 'not ready: draining\n' });

    const during = await post(harness, agent);
    expect(during).toMatchObject({ status: 200, connection: 'close', uid });
    await during.socketClosed;
    await closing;
    agent.destroy();
  });
});
