// The objects of a big cluster as the API server holds them, for the webhook benchmark and the tests of what the
// webhook keeps of them: a node as a kubelet registers it (about 10 KB: 40 images, conditions, addresses,
// capacity), a namespace with its Pod Security labels, a LimitRange and a ResourceQuota as kubectl applies them.

const hex = (seed, length) => {
  let out = '';
  let x = seed * 2654435761;
  while (out.length < length) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, length);
};

const IMAGE_COUNT = 40;

/** Node `i`: kubelet v1.36.3, except every tenth on v1.35.7 (a rolling upgrade under way). */
export function nodeObject(i) {
  const name = `node-${String(i).padStart(5, '0')}.eu-west-1.compute.internal`;
  const zone = `eu-west-1${'abc'[i % 3]}`;
  const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const time = '2026-11-27T10:00:00Z';
  const condition = (type, status, reason, message) => ({
    type,
    status,
    lastHeartbeatTime: time,
    lastTransitionTime: time,
    reason,
    message,
  });
  const images = Array.from({ length: IMAGE_COUNT }, (_, k) => {
    const repo = `registry.example.com/team-${k % 7}/service-${(i + k) % 97}`;
    return {
      names: [`${repo}@sha256:${hex(i * 100 + k, 64)}`, `${repo}:v${k}.${i % 13}.${(i + k) % 29}`],
      sizeBytes: 10_000_000 + ((i * 7919 + k * 104729) % 500_000_000),
    };
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/instance-type': 'm6i.2xlarge',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'm6i.2xlarge',
        'topology.kubernetes.io/region': 'eu-west-1',
        'topology.kubernetes.io/zone': zone,
        'eks.amazonaws.com/nodegroup': `workers-${i % 5}`,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': `i-${hex(i, 17)}` }),
      },
    },
    spec: {
      podCIDR: `100.${(i >> 8) & 255}.${i & 255}.0/24`,
      podCIDRs: [`100.${(i >> 8) & 255}.${i & 255}.0/24`],
      providerID: `aws:///${zone}/i-${hex(i, 17)}`,
    },
    status: {
      capacity: {
        cpu: '8',
        'ephemeral-storage': '104845292Ki',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: '32386524Ki',
        pods: '58',
      },
      allocatable: {
        cpu: '7910m',
        'ephemeral-storage': '95551679124',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: '31369692Ki',
        pods: '58',
      },
      conditions: [
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address },
        { type: 'InternalDNS', address: name },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hex(i + 1, 32),
        systemUUID: `ec2${hex(i + 2, 5)}-${hex(i + 3, 4)}-${hex(i + 4, 4)}-${hex(i + 5, 4)}-${hex(i + 6, 12)}`,
        bootID: `${hex(i + 7, 8)}-${hex(i + 8, 4)}-${hex(i + 9, 4)}-${hex(i + 10, 4)}-${hex(i + 11, 12)}`,
        kernelVersion: '6.1.112-124.190.amzn2023.x86_64',
        osImage: 'Amazon Linux 2023.6.20241010',
        containerRuntimeVersion: 'containerd://1.7.22',
        kubeletVersion: i % 10 === 9 ? 'v1.35.7-eks-1234567' : 'v1.36.3-eks-7654321',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images,
    },
  };
}

/** `kubectl apply`'s copy of what it applied: every applied object carries one. */
const applied = (object) => ({
  'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(object)}\n`,
});

/** Namespace `i`: Pod Security labels (one level in three of each), and a team's labels. */
export function namespaceObject(i) {
  const level = ['privileged', 'baseline', 'restricted'][i % 3];
  const object = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: `team-${String(i).padStart(4, '0')}`,
      labels: {
        'pod-security.kubernetes.io/enforce': level,
        'pod-security.kubernetes.io/enforce-version': 'latest',
        'pod-security.kubernetes.io/warn': 'restricted',
        'pod-security.kubernetes.io/audit': 'restricted',
        'osm-healthcheck-injection': 'enabled',
        team: `team-${i % 40}`,
        'cost-center': `cc-${1000 + (i % 17)}`,
      },
    },
  };
  object.metadata.annotations = applied(object);
  return object;
}

export function limitRangeObject(namespace) {
  const object = {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'defaults', namespace, labels: { 'app.kubernetes.io/managed-by': 'platform' } },
    spec: {
      limits: [
        {
          type: 'Container',
          default: { cpu: '500m', memory: '512Mi' },
          defaultRequest: { cpu: '100m', memory: '128Mi' },
          max: { cpu: '4', memory: '8Gi' },
          min: { cpu: '10m', memory: '16Mi' },
          maxLimitRequestRatio: { cpu: '10' },
        },
        { type: 'Pod', max: { cpu: '8', memory: '16Gi' } },
        { type: 'PersistentVolumeClaim', max: { storage: '100Gi' }, min: { storage: '1Gi' } },
      ],
    },
  };
  object.metadata.annotations = applied(object);
  return object;
}

export function resourceQuotaObject(namespace) {
  const object = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute', namespace, labels: { 'app.kubernetes.io/managed-by': 'platform' } },
    spec: {
      hard: {
        'requests.cpu': '40',
        'requests.memory': '80Gi',
        'limits.cpu': '80',
        'limits.memory': '160Gi',
        pods: '200',
      },
      scopeSelector: {
        matchExpressions: [{ scopeName: 'PriorityClass', operator: 'NotIn', values: ['system'] }],
      },
    },
  };
  object.metadata.annotations = applied(object);
  return object;
}

/** The status the quota controller writes: `used` of a namespace running some pods. */
export function resourceQuotaStatus(i) {
  return {
    hard: {
      'requests.cpu': '40',
      'requests.memory': '80Gi',
      'limits.cpu': '80',
      'limits.memory': '160Gi',
      pods: '200',
    },
    used: {
      'requests.cpu': `${(i % 30) * 250}m`,
      'requests.memory': `${(i % 30) * 256}Mi`,
      'limits.cpu': `${(i % 30) * 500}m`,
      'limits.memory': `${(i % 30) * 512}Mi`,
      pods: String(i % 30),
    },
  };
}
