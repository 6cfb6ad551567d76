// The PodSecurity oracle the webhook's tests create pods against (test/helpers/pod-security.ts): each check with
// the plugin's own message, the version it starts at, and how labels resolve to a policy.

import { describe, expect, it } from 'vitest';
import { podSecurityRefusal, podSecurityViolations } from '../helpers/pod-security.js';

const good = {
  name: 'app',
  securityContext: {
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  },
};

describe('podSecurityViolations', () => {
  it.each([
    {
      name: 'a restricted-clean container',
      spec: { containers: [good] },
      level: 'restricted' as const,
      want: [],
    },
    {
      name: 'NET_ADMIN at baseline',
      spec: {
        initContainers: [
          { name: 'init', securityContext: { capabilities: { add: ['NET_RAW', 'NET_ADMIN', 'CHOWN'] } } },
        ],
      },
      level: 'baseline' as const,
      want: [
        'non-default capabilities (container "init" must not include "NET_ADMIN", "NET_RAW" in securityContext.capabilities.add)',
      ],
    },
    {
      name: 'privileged at baseline',
      spec: { containers: [{ name: 'a', securityContext: { privileged: true } }] },
      level: 'baseline' as const,
      want: ['privileged (container "a" must not set securityContext.privileged=true)'],
    },
    {
      name: 'Unconfined at baseline',
      spec: { securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [{ name: 'a' }] },
      level: 'baseline' as const,
      want: ['seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
    },
    {
      name: 'a bare container at restricted',
      spec: { containers: [{ name: 'a' }] },
      level: 'restricted' as const,
      want: [
        'allowPrivilegeEscalation != false (container "a" must set securityContext.allowPrivilegeEscalation=false)',
        'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"])',
        'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true)',
        'seccompProfile (pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
      ],
    },
    {
      name: 'pod-level settings cover containers',
      spec: {
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'Localhost' } },
        containers: [
          {
            name: 'a',
            securityContext: {
              allowPrivilegeEscalation: false,
              capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
            },
          },
        ],
      },
      level: 'restricted' as const,
      want: [],
    },
    {
      name: 'root init container at restricted',
      spec: {
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        initContainers: [
          {
            name: 'i',
            securityContext: {
              runAsNonRoot: false,
              runAsUser: 0,
              allowPrivilegeEscalation: false,
              capabilities: { drop: ['ALL'] },
            },
          },
        ],
      },
      level: 'restricted' as const,
      want: [
        'runAsNonRoot != true (container "i" must not set securityContext.runAsNonRoot=false)',
        'runAsUser=0 (container "i" must not set runAsUser=0)',
      ],
    },
  ])('$name', ({ spec, level, want }) => {
    expect(podSecurityViolations(spec, level)).toEqual(want);
  });

  it('checks start at their version: restricted v1.21 has no capabilities drop, v1.22 has', () => {
    const spec = {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'a', securityContext: { allowPrivilegeEscalation: false } }],
    };
    expect(podSecurityViolations(spec, 'restricted', 'v1.21')).toEqual([]);
    expect(podSecurityViolations(spec, 'restricted', 'v1.22')).toHaveLength(1);
  });
});

describe('podSecurityRefusal: labels to policy, as api.PolicyToEvaluate', () => {
  const spec = { containers: [{ name: 'a', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }] };
  it.each<{ name: string; labels: Record<string, string>; want: string | undefined }>([
    { name: 'no label, default privileged', labels: {}, want: undefined },
    {
      name: 'baseline',
      labels: { 'pod-security.kubernetes.io/enforce': 'baseline' },
      want: '"baseline:latest"',
    },
    {
      name: 'invalid level: restricted',
      labels: { 'pod-security.kubernetes.io/enforce': 'nope' },
      want: '"restricted:latest"',
    },
    {
      name: 'invalid version: latest',
      labels: {
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/enforce-version': 'v2.0',
      },
      want: '"baseline:latest"',
    },
    {
      name: 'a version',
      labels: {
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/enforce-version': 'v1.25',
      },
      want: '"baseline:v1.25"',
    },
  ])('$name', ({ labels, want }) => {
    const refusal = podSecurityRefusal('p', spec, labels);
    if (want === undefined) expect(refusal).toBeUndefined();
    else
      expect(refusal).toMatch(
        new RegExp(`^pods "p" is forbidden: violates PodSecurity ${want}: non-default capabilities`),
      );
  });
});
