// A stopping webhook and the API server's pooled connections: the API server keeps a connection to the Service
// open across admissions and does not know the replica behind it is stopping. An admission on such a connection
// during the drain is answered in full (not 503, which failurePolicy: Ignore would turn into a pod without its
// companion) and closes the connection; the webhook then stops without waiting out the drain limit.

import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { describe, expect, it } from 'vitest';
import { postAdmission } from '../helpers/admission-post.js';
import { startHarness } from './harness.js';

const body = readFileSync(new URL('../fixtures/webhook/http-get.json', import.meta.url), 'utf8');
const uid = JSON.parse(body).request.uid as string;

describe('webhook drain', () => {
  it('answers an admission on a pooled connection while stopping, closes that connection, then stops', async () => {
    // A drain limit far past the test's timeout: close() must end because the connection closed.
    const harness = await startHarness({ drainMs: 600_000 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = () => postAdmission({ port: harness.webhook.port, ca: harness.cert.cert, body, agent });
    try {
      const before = await post();
      expect(before).toMatchObject({ status: 200, headers: { connection: 'keep-alive' } });

      const closing = harness.webhook.close();
      expect(await harness.get('/readyz')).toMatchObject({ status: 503, body: 'not ready: draining\n' });
      const during = await post();
      expect(during).toMatchObject({ status: 200, headers: { connection: 'close' } });
      expect(JSON.parse(during.body).response.uid).toBe(uid);
      await during.socketClosed;
      await closing;
    } finally {
      agent.destroy();
      harness.cert.cleanup();
    }
  });
});
