// End to end: the built CLI with neither --tls-cert nor --tls-key against the stand-in API server. It writes its
// Secret and the caBundle; a real AdmissionReview POSTed over TLS, trusting only that caBundle and checking the
// Service's name as the API server does, gets its patch.

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postAdmission } from '../../helpers/admission-post.js';
import { startCli } from '../../helpers/cli.js';
import {
  type KubeStandin,
  kubeEnv,
  startKubeStandin,
  webhookConfiguration,
} from '../../helpers/kube-standin.js';
import { CONFIG, caBundles, HOST, NAMESPACE, readyz, SECRET, SERVICE } from './replica.js';

let standin: KubeStandin;
beforeEach(async () => {
  standin = await startKubeStandin({ namespace: NAMESPACE, secretName: SECRET, webhookConfig: CONFIG });
  standin.putConfig(CONFIG, webhookConfiguration(CONFIG, NAMESPACE, SERVICE));
  // The admitted pod's namespace, for the webhook's Pod Security watch: no label, so privileged.
  standin.namespaces.put('shop', {});
});
afterEach(() => standin.close());

describe('webhook with self-managed TLS, as a process', () => {
  it('writes its Secret and caBundle, and answers an AdmissionReview over TLS trusted by that caBundle', async () => {
    const { child, output } = await startCli(
      ['webhook', '--port', '0', '--namespace', NAMESPACE],
      {
        OSM_HEALTHCHECK_TLS_CERT: '',
        OSM_HEALTHCHECK_TLS_KEY: '',
        OSM_HEALTHCHECK_HOST: '127.0.0.1',
        ...kubeEnv(standin),
      },
      (l) => l.msg === 'self-managed TLS in place',
    );
    try {
      const serving = output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'webhook serving');
      expect(serving).toMatchObject({
        tls: 'self-managed',
        secret: `${NAMESPACE}/${SECRET}`,
        webhookConfiguration: CONFIG,
      });
      const port = serving?.port as number;
      // Ready once the certificate is trusted and the namespaces are listed.
      await expect.poll(() => readyz(port)).toEqual({ status: 200, body: 'ok\n' });
      const [bundle] = caBundles(standin);
      const body = readFileSync(new URL('../../fixtures/webhook/tcp-socket.json', import.meta.url), 'utf8');
      const answer = await postAdmission({ port, ca: bundle as string, body, servername: HOST });
      expect(answer.status).toBe(200);
      const review = JSON.parse(answer.body) as { response: { allowed: boolean; patch: string } };
      expect(review.response.allowed).toBe(true);
      const patch = JSON.parse(Buffer.from(review.response.patch, 'base64').toString('utf8')) as {
        path: string;
      }[];
      expect(patch.map((op) => op.path)).toContain('/spec/initContainers');
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
