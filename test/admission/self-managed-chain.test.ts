// The webhook with its self-managed TLS (no --tls-cert pair) called by a real kube-apiserver: Go's crypto/x509 in
// the API server builds the chain from the caBundle the webhook wrote into its own configuration to the serving
// certificate it minted, and checks the Service's DNS name. The API server reaches the Service's name through an
// HTTP CONNECT proxy on loopback (HTTPS_PROXY, which Go's HTTP client honours for webhook calls) that sends that one
// name, and nothing else, to the webhook's loopback port.

import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { ENVTEST_NEEDS, type Envtest, startEnvtest } from '../helpers/envtest.js';
import { makeNamespace, ourContainers, type Pod } from '../helpers/envtest-namespace.js';
import { applyRbac, registerWebhook, WEBHOOK_NAMESPACE, WEBHOOK_USER } from '../helpers/envtest-webhook.js';
import { ended } from '../helpers/loopback-process.js';
import { skipWithout } from '../helpers/system-tools.js';
import { until } from '../helpers/until.js';
import { appPod } from './rule-cases.js';

const SERVICE_HOST = `osm-healthcheck-webhook.${WEBHOOK_NAMESPACE}.svc`;
const CONFIG = 'osm-healthcheck';
const INJECTION = 'self-managed';
/** Connections the proxy tunnelled to the webhook: the API server's calls came by the Service's name. */
let tunnels = 0;

/** A CONNECT proxy that tunnels `host:443` to 127.0.0.1:`port()` and refuses every other target. */
async function serviceProxy(
  host: string,
  port: () => number | undefined,
): Promise<Server & { port: number }> {
  const server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req, client) => {
    const target = port();
    if (req.url !== `${host}:443` || target === undefined) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = connect(target, '127.0.0.1', () => {
      tunnels += 1;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as { port: number }).port });
}

describe('the webhook with self-managed TLS behind a real kube-apiserver', () => {
  const skip = skipWithout('the self-managed chain behind a real kube-apiserver', ENVTEST_NEEDS);
  let env: Envtest;
  let proxy: Server & { port: number };
  let webhookPort: number | undefined;
  let stopWebhook: (() => Promise<void>) | undefined;
  let output = () => '';

  beforeAll(async () => {
    if (skip) return;
    proxy = await serviceProxy(SERVICE_HOST, () => webhookPort);
    const proxyUrl = `http://127.0.0.1:${proxy.port}`;
    env = await startEnvtest([WEBHOOK_USER], undefined, {
      HTTPS_PROXY: proxyUrl,
      https_proxy: proxyUrl,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
    });
    await applyRbac(env.admin);
    await makeNamespace(env.admin, 'shop', { 'osm-healthcheck-injection': INJECTION }, []);
    // The configuration as deployed, with an empty caBundle: the webhook writes its CA there itself.
    await registerWebhook(env.admin, CONFIG, `https://${SERVICE_HOST}:443/mutate`, '', INJECTION);
    const started = await startCli(
      [
        'webhook',
        '--port=0',
        '--host=127.0.0.1',
        `--kube-api=${env.url}`,
        `--kube-ca=${env.caFile}`,
        `--kube-token-file=${env.tokenFile(WEBHOOK_USER.name)}`,
        `--namespace=${WEBHOOK_NAMESPACE}`,
        `--webhook-config=${CONFIG}`,
        '--image=registry.example.com/osm-healthcheck:envtest',
      ],
      { KUBERNETES_SERVICE_HOST: '' },
      (l) => l.msg === 'webhook serving',
    );
    output = started.output;
    stopWebhook = () => ended(started.child);
    webhookPort = Number(started.line.port);
  }, 90_000);

  afterAll(async () => {
    await stopWebhook?.();
    await env?.stop();
    proxy?.close();
  });

  it.skipIf(skip)(
    'the API server trusts the minted chain through the caBundle the webhook wrote, and gets its patch',
    async () => {
      let pod: Pod | undefined;
      await until(
        'the API server calls the webhook through its self-managed chain',
        async () => {
          const result = await env.admin.dryRunPod('shop', appPod());
          if (!result.admitted) return false;
          pod = result.object as Pod;
          return ourContainers(pod).includes('osm-healthcheck');
        },
        () => `webhook output:\n${output()}`,
      );
      const config = (await env.admin.get(
        `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${CONFIG}`,
      )) as { webhooks: { clientConfig: { caBundle?: string } }[] };
      const bundle = Buffer.from(config.webhooks[0]?.clientConfig.caBundle ?? '', 'base64').toString();
      expect(bundle).toContain('-----BEGIN CERTIFICATE-----');
      expect(tunnels).toBeGreaterThan(0);
      expect(output()).not.toMatch(/"level":50/);
    },
    60_000,
  );
});
