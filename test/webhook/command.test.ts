// `osm-healthcheck webhook` as a process: flags and their environment variables, start-up line, one log line per
// admission, refusal of unusable flags and certificates, graceful stop.

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { postAdmission } from '../helpers/admission-post.js';
import { startVersionStandin, versionBody } from '../helpers/api-server.js';
import { runCli, startCli } from '../helpers/cli.js';
import { node } from '../helpers/kube-objects.js';
import { kubeEnv } from '../helpers/kube-standin.js';
import { makeTestCert } from '../helpers/tls.js';

describe('webhook', () => {
  it('serves from env settings, learns the version, logs each admission, and stops cleanly on SIGTERM', async () => {
    const cert = makeTestCert();
    const api = await startVersionStandin(versionBody('29'));
    // The pod's namespace, as the webhook's namespace watch sees it: no Pod Security label (privileged).
    api.namespaces.put('shop', {});
    // Its kubelets: as new as the API server.
    api.nodes.put(node('n1', 'v1.29.3'));
    const { child, line, output } = await startCli(
      ['webhook', '--port', '0'],
      {
        OSM_HEALTHCHECK_TLS_CERT: cert.certFile,
        OSM_HEALTHCHECK_TLS_KEY: cert.keyFile,
        OSM_HEALTHCHECK_HOST: '127.0.0.1',
        OSM_HEALTHCHECK_IMAGE: 'registry.example.com/osm-healthcheck:9.9.9',
        OSM_HEALTHCHECK_NATIVE_SIDECAR: 'true',
        ...kubeEnv(api),
      },
      (l) => l.msg === 'webhook serving',
    );
    try {
      expect(line).toMatchObject({
        image: 'registry.example.com/osm-healthcheck:9.9.9',
        // OSM_HEALTHCHECK_NATIVE_SIDECAR=true: the alias of --placement native-sidecar, for existing manifests.
        placement: 'native-sidecar',
        sidecarContainersGate: false,
      });
      await expect.poll(output).toContain('"msg":"kubernetes version learnt"');
      await expect.poll(output).toContain('"msg":"namespaces listed"');
      const body = readFileSync(new URL('../fixtures/webhook/tcp-socket.json', import.meta.url), 'utf8');
      const answer = await postAdmission({ port: line.port as number, ca: cert.cert, body });
      expect(answer.status).toBe(200);
      const patch = JSON.parse(
        Buffer.from(JSON.parse(answer.body).response.patch, 'base64').toString('utf8'),
      ) as { path: string; value: unknown }[];
      const added = patch.find((op) => op.path === '/spec/initContainers');
      expect(added?.value).toMatchObject([
        { name: 'osm-healthcheck-init', image: 'registry.example.com/osm-healthcheck:9.9.9' },
        { name: 'osm-healthcheck', restartPolicy: 'Always' },
      ]);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      const lines = output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.msg === 'admission')).toMatchObject({
        namespace: 'shop',
        pod: 'db-0',
        result: 'patched',
        changed: expect.stringMatching(
          /^companion answers liveness\/db, readiness\/db; \d+ patch operations$/,
        ),
      });
      expect(lines.find((l) => l.msg === 'kubernetes version learnt')).toMatchObject({
        kubernetesVersion: '1.29',
        nativeSidecars: true,
      });
      expect(lines.at(-1)?.msg).toBe('stopped');
    } finally {
      child.kill('SIGKILL');
      cert.cleanup();
      await api.close();
    }
  });

  it('--native-sidecar outside a cluster: serves at once, the companion first, and says why', async () => {
    const cert = makeTestCert();
    const { child, line, output } = await startCli(
      ['webhook', '--port', '0', '--native-sidecar', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile],
      { OSM_HEALTHCHECK_HOST: '127.0.0.1', KUBERNETES_SERVICE_HOST: '', OSM_HEALTHCHECK_KUBE_API: '' },
      (l) => l.msg === 'webhook serving',
    );
    try {
      await expect.poll(output).toContain('kubernetes version not known');
      const body = readFileSync(new URL('../fixtures/webhook/tcp-socket.json', import.meta.url), 'utf8');
      const answer = await postAdmission({ port: line.port as number, ca: cert.cert, body });
      const patch = JSON.parse(
        Buffer.from(JSON.parse(answer.body).response.patch, 'base64').toString('utf8'),
      ) as { path: string; value: unknown }[];
      expect(patch.find((op) => op.path === '/spec/initContainers')?.value).toMatchObject([
        { name: 'osm-healthcheck-init' },
      ]);
      await expect
        .poll(output)
        .toContain('no API server to ask: KUBERNETES_SERVICE_HOST is not set and --kube-api is not given');
    } finally {
      child.kill('SIGKILL');
      cert.cleanup();
    }
  });

  it.each([
    { name: 'the flag', args: ['--companion-cpu-limit', '0.25'], env: {}, stored: '250m' },
    { name: 'the environment', args: [], env: { OSM_HEALTHCHECK_COMPANION_CPU_LIMIT: '2000m' }, stored: '2' },
    {
      name: 'the flag over the environment',
      args: ['--companion-cpu-limit', '1'],
      env: { OSM_HEALTHCHECK_COMPANION_CPU_LIMIT: '3' },
      stored: '1',
    },
    {
      name: 'empty (the chart default): none',
      args: [],
      env: { OSM_HEALTHCHECK_COMPANION_CPU_LIMIT: '' },
      stored: undefined,
    },
  ])("--companion-cpu-limit from $name, kept in the API server's form", async ({ args, env, stored }) => {
    const cert = makeTestCert();
    const { child, line } = await startCli(
      ['webhook', '--port', '0', '--tls-cert', cert.certFile, '--tls-key', cert.keyFile, ...args],
      {
        OSM_HEALTHCHECK_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_HOST: '',
        OSM_HEALTHCHECK_KUBE_API: '',
        ...env,
      },
      (l) => l.msg === 'webhook serving',
    );
    try {
      expect(line.companionCpuLimit).toBe(stored);
    } finally {
      child.kill('SIGKILL');
      cert.cleanup();
    }
  });

  it.each([
    {
      name: 'self-managed TLS outside a cluster',
      args: [],
      code: 2,
      message:
        'osm-healthcheck webhook: self-managed TLS (no --tls-cert/--tls-key) needs the API server, but KUBERNETES_SERVICE_HOST is not set and --kube-api is not given (--kube-api URL, or --tls-cert and --tls-key) [OSM_HC_USAGE]',
    },
    {
      name: 'a certificate without its key',
      args: ['--tls-cert', 'c.pem'],
      code: 2,
      message:
        'osm-healthcheck webhook: --tls-cert "c.pem" without --tls-key (both for certificate files, or neither for self-managed TLS) [OSM_HC_USAGE]',
    },
    {
      name: 'a key without its certificate',
      args: ['--tls-key', 'k.pem'],
      code: 2,
      message: 'osm-healthcheck webhook: --tls-key "k.pem" without --tls-cert (both',
    },
    {
      name: 'a namespace that is no DNS label',
      args: ['--kube-api', 'https://127.0.0.1:1', '--namespace', 'Kube_System'],
      code: 2,
      message: '--namespace "Kube_System" is not accepted (a Kubernetes DNS label)',
    },
    {
      name: 'a Secret name that is no object name',
      args: ['--kube-api', 'https://127.0.0.1:1', '--namespace', 'ns', '--tls-secret', 'tls/secret'],
      code: 2,
      message: '--tls-secret "tls/secret" is not accepted (a Kubernetes object name)',
    },
    {
      name: 'a resync of zero seconds',
      args: ['--kube-api', 'https://127.0.0.1:1', '--namespace', 'ns', '--tls-resync', '0'],
      code: 2,
      message: '--tls-resync "0" is not accepted (whole seconds 1-86400)',
    },
    {
      name: 'a bad port',
      args: ['--tls-cert', 'c', '--tls-key', 'k', '--port', 'https'],
      code: 2,
      message: '--port "https" is not accepted (a port 0-65535)',
    },
    {
      name: 'a bad log level',
      args: ['--tls-cert', 'c', '--tls-key', 'k', '--log-level', 'loud'],
      code: 2,
      message: 'is not accepted (fatal, error,',
    },
    { name: 'an unknown flag', args: ['--tls'], code: 2, message: 'unknown flag --tls (webhook takes ' },
    {
      name: 'a Pod Security default that is no level',
      args: ['--tls-cert', 'c', '--tls-key', 'k', '--pod-security-default', 'Baseline'],
      code: 2,
      message: '--pod-security-default "Baseline" is not accepted (privileged, baseline, restricted)',
    },
    {
      name: 'a companion CPU limit that is no quantity',
      args: ['--tls-cert', 'c', '--tls-key', 'k', '--companion-cpu-limit', '1 core'],
      code: 2,
      message:
        '--companion-cpu-limit "1 core" is no Kubernetes quantity (a CPU quantity above 0, e.g. 500m or 0.5)',
    },
    {
      name: 'a companion CPU limit of zero',
      args: ['--tls-cert', 'c', '--tls-key', 'k', '--companion-cpu-limit', '0m'],
      code: 2,
      message: '--companion-cpu-limit "0m" is not more than 0 (a CPU quantity above 0',
    },
    {
      name: 'a placement that is none',
      args: ['--tls-cert', 'c', '--tls-key', 'k', '--placement', 'last'],
      code: 2,
      message:
        '--placement "last" is not accepted (--placement auto, native-sidecar, first, or --native-sidecar alone)',
    },
    {
      name: 'a placement from the environment that is none',
      args: ['--tls-cert', 'c', '--tls-key', 'k'],
      env: { OSM_HEALTHCHECK_PLACEMENT: 'native' },
      code: 2,
      message:
        'osm-healthcheck webhook: env OSM_HEALTHCHECK_PLACEMENT "native" is not accepted (--placement auto,',
    },
    {
      name: '--native-sidecar against another placement',
      args: ['--tls-cert', 'c', '--tls-key', 'k', '--native-sidecar', '--placement', 'first'],
      code: 2,
      message: '--native-sidecar (--placement native-sidecar) and --placement first both given (',
    },
    {
      name: 'an API server without TLS',
      args: ['--tls-cert', 'c', '--tls-key', 'k', '--native-sidecar', '--kube-api', 'http://10.96.0.1'],
      code: 2,
      message: '--kube-api "http://10.96.0.1" is not accepted (an https:// URL)',
    },
    {
      name: 'a missing certificate file',
      args: ['--tls-cert', '/nonexistent/tls.crt', '--tls-key', '/nonexistent/tls.key'],
      code: 1,
      message: 'cannot read the TLS certificate /nonexistent/tls.crt: ENOENT',
    },
  ])('refuses $name', async ({ args, env, code, message }) => {
    const exit = await runCli(['webhook', ...args], {
      env: {
        OSM_HEALTHCHECK_TLS_CERT: '',
        OSM_HEALTHCHECK_TLS_KEY: '',
        KUBERNETES_SERVICE_HOST: '',
        OSM_HEALTHCHECK_KUBE_API: '',
        ...env,
      },
    });
    expect(exit.code).toBe(code);
    expect(exit.stderr).toContain(message);
  });

  it('--help names every flag', async () => {
    const exit = await runCli(['webhook', '--help']);
    expect(exit.code).toBe(0);
    for (const flag of [
      '--tls-cert',
      '--tls-key',
      '--namespace',
      '--service',
      '--tls-secret',
      '--webhook-config',
      '--tls-resync',
      '--port',
      '--image',
      '--placement MODE',
      '--native-sidecar',
      '--sidecar-containers-gate',
      '--pod-security-default',
      '--companion-cpu-limit',
      'OSM_HEALTHCHECK_COMPANION_CPU_LIMIT',
      '--kube-api',
      '--kube-ca',
      '--kube-token-file',
      '--log-level',
    ]) {
      expect(exit.stdout).toContain(flag);
    }
  });
});
