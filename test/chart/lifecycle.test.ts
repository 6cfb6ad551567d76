// A release's life, with the chart's own objects: an upgrade to another image changes only the webhook's
// Deployment, which rolls without a gap in admissions; and install, upgrade, uninstall, install again against the
// stand-in API server, with the built CLI started from the chart's container (args and env, as kubelet would):
// the caBundle is filled and kept, the Secret the webhook made survives the uninstall (Helm never owned it) and
// the next install takes it up again as its own, with no step in between.

import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postAdmission } from '../helpers/admission-post.js';
import { startCli } from '../helpers/cli.js';
import { NAMESPACE, renderChart, skipWithoutHelm } from '../helpers/helm.js';
import { type KubeStandin, kubeEnv, startKubeStandin } from '../helpers/kube-standin.js';
import type { Manifest } from '../helpers/kustomize.js';
import { flag, matches } from '../webhook/deploy-manifests.js';
import { caBundles, readyz } from '../webhook/tls/replica.js';

const find = (objects: Manifest[], kind: string): Manifest => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0] as Manifest;
};
const container = (objects: Manifest[]): Manifest =>
  find(objects, 'Deployment').spec.template.spec.containers[0];
const id = (o: Manifest): string => `${o.kind}/${o.metadata.name}`;

describe.skipIf(skipWithoutHelm('chart lifecycle tests'))('the chart over a release’s life', () => {
  it('an upgrade to another image changes only the Deployment, and its rollout keeps admissions going', async () => {
    const [before, after] = await Promise.all([
      renderChart({ image: { tag: '0.1.0' } }),
      renderChart({ image: { tag: '0.2.0' } }),
    ]);
    expect(after.map(id)).toEqual(before.map(id));
    // helm template prints in Helm's install order: the configuration last, after the Service and Deployment
    // that answer it (Helm ranks no webhook configuration kind, and puts those it does not rank last).
    expect(after.map((o) => o.kind).at(-1)).toBe('MutatingWebhookConfiguration');
    const changed = after.filter((o, i) => JSON.stringify(o) !== JSON.stringify(before[i])).map(id);
    expect(changed).toEqual(['Deployment/osm-healthcheck-webhook']);
    // Within it, the image and the image it injects, and nothing else.
    const c = container(after);
    expect(c.image).toBe('osm-healthcheck:0.2.0');
    const undo = JSON.parse(
      JSON.stringify(find(after, 'Deployment')).replaceAll('osm-healthcheck:0.2.0', 'osm-healthcheck:0.1.0'),
    );
    expect(undo).toEqual(find(before, 'Deployment'));

    const deployment = find(after, 'Deployment');
    const pod = deployment.spec.template;
    // A new pod is Ready before an old one goes, and Ready means serving a certificate the caBundle trusts.
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(deployment.spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'https', scheme: 'HTTPS' });
    // A drain keeps one.
    const budget = find(after, 'PodDisruptionBudget');
    expect(budget.spec.minAvailable).toBeGreaterThanOrEqual(1);
    expect(budget.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    expect(matches(budget.spec.selector, pod.metadata.labels)).toBe(true);
    // A pod that goes serves on while its endpoint leaves the Service, then drains within its grace period.
    const [sleep, seconds] = c.lifecycle.preStop.exec.command as [string, string];
    expect(sleep).toBe('sleep');
    const timeout = find(after, 'MutatingWebhookConfiguration').webhooks[0].timeoutSeconds as number;
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(Number(seconds) + timeout);
  });

  describe('against the stand-in API server', () => {
    let standin: KubeStandin;
    const running: ChildProcess[] = [];
    const body = readFileSync(new URL('../fixtures/webhook/tcp-socket.json', import.meta.url), 'utf8');

    beforeEach(async () => {
      standin = await startKubeStandin({
        namespace: NAMESPACE,
        secretName: 'osm-healthcheck-webhook-tls',
        webhookConfig: 'osm-healthcheck',
      });
    });
    afterEach(async () => {
      for (const child of running.splice(0)) child.kill('SIGKILL');
      await standin.close();
    });

    /** `helm install`'s part here: the MutatingWebhookConfiguration as rendered (the rest is not stored). */
    const install = (objects: Manifest[]) => {
      const config = find(objects, 'MutatingWebhookConfiguration');
      standin.putConfig(config.metadata.name, config);
      // The admitted pod's namespace, as the webhook's namespace watch finds it: no Pod Security label.
      standin.namespaces.put(JSON.parse(body).request.namespace, {});
    };

    /** A webhook pod: the built CLI with the chart's args and env, its port 0 and the stand-in for the cluster. */
    async function startPod(objects: Manifest[]): Promise<{ child: ChildProcess; port: number }> {
      const c = container(objects);
      const args = [...(c.args as string[])];
      args[args.indexOf('--port') + 1] = '0';
      args[args.indexOf('--metrics-port') + 1] = '0';
      const env: NodeJS.ProcessEnv = {
        OSM_HEALTHCHECK_TLS_CERT: '',
        OSM_HEALTHCHECK_TLS_KEY: '',
        OSM_HEALTHCHECK_HOST: '127.0.0.1',
        ...kubeEnv(standin),
      };
      for (const e of c.env as Manifest[]) {
        if (e.valueFrom !== undefined) {
          // kubelet's downward API: the pod's namespace is the release's.
          expect(e.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
          env[e.name] = NAMESPACE;
        } else env[e.name] = e.value;
      }
      const started = await startCli(args, env, (l) => l.msg === 'self-managed TLS in place');
      running.push(started.child);
      const serving = started
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'webhook serving');
      return { child: started.child, port: serving?.port as number };
    }

    async function stop(child: ChildProcess): Promise<void> {
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    }

    /** An admission as the API server sends it (trusting only the caBundle): the images of osm-healthcheck in the patch. */
    async function injectedImages(port: number): Promise<string[]> {
      const [bundle] = caBundles(standin);
      const answer = await postAdmission({
        port,
        ca: bundle as string,
        body,
        servername: `osm-healthcheck-webhook.${NAMESPACE}.svc`,
      });
      expect(answer.status).toBe(200);
      const review = JSON.parse(answer.body) as { response: { patch: string } };
      const patch = Buffer.from(review.response.patch, 'base64').toString('utf8');
      const images = [...patch.matchAll(/"image":"([^"]+)"/g)].map((m) => m[1] as string);
      return [...new Set(images.filter((image) => image.startsWith('osm-healthcheck')))];
    }

    const secretCa = (): string =>
      Buffer.from(standin.secret('osm-healthcheck-webhook-tls')?.data['ca.crt'] ?? '', 'base64').toString();

    it('install, upgrade, uninstall, install again: the Secret is kept and taken up again, the caBundle filled', async () => {
      const first = await renderChart({ image: { tag: '0.1.0' } });
      const second = await renderChart({ image: { tag: '0.2.0' } });

      // install: the webhook makes its Secret and fills the caBundle of every entry.
      install(first);
      const pod1 = await startPod(first);
      expect(await readyz(pod1.port)).toEqual({ status: 200, body: 'ok\n' });
      const ca = secretCa();
      expect(ca).toContain('BEGIN CERTIFICATE');
      expect(caBundles(standin)).toEqual([ca, ca]);
      expect(await injectedImages(pod1.port)).toEqual(['osm-healthcheck:0.1.0']);
      const written = standin.secret('osm-healthcheck-webhook-tls')?.metadata.resourceVersion;

      // upgrade: the MutatingWebhookConfiguration renders the same, so Helm's three-way merge leaves the live one
      // (with its caBundle) alone; the new pod serves the same Secret and injects the new image.
      expect(find(second, 'MutatingWebhookConfiguration')).toEqual(
        find(first, 'MutatingWebhookConfiguration'),
      );
      const pod2 = await startPod(second);
      await stop(pod1.child);
      expect(await injectedImages(pod2.port)).toEqual(['osm-healthcheck:0.2.0']);
      expect(caBundles(standin)).toEqual([ca, ca]);

      // uninstall: Helm deletes what it made; the Secret is not among it and stays.
      expect(second.filter((o) => o.kind === 'Secret')).toEqual([]);
      standin.putConfig('osm-healthcheck', undefined);
      await stop(pod2.child);
      expect(secretCa()).toBe(ca);

      // install again: a configuration without caBundle, and the Secret left over, which the webhook takes up.
      install(second);
      expect(caBundles(standin)).toEqual(['', '']);
      const pod3 = await startPod(second);
      expect(await readyz(pod3.port)).toEqual({ status: 200, body: 'ok\n' });
      expect(caBundles(standin)).toEqual([ca, ca]);
      expect(await injectedImages(pod3.port)).toEqual(['osm-healthcheck:0.2.0']);
      expect(standin.log.filter((l) => /^(create|update) secrets/.test(l))).toEqual(['create secrets 201']);
      expect(standin.secret('osm-healthcheck-webhook-tls')?.metadata.resourceVersion).toBe(written);
      expect(flag(container(second).args, '--tls-secret')).toBe('osm-healthcheck-webhook-tls');
    });
  });
});
