// Self-managed TLS when things go wrong: the API server unreachable or hanging at start-up, RBAC missing a verb, the
// MutatingWebhookConfiguration missing, a Secret of that name that is not ours, and one of ours holding garbage.
// Each: one clear log line per change of state, /readyz 503 with the reason, /healthz 200, and recovery once fixed.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type KubeStandin, startKubeStandin, webhookConfiguration } from '../../helpers/kube-standin.js';
import type { Harness } from '../harness.js';
import { type Clock, CONFIG, NAMESPACE, readyz, SECRET, SERVICE, startReplica } from './replica.js';

let standin: KubeStandin;
let clock: Clock;
let replica: Harness | undefined;

beforeEach(async () => {
  standin = await startKubeStandin({ namespace: NAMESPACE, secretName: SECRET, webhookConfig: CONFIG });
  standin.putConfig(CONFIG, webhookConfiguration(CONFIG, NAMESPACE, SERVICE));
  clock = { now: Date.now() };
});

afterEach(async () => {
  await replica?.close();
  replica = undefined;
  await standin.close();
});

const problems = (r: Harness) => r.logs.filter((l) => l.msg === 'self-managed TLS not in place');
const status = (r: Harness) => readyz(r.webhook.port).then((a) => a.status);

/** Waits until the webhook has retried `times` more requests matching `prefix`, so a repeated log line would show. */
async function retried(prefix: string, times: number): Promise<void> {
  const before = standin.log.filter((l) => l.startsWith(prefix)).length;
  await expect
    .poll(() => standin.log.filter((l) => l.startsWith(prefix)).length)
    .toBeGreaterThanOrEqual(before + times);
}

describe('self-managed TLS, bad cases', () => {
  it.each([
    {
      name: 'refuses every connection',
      mode: 'refuse' as const,
      reason:
        /get secrets "osm-healthcheck-webhook-tls" in namespace "osm-healthcheck": GET https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/osm-healthcheck\/secrets\/osm-healthcheck-webhook-tls: (socket hang up|read ECONNRESET|Client network socket disconnected)/,
    },
    {
      name: 'never answers',
      mode: 'hang' as const,
      reason:
        /get secrets "osm-healthcheck-webhook-tls" in namespace "osm-healthcheck": .*no answer within 200 ms/,
    },
  ])(
    'API server that $name at start-up: not ready, one line, retries, ready once it answers',
    async ({ mode, reason }) => {
      standin.outage(mode);
      replica = await startReplica(standin, clock, 200);
      await expect.poll(() => problems(replica as Harness).length).toBe(1);
      const [line] = problems(replica);
      expect(line).toMatchObject({ level: 'warn', code: 'OSM_HC_KUBE', err: expect.stringMatching(reason) });
      const answer = await readyz(replica.webhook.port);
      expect(answer.status).toBe(503);
      expect(answer.body).toMatch(
        /^not ready: no certificate from Secret osm-healthcheck\/osm-healthcheck-webhook-tls yet: /,
      );
      expect(await readyz(replica.webhook.port, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
      standin.outage(undefined);
      await expect.poll(() => status(replica as Harness)).toBe(200);
      // A line when the problem starts or changes: a refused connection reads as a hang-up or a reset as the
      // kernel's timing has it (on a busy machine both come), so each line is that problem and no other.
      for (const logged of problems(replica)) {
        expect(logged).toMatchObject({
          level: 'warn',
          code: 'OSM_HC_KUBE',
          err: expect.stringMatching(reason),
        });
      }
      if (mode === 'hang') expect(problems(replica)).toHaveLength(1);
    },
  );

  it('RBAC without update on the MutatingWebhookConfiguration: names the verb and resource, once', async () => {
    standin.rbac.denied.add('update mutatingwebhookconfigurations');
    replica = await startReplica(standin, clock);
    await expect.poll(() => problems(replica as Harness).length).toBe(1);
    await retried('update mutatingwebhookconfigurations', 3);
    expect(problems(replica)).toEqual([
      expect.objectContaining({
        level: 'error',
        err: `update mutatingwebhookconfigurations "osm-healthcheck": 403 Forbidden: mutatingwebhookconfigurations.admissionregistration.k8s.io "osm-healthcheck" is forbidden: User "${standin.user}" cannot update resource "mutatingwebhookconfigurations" in API group "admissionregistration.k8s.io" at the cluster scope`,
      }),
    ]);
    expect((await readyz(replica.webhook.port)).body).toMatch(
      /^not ready: the caBundle of osm-healthcheck is not known: update mutatingwebhookconfigurations/,
    );
    standin.rbac.denied.clear();
    await expect.poll(() => status(replica as Harness)).toBe(200);
  });

  it('the MutatingWebhookConfiguration missing: serves its certificate, not ready until it appears', async () => {
    standin.putConfig(CONFIG, undefined);
    replica = await startReplica(standin, clock);
    await expect.poll(() => problems(replica as Harness).length).toBe(1);
    await retried('get mutatingwebhookconfigurations', 3);
    expect(problems(replica)[0]?.err).toBe(
      'get mutatingwebhookconfigurations "osm-healthcheck": 404 NotFound: mutatingwebhookconfigurations.admissionregistration.k8s.io "osm-healthcheck" not found',
    );
    expect(problems(replica)).toHaveLength(1);
    expect(await status(replica)).toBe(503);
    standin.putConfig(CONFIG, webhookConfiguration(CONFIG, NAMESPACE, SERVICE));
    await expect.poll(() => status(replica as Harness)).toBe(200);
  });

  it('a Secret of that name that is not ours: refused, never written, says so once', async () => {
    const theirs = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET, namespace: NAMESPACE },
      type: 'Opaque',
      data: { 'tls.crt': 'dGhlaXJz' },
    };
    standin.putSecret(SECRET, theirs);
    replica = await startReplica(standin, clock);
    await expect.poll(() => problems(replica as Harness).length).toBe(1);
    await retried('get secrets', 3);
    expect(problems(replica)[0]).toMatchObject({
      level: 'error',
      err: 'Secret osm-healthcheck/osm-healthcheck-webhook-tls exists without the label app.kubernetes.io/managed-by=osm-healthcheck-webhook: it is not ours and is left alone; delete it or choose another name with --tls-secret',
    });
    expect(standin.log.filter((l) => !l.startsWith('get '))).toEqual([]);
    expect(standin.secret(SECRET)?.data).toEqual(theirs.data);
    expect(await status(replica)).toBe(503);
  });

  it('a Secret of ours holding garbage: replaced', async () => {
    standin.putSecret(SECRET, {
      metadata: {
        name: SECRET,
        namespace: NAMESPACE,
        labels: { 'app.kubernetes.io/managed-by': 'osm-healthcheck-webhook' },
      },
      data: { 'ca.crt': 'Z2FyYmFnZQ==', 'ca.key': 'Z2FyYmFnZQ==' },
    });
    replica = await startReplica(standin, clock);
    await expect.poll(() => status(replica as Harness)).toBe(200);
    expect(await replica.logLine((l) => l.msg === 'TLS secret written')).toMatchObject({
      step: 'replace',
      why: expect.stringMatching(/^ca\.crt is no PEM certificate/),
    });
    expect(standin.log).toContain('update secrets osm-healthcheck-webhook-tls 200');
  });
});
