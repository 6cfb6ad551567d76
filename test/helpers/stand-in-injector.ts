// A mesh's injector as a mutating webhook for the real kube-apiserver: HTTPS on loopback, each AdmissionReview
// answered with the JSON Patch `patchFor` gives the pod (none: allowed as it is).

import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Pod } from './envtest-namespace.js';
import type { TestCert } from './tls.js';

export interface PatchOp {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

export interface StandInInjector {
  /** Where the API server calls it. */
  url: string;
  server: Server;
}

export async function standInInjector(
  cert: TestCert,
  patchFor: (pod: Pod) => PatchOp[],
): Promise<StandInInjector> {
  const server = createServer({ key: cert.key, cert: cert.cert }, async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const review = JSON.parse(body) as { request: { uid: string; object: Pod } };
    const patch = patchFor(review.request.object);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: {
          uid: review.request.uid,
          allowed: true,
          ...(patch.length === 0
            ? {}
            : { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }),
        },
      }),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}
