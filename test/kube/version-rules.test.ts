// The rules of each supported Kubernetes version that the admission mirror follows, and LimitRanger's sum over a
// pod before 1.27 (a resource some container leaves out is not in the pod's total).

import { describe, expect, it } from 'vitest';
import { everyContainerParts, limitRangerPodAmounts, shapeOf } from '../../src/kube/pod-resources.js';
import { formatQuantity } from '../../src/kube/quantity.js';
import { EVERY_SUPPORTED_VERSION, rulesOfVersion } from '../../src/kube/version-rules.js';

describe('rulesOfVersion', () => {
  it.each([
    {
      minor: 26,
      gate: false,
      rules: [{ podItemsNeedEveryContainer: true, nativeSidecars: false, podLevel: false }],
    },
    {
      minor: 27,
      gate: false,
      rules: [{ podItemsNeedEveryContainer: false, nativeSidecars: false, podLevel: false }],
    },
    {
      minor: 28,
      gate: true,
      rules: [{ podItemsNeedEveryContainer: false, nativeSidecars: true, podLevel: false }],
    },
    {
      minor: 29,
      gate: false,
      rules: [{ podItemsNeedEveryContainer: false, nativeSidecars: true, podLevel: false }],
    },
    {
      minor: 32,
      gate: false,
      rules: [
        { podItemsNeedEveryContainer: false, nativeSidecars: true, podLevel: false },
        { podItemsNeedEveryContainer: false, nativeSidecars: true, podLevel: true },
      ],
    },
    {
      minor: 34,
      gate: false,
      rules: [{ podItemsNeedEveryContainer: false, nativeSidecars: true, podLevel: true }],
    },
    {
      minor: 36,
      gate: false,
      rules: [{ podItemsNeedEveryContainer: false, nativeSidecars: true, podLevel: true }],
    },
  ])('1.$minor (SidecarContainers gate $gate)', ({ minor, gate, rules }) => {
    expect(rulesOfVersion({ major: 1, minor }, gate)).toEqual(rules);
  });

  it('a major version other than 1: every supported version', () => {
    expect(rulesOfVersion({ major: 2, minor: 0 }, false)).toBe(EVERY_SUPPORTED_VERSION);
  });
});

describe("LimitRanger's total of a pod for its items of type Pod", () => {
  const pod = shapeOf({
    initContainers: [{ name: 'setup', resources: { limits: { cpu: '300m' } } }],
    containers: [
      { name: 'app', resources: { limits: { cpu: '200m', memory: '64Mi' } } },
      { name: 'ours', resources: { limits: { memory: '32Mi' } } },
    ],
  });
  const shown = (
    amounts: ReadonlyMap<string, { milli: bigint; format: 'DecimalSI' | 'BinarySI' | 'DecimalExponent' }>,
  ) => Object.fromEntries([...amounts].map(([name, q]) => [name, formatQuantity(q)]));

  it("before 1.27: cpu is left out of the containers' sum (one container lacks it), the init container's counts", () => {
    expect(shown(everyContainerParts(pod, 'limits').sum)).toEqual({ memory: '96Mi' });
    expect(shown(limitRangerPodAmounts(pod, 'limits', false, true))).toEqual({ cpu: '300m', memory: '96Mi' });
  });

  it('from 1.27: what is there is added up', () => {
    expect(shown(limitRangerPodAmounts(pod, 'limits', false, false))).toEqual({
      cpu: '300m',
      memory: '96Mi',
    });
    const withMore = shapeOf({
      containers: [
        { name: 'app', resources: { limits: { cpu: '400m' } } },
        { name: 'ours', resources: { limits: { memory: '32Mi' } } },
      ],
    });
    expect(shown(limitRangerPodAmounts(withMore, 'limits', false, false))).toEqual({
      cpu: '400m',
      memory: '32Mi',
    });
    expect(shown(limitRangerPodAmounts(withMore, 'limits', false, true))).toEqual({});
  });
});
