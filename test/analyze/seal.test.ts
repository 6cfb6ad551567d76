// analyze's view of the sealed mode, from pods as the API server holds them: what each pod of ours says (its record
// asked for the seal, init's termination message gave the verdict), per node with or without its agent, the pods
// that run open where the agent runs (with the restart that seals them), and what removing the agent would break.

import { describe, expect, it } from 'vitest';
import { table } from '../../src/analyze/report.js';
import { podSeal, SealTally, sealSection } from '../../src/analyze/seal.js';
import { recordValue } from '../helpers/records.js';

const record = (seal: boolean, bypass = 'init-container') =>
  recordValue(seal, { placement: 'native-sidecar', bypass: bypass as 'init-container' });

function pod(name: string, node: string, opts: { seal?: boolean; message?: string; bypass?: string } = {}) {
  return {
    metadata: {
      name,
      namespace: 'shop',
      annotations: { 'osm-healthcheck/status': record(opts.seal ?? true, opts.bypass) },
    },
    spec: { nodeName: node },
    status: {
      initContainerStatuses:
        opts.message === undefined
          ? []
          : [
              {
                name: 'osm-healthcheck-init',
                state: { terminated: { exitCode: 0, message: `${opts.message}\n` } },
              },
            ],
    },
  };
}
const agent = (node: string, phase = 'Running') => ({ spec: { nodeName: node }, status: { phase } });
const SEALED =
  "sealed: 15901-15904 bypass the mesh only from 169.254.7.127 and fd16:..., the node agent's source";
const OPEN =
  'open: 15901-15904 bypass the mesh from every source, as without the node agent, because no proof connection from the node agent: no answer from the agent at 10.0.0.2:15910: connect ECONNREFUSED';

describe('podSeal', () => {
  it.each([
    { name: 'sealed', pod: pod('a', 'n1', { message: SEALED }), want: { node: 'n1', state: 'sealed' } },
    {
      name: 'open, with why',
      pod: pod('a', 'n1', { message: OPEN }),
      want: {
        node: 'n1',
        state: 'open',
        why: 'no proof connection from the node agent: no answer from the agent at 10.0.0.2:15910: connect ECONNREFUSED',
      },
    },
    { name: 'init has not said yet', pod: pod('a', 'n1'), want: { node: 'n1', state: 'proving' } },
    {
      name: 'injected without the seal',
      pod: pod('a', 'n1', { seal: false }),
      want: { node: 'n1', state: 'not asked' },
    },
    {
      name: "a mesh annotation's bypass: nothing to seal",
      pod: pod('a', 'n1', { bypass: 'mesh:istio' }),
      want: undefined,
    },
    { name: 'not scheduled', pod: { ...pod('a', 'n1'), spec: {} }, want: undefined },
    { name: 'not ours', pod: { metadata: { name: 'x' }, spec: { nodeName: 'n1' } }, want: undefined },
  ])('$name', ({ pod: p, want }) => {
    expect(podSeal(p)).toEqual(want);
  });
});

describe('SealTally', () => {
  const deployment = (name: string) => ({ namespace: 'shop', kind: 'Deployment', name });

  it('per node; the open pods where the agent runs, with the restart; what removing an agent breaks', () => {
    const tally = new SealTally();
    tally.pod(pod('web-1', 'n1', { message: SEALED }), deployment('web'), 'web-1');
    tally.pod(pod('web-2', 'n1', { message: SEALED }), deployment('web'), 'web-2');
    tally.pod(pod('old-1', 'n1', { seal: false }), deployment('old'), 'old-1');
    tally.pod(pod('web-3', 'n2', { message: OPEN }), deployment('web'), 'web-3');
    expect(tally.asked()).toBe(true);
    tally.agentPod(agent('n1'));
    tally.agentPod(agent('n2', 'Pending'));
    const report = tally.report();
    expect(report.nodes).toEqual([
      { node: 'n1', agent: true, sealed: 2, open: 0, notAsked: 1, whyOpen: [] },
      {
        node: 'n2',
        agent: false,
        sealed: 0,
        open: 1,
        notAsked: 0,
        whyOpen: [
          'no proof connection from the node agent: no answer from the agent at 10.0.0.2:15910: connect ECONNREFUSED',
        ],
      },
    ]);
    // n2 has no running agent: its open pod is named, with no restart that would seal it.
    expect(report.open).toEqual([
      {
        ...deployment('old'),
        node: 'n1',
        pods: ['old-1'],
        state: 'not asked',
        fix: 'kubectl -n shop rollout restart deployment/old',
      },
      { ...deployment('web'), node: 'n2', pods: ['web-3'], state: 'open' },
    ]);
    const lines = sealSection(report, table);
    expect(lines).toContain(
      "  removing the node agent's rules from n1 (node --cleanup) fails every probe of its 2 sealed pods: set the webhook's --seal off and restart them open first (docs/install.md#the-node-agent)",
    );
    expect(lines).toContain(
      '  n1 shop Deployment/old old-1 (not asked): kubectl -n shop rollout restart deployment/old',
    );
    expect(lines).toContain('  n2 shop Deployment/web web-3 (open): no agent on n2');
    expect(lines.join('\n')).toMatch(/^n2 +none +0 +1 +no proof connection/m);
  });

  it('says nothing where no pod asked for the seal and no agent runs', () => {
    const tally = new SealTally();
    tally.pod(pod('a', 'n1', { seal: false }), deployment('a'), 'a');
    expect(tally.asked()).toBe(false);
    expect(sealSection(tally.report(), table)).toEqual([]);
  });
});
