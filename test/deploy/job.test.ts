// deploy/jobs/report.yaml, docs/install.md's Job example, through the built CLI as the webhook would decide it: on
// 1.29+ the companion is a native sidecar (so the Job completes), on 1.26 the Job is left as it is with the
// warning kubectl shows.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT, runCli } from '../helpers/cli.js';

const JOB = 'deploy/jobs/report.yaml';

describe('deploy/jobs/report.yaml', () => {
  it('at 1.29: the companion is a native sidecar, the readiness probe goes to it', async () => {
    const result = await runCli(['inject', '-f', JOB, '--kube-version', '1.29']);
    expect(result.code, result.stderr).toBe(0);
    const spec = parse(result.stdout).spec.template.spec;
    expect(spec.restartPolicy).toBe('Never');
    expect(
      spec.initContainers.map((c: { name: string; restartPolicy?: string }) => [c.name, c.restartPolicy]),
    ).toEqual([
      ['osm-healthcheck-init', undefined],
      ['osm-healthcheck', 'Always'],
    ]);
    expect(spec.containers.map((c: { name: string }) => c.name)).toEqual(['report']);
    expect(spec.containers[0].readinessProbe.httpGet).toMatchObject({
      port: 15902,
      path: '/osm-readiness-probe/report',
    });
  });

  it('at 1.26: left as it is, with the warning that says why', async () => {
    const result = await runCli(['inject', '-f', JOB, '--kube-version', '1.26']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(`${ROOT}${JOB}`, 'utf8'));
    expect(result.stderr.trim()).toBe(
      'warning: Job/report: restartPolicy Never: left untouched, as the cluster runs Kubernetes 1.26, which has no native sidecars: a companion container would never let the pod complete',
    );
  });
});
