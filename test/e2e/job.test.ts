// A Job's pod, end to end: `inject --kube-version 1.29` makes the companion a native sidecar; played as kubelet
// runs it (test/e2e/job-pod.ts), the app is probed through the companion, exits 0, kubelet stops the companion
// with SIGTERM and every container has ended: the Job completes. The same pod with the companion an ordinary
// container (an earlier release's output) never completes: the companion is still running when the bound ends.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { backendWorks, LAB_READY, warnUnlessRoot } from '../init/lab.js';
import { playJob } from './job-pod.js';

warnUnlessRoot('test/e2e/job.test.ts (a Job pod in network namespaces)');

const JOB = fileURLToPath(new URL('../fixtures/e2e/job.yaml', import.meta.url));
const IMAGE = 'osm-healthcheck:e2e';
/** How long an ordinary companion is given to end after the app did: it never will. */
const NEVER_MS = 3_000;

describe.skipIf(!LAB_READY)('a Job pod, end to end', () => {
  it('native sidecar (1.29): the app exits 0, kubelet stops the companion, the pod completes', async () => {
    const inject = await runCli(['inject', '-f', JOB, '--image', IMAGE, '--kube-version', '1.29']);
    expect(inject.code, inject.stderr).toBe(0);
    expect(inject.stderr.trimEnd()).toBe(
      'note: Job/report: restartPolicy Never: the companion is a native sidecar, which kubelet stops once the containers end: the cluster runs Kubernetes 1.29',
    );
    const backend = (await backendWorks('nft')) ? 'nft' : 'legacy';
    const result = await playJob({
      manifest: inject.stdout,
      image: IMAGE,
      tag: 'job-n',
      backend,
      neverMs: NEVER_MS,
    });
    expect(result.events, result.transcript).toEqual([
      'init osm-healthcheck-init: exit 0',
      'start osm-healthcheck (native sidecar)',
      'startupProbe osm-healthcheck: passed',
      'start report',
      expect.stringMatching(
        /^probe liveness\/report: 200 liveness report: GET http:\/\/10\.251\.0\.2:8081\/status -> 200 in \d+ ms$/,
      ),
      'exit report: 0',
      'SIGTERM osm-healthcheck',
      'exit osm-healthcheck: 0',
    ]);
    expect(result.phase).toBe('Succeeded');
  }, 60_000);

  it('ordinary companion (the bug): the app exits 0, the companion runs on, the pod never completes', async () => {
    // What earlier releases wrote for every version: inject's output for the same pod as if it ran on.
    const always = readFileSync(JOB, 'utf8').replace('restartPolicy: Never', 'restartPolicy: Always');
    const inject = await runCli(['inject', '-f', '-', '--image', IMAGE, '--placement', 'first'], {
      input: always,
    });
    expect(inject.code, inject.stderr).toBe(0);
    const manifest = inject.stdout.replace('restartPolicy: Always', 'restartPolicy: Never');
    const backend = (await backendWorks('nft')) ? 'nft' : 'legacy';
    const result = await playJob({ manifest, image: IMAGE, tag: 'job-o', backend, neverMs: NEVER_MS });
    expect(result.events, result.transcript).toEqual([
      'init osm-healthcheck-init: exit 0',
      'start osm-healthcheck',
      'postStart osm-healthcheck: exit 0',
      'start report',
      expect.stringMatching(/^probe liveness\/report: 200 /),
      'exit report: 0',
      'osm-healthcheck: still running',
    ]);
    expect(result.phase).toBe('Running');
  }, 60_000);
});
