// The inject subcommand as users run it: the bundled CLI in a child process, manifests on stdin or from a
// file, the manifest on stdout, warnings on stderr, and nothing on stdout when anything is wrong.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = `${ROOT}dist/cli.mjs`;
const FIXTURES = `${ROOT}test/fixtures/inject/`;
const fixture = (name: string) => readFileSync(`${FIXTURES}${name}`, 'utf8');

interface PodTemplate {
  metadata: { annotations: Record<string, string> };
  spec: { containers: { name: string }[]; initContainers?: { name: string }[] };
}
/** What inject says of a pod that keeps running, without --kube-version. */
const AUTO_UNCHECKED =
  'note: the companion goes first among the containers (placement auto): the Kubernetes version is not known: with --kube-version 1.33+ it is a native sidecar';

function inject(args: string[], input?: string | Uint8Array) {
  return execa('node', [CLI, 'inject', ...args], { input: input ?? '', reject: false, cwd: ROOT });
}

describe('osm-healthcheck inject', () => {
  it('reads stdin when no file is given and writes the manifest to stdout', async () => {
    const result = await inject([], fixture('deployment.yaml'));
    expect(result).toMatchObject({ exitCode: 0, stderr: AUTO_UNCHECKED });
    expect(result.stdout).toBe(fixture('deployment.injected.yaml').trimEnd());
  });

  it('reads a file with -f, and "-f -" means stdin', async () => {
    // A CronJob, whose pods must end: a native sidecar at 1.33 (test/rewrite/golden.test.ts OPTIONS).
    const fromFile = await inject(['-f', `${FIXTURES}cronjob.yaml`, '--kube-version', '1.33']);
    const fromStdin = await inject(['-f', '-', '--kube-version', '1.33'], fixture('cronjob.yaml'));
    expect(fromFile.exitCode).toBe(0);
    expect(fromFile.stdout).toBe(fixture('cronjob.injected.yaml').trimEnd());
    expect(fromStdin.stdout).toBe(fromFile.stdout);
  });

  it('resource annotations: written canonical; a request above the limit stops inject, naming both', async () => {
    const result = await inject([], fixture('resources.yaml'));
    expect(result).toMatchObject({ exitCode: 0, stderr: AUTO_UNCHECKED });
    expect(result.stdout).toBe(fixture('resources.injected.yaml').trimEnd());
    const refused = await inject(
      [],
      fixture('resources.yaml').replace('memory-limit: 1.5Gi', 'memory-limit: 512Mi'),
    );
    expect(refused).toMatchObject({ exitCode: 1, stdout: '' });
    expect(refused.stderr).toContain(
      'document 1, line 18: Deployment/reports: spec.template.metadata.annotations.osm-healthcheck/memory-request: must be less than or equal to the memory limit: 1Gi is above osm-healthcheck/memory-limit 512Mi',
    );
  });

  it('a Job without --kube-version: left untouched, and stderr says why and what to do', async () => {
    const result = await inject(['-f', `${FIXTURES}job.yaml`]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(fixture('job.yaml').trimEnd());
    expect(result.stderr).toBe(
      'warning: Job/report: restartPolicy Never: left untouched, as the Kubernetes version is not known: pass --kube-version or --placement native-sidecar, or annotate osm-healthcheck/run-to-completion: native-sidecar',
    );
  });

  it('prints warnings to stderr, one line each, and still writes the manifest', async () => {
    const result = await inject(['--filename', `${FIXTURES}host-set.yaml`]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(fixture('host-set.injected.yaml').trimEnd());
    const [note, ...lines] = result.stderr.split('\n');
    expect(note).toBe(AUTO_UNCHECKED);
    expect(lines).toHaveLength(2);
    for (const line of lines)
      expect(line).toMatch(/^warning: Pod\/edge: container "app" (liveness|readiness)Probe: /);
  });

  it('--native-sidecar and --image', async () => {
    const args = ['--native-sidecar', '--image', 'registry.example.com/osm-healthcheck:0.1.0', '-f'];
    const result = await inject([...args, `${FIXTURES}native-sidecar-flag.yaml`]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(fixture('native-sidecar-flag.injected.yaml').trimEnd());
  });

  const NOT_NATIVE = `warning: the companion goes first among the containers, not a native sidecar`;
  it.each<{ name: string; args: string[]; native: boolean; stderr: string | RegExp }>([
    { name: 'no flag: first, saying why', args: [], native: false, stderr: AUTO_UNCHECKED },
    {
      name: '--kube-version 1.26',
      args: ['--kube-version', '1.26'],
      native: false,
      stderr:
        'note: the companion goes first among the containers (placement auto): the cluster runs Kubernetes 1.26, which has no native sidecars',
    },
    {
      name: '--kube-version 1.32: native sidecars there, not yet GA',
      args: ['--kube-version', '1.32'],
      native: false,
      stderr:
        'note: the companion goes first among the containers (placement auto): the cluster runs Kubernetes 1.32: native sidecars are GA from 1.33 (--placement native-sidecar uses them now)',
    },
    {
      name: '--kube-version 1.33: a native sidecar, no flag',
      args: ['--kube-version', '1.33'],
      native: true,
      stderr:
        'note: the companion is a native sidecar (placement auto, 1.33+): the cluster runs Kubernetes 1.33',
    },
    {
      name: '--kube-version v1.36.3 --placement auto',
      args: ['--kube-version', 'v1.36.3', '--placement', 'auto'],
      native: true,
      stderr:
        'note: the companion is a native sidecar (placement auto, 1.33+): the cluster runs Kubernetes 1.36',
    },
    {
      name: '--placement first --kube-version 1.33',
      args: ['--placement', 'first', '--kube-version', '1.33'],
      native: false,
      stderr: 'note: the companion goes first among the containers (placement first)',
    },
    {
      name: '--placement native-sidecar --kube-version 1.26: refused by that version, so first',
      args: ['--placement', 'native-sidecar', '--kube-version', '1.26'],
      native: false,
      stderr: `${NOT_NATIVE}: the cluster runs Kubernetes 1.26, which has no native sidecars`,
    },
    {
      name: '--native-sidecar --kube-version v1.28.3-eks-4f4795d, no gate: first',
      args: ['--native-sidecar', '--kube-version', 'v1.28.3-eks-4f4795d'],
      native: false,
      stderr: `${NOT_NATIVE}: the cluster runs Kubernetes 1.28, which has native sidecars only with --sidecar-containers-gate`,
    },
    {
      name: '--native-sidecar --kube-version 1.28 --sidecar-containers-gate',
      args: ['--native-sidecar', '--kube-version', '1.28', '--sidecar-containers-gate'],
      native: true,
      stderr:
        'note: the companion is a native sidecar (placement native-sidecar): the cluster runs Kubernetes 1.28 with the SidecarContainers gate',
    },
    {
      name: '--placement native-sidecar --kube-version 1.30',
      args: ['--placement', 'native-sidecar', '--kube-version', '1.30'],
      native: true,
      stderr:
        'note: the companion is a native sidecar (placement native-sidecar): the cluster runs Kubernetes 1.30',
    },
    {
      name: '--native-sidecar alone (the alias): as asked, with the versions it needs',
      args: ['--native-sidecar'],
      native: true,
      stderr:
        'warning: the companion is a native sidecar (placement native-sidecar), unchecked: it needs Kubernetes 1.29+, or 1.28 with the SidecarContainers feature gate; older API servers refuse the pod, older kubelets never start it (--kube-version checks)',
    },
    {
      name: '--native-sidecar --placement native-sidecar: the same thing twice',
      args: ['--native-sidecar', '--placement', 'native-sidecar', '--kube-version', '1.29'],
      native: true,
      stderr:
        'note: the companion is a native sidecar (placement native-sidecar): the cluster runs Kubernetes 1.29',
    },
  ])('where the companion goes: $name', async ({ args, native, stderr }) => {
    const result = await inject([...args, '-f', `${FIXTURES}deployment.yaml`]);
    expect(result.exitCode).toBe(0);
    if (typeof stderr === 'string') expect(result.stderr).toBe(stderr);
    else expect(result.stderr).toMatch(stderr);
    const spec = parse(result.stdout).spec.template.spec;
    const names = (list: { name: string }[] | undefined) => (list ?? []).map((c) => c.name);
    expect(names(spec.initContainers)).toEqual(
      native ? ['osm-healthcheck-init', 'osm-healthcheck'] : ['osm-healthcheck-init'],
    );
    expect(names(spec.containers)).toEqual(native ? ['shop'] : ['osm-healthcheck', 'shop']);
  });

  it.each([
    {
      name: 'a Job at 1.29: its own note, not the placement of pods that keep running',
      args: ['--kube-version', '1.29'],
      files: ['job.yaml'],
      stderr: [
        'note: Job/report: restartPolicy Never: the companion is a native sidecar, which kubelet stops once the containers end: the cluster runs Kubernetes 1.29',
      ],
    },
    {
      name: 'a Job at 1.26: only the warning that it is left untouched',
      args: ['--kube-version', '1.26'],
      files: ['job.yaml'],
      stderr: [
        'warning: Job/report: restartPolicy Never: left untouched, as the cluster runs Kubernetes 1.26, which has no native sidecars: a companion container would never let the pod complete',
      ],
    },
    {
      name: 'a Deployment and a Job at 1.26: the placement note for the Deployment, the warning for the Job',
      args: ['--kube-version', '1.26'],
      files: ['deployment.yaml', 'job.yaml'],
      stderr: [
        'note: the companion goes first among the containers (placement auto): the cluster runs Kubernetes 1.26, which has no native sidecars',
        'warning: Job/report: restartPolicy Never: left untouched, as the cluster runs Kubernetes 1.26, which has no native sidecars: a companion container would never let the pod complete',
      ],
    },
  ])('what stderr says for pods that must end: $name', async ({ args, files, stderr }) => {
    const input = files.map((file) => fixture(file)).join('\n---\n');
    const result = await inject(args, input);
    expect(result.exitCode).toBe(0);
    expect(result.stderr.split('\n')).toEqual(stderr);
  });

  it('bytes that are no UTF-8 (a binary, UTF-16) are refused, naming the file or stdin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'osm-hc-inject-'));
    try {
      const file = join(dir, 'app.bin');
      // The head of a compiled binary: bytes above 0x7f that are no UTF-8 sequence.
      const bytes = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0xff, 0xfe, 0x90, 0xc3]);
      writeFileSync(file, bytes);
      const named = await inject(['-f', file]);
      expect(named).toMatchObject({ exitCode: 1, stdout: '' });
      expect(named.stderr).toBe(
        `osm-healthcheck inject: ${file}: is not UTF-8 text (binary data, or another encoding): not a YAML or JSON manifest [OSM_HC_MANIFEST]`,
      );
      const piped = await inject([], bytes);
      expect(piped.stderr).toMatch(/^osm-healthcheck inject: stdin: is not UTF-8 text/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a reader that closes the pipe early (| head -1) ends inject quietly, with the status of a broken pipe', async () => {
    // Far more output than a pipe holds (64 KiB), so inject is still writing when head has gone.
    const input = Array.from({ length: 200 }, () => fixture('deployment.yaml')).join('---\n');
    // bash's pipeline: head's stdin is inject's stdout, and nothing else holds that pipe open.
    const script = `"$0" "$1" inject | head -1; echo "inject exit status: \${PIPESTATUS[0]}"`;
    const result = await execa('bash', ['-c', script, process.execPath, CLI], {
      input,
      reject: false,
      cwd: ROOT,
    });
    const firstLine = fixture('deployment.injected.yaml').split('\n')[0];
    // 141 = 128 + SIGPIPE, what a shell reports for `yes | head -1` (docs/inject.md).
    expect(result).toMatchObject({ stdout: `${firstLine}\ninject exit status: 141`, stderr: AUTO_UNCHECKED });
  });

  it('-o json prints JSON', async () => {
    const result = await inject(['-o', 'json'], fixture('pod-https.yaml'));
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ kind: 'Pod', metadata: { name: 'secure' } });
  });

  it.each([
    {
      name: 'invalid YAML in a later document',
      args: [],
      input: `${fixture('deployment.yaml')}---\nkind: Pod\nspec: [oops\n`,
      exitCode: 1,
      stderr: /^osm-healthcheck inject: stdin: document 2, line \d+: .* \[OSM_HC_MANIFEST\]$/,
    },
    {
      name: 'a container without a name after valid documents',
      args: [],
      input: `${fixture('list.yaml')}---\n${fixture('grpc.yaml')}---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - image: x\n`,
      exitCode: 1,
      stderr: /document 3, line \d+: Pod\/p: spec.containers\[0\]: container has no name \[OSM_HC_MANIFEST\]/,
    },
    {
      name: 'empty stdin',
      args: [],
      input: '',
      exitCode: 1,
      stderr: /^osm-healthcheck inject: stdin: no documents: the input is empty .*\[OSM_HC_MANIFEST\]$/,
    },
    {
      name: 'the head of an ELF binary on stdin, given as -f -',
      args: ['-f', '-'],
      input: '\x7fELF\x02\x01\x01\x00',
      exitCode: 1,
      stderr:
        /^osm-healthcheck inject: stdin: document 1, line 1: control character U\+007F: binary data, not a YAML or JSON manifest \[OSM_HC_MANIFEST\]$/,
    },
    {
      name: 'a file that does not exist',
      args: ['-f', `${FIXTURES}missing.yaml`],
      input: '',
      exitCode: 1,
      stderr: /cannot read .*missing\.yaml: ENOENT.*\[OSM_HC_MANIFEST\]/,
    },
    {
      name: 'an unknown output format',
      args: ['-o', 'xml'],
      input: '',
      exitCode: 2,
      stderr: /--output "xml" is not accepted \(yaml or json\) \[OSM_HC_USAGE\]/,
    },
    {
      name: 'a stray argument',
      args: ['deploy.yaml'],
      input: '',
      exitCode: 2,
      stderr: /unexpected argument "deploy.yaml".*\[OSM_HC_USAGE\]/,
    },
    { name: 'an unknown flag', args: ['--sidecar'], input: '', exitCode: 2, stderr: /\[OSM_HC_USAGE\]/ },
    {
      name: 'a version that is none',
      args: ['--kube-version', 'latest'],
      input: fixture('deployment.yaml'),
      exitCode: 2,
      stderr:
        /--kube-version "latest" is no Kubernetes version \(1.19 or later, e.g. 1.29 or v1.28.3 as kubectl version prints it\) \[OSM_HC_USAGE\]$/,
    },
    {
      name: 'a placement that is none',
      args: ['--placement', 'last'],
      input: fixture('deployment.yaml'),
      exitCode: 2,
      stderr:
        /--placement "last" is not accepted \(--placement auto, native-sidecar, first, or --native-sidecar alone\) \[OSM_HC_USAGE\]$/,
    },
    {
      name: '--native-sidecar (the alias) against another --placement',
      args: ['--native-sidecar', '--placement', 'first'],
      input: fixture('deployment.yaml'),
      exitCode: 2,
      stderr:
        /--native-sidecar \(--placement native-sidecar\) and --placement first both given \(--placement auto, native-sidecar, first, or --native-sidecar alone\) \[OSM_HC_USAGE\]$/,
    },
    {
      name: 'the gate without a version',
      args: ['--sidecar-containers-gate'],
      input: fixture('deployment.yaml'),
      exitCode: 2,
      stderr:
        /--sidecar-containers-gate means nothing with no --kube-version \(it goes with --kube-version 1.28, .*\) \[OSM_HC_USAGE\]$/,
    },
    {
      name: 'a Pod Security level that is none',
      args: ['--pod-security', 'strict'],
      input: fixture('deployment.yaml'),
      exitCode: 2,
      stderr:
        /--pod-security "strict" is not accepted \(privileged, baseline, restricted\) \[OSM_HC_USAGE\]$/,
    },
    {
      name: 'a mesh inject does not know',
      args: ['--mesh-exclusion', 'consul'],
      input: fixture('deployment.yaml'),
      exitCode: 2,
      stderr:
        /--mesh-exclusion "consul" is not accepted \(osm, istio, linkerd, kuma; osm: OSM and osm-edge\)/,
    },
    {
      name: "a pod's exclusion list the asked-for mesh refuses",
      args: ['--mesh-exclusion', 'istio'],
      input: fixture('mesh-excluded.yaml').replace('"15901, 15902,15903 ,15904"', '"15901-15904"'),
      exitCode: 1,
      stderr:
        /^osm-healthcheck inject: stdin: document 1, line 16: Deployment\/cart: spec.template.metadata.annotations.traffic.sidecar.istio.io\/excludeInboundPorts: "15901-15904" is no list Istio accepts \[OSM_HC_MANIFEST\]$/,
    },
    {
      name: "a user's container named osm-healthcheck, not one inject made",
      args: [],
      input: [
        'apiVersion: v1',
        'kind: Pod',
        'metadata: {name: web}',
        'spec:',
        '  containers:',
        '  - name: app',
        '    livenessProbe: {tcpSocket: {port: 8080}}',
        '  - name: osm-healthcheck',
        '    image: mine:1',
        '',
      ].join('\n'),
      exitCode: 1,
      stderr:
        /^osm-healthcheck inject: stdin: document 1, line 8: Pod\/web: spec.containers\[1\].name: "osm-healthcheck" is the name of a container inject adds, and this one is not inject's/,
    },
    {
      name: 'the app itself named osm-healthcheck, its probes the only ones',
      args: [],
      input: [
        'apiVersion: v1',
        'kind: Pod',
        'metadata: {name: web}',
        'spec:',
        '  containers:',
        '  - name: osm-healthcheck',
        '    image: mine:1',
        '    livenessProbe: {httpGet: {port: 80, path: /}}',
        '',
      ].join('\n'),
      exitCode: 1,
      stderr:
        /^osm-healthcheck inject: stdin: document 1, line 6: Pod\/web: spec.containers\[0\].name: "osm-healthcheck" is the name of a container inject adds, and this one is not inject's/,
    },
  ])(
    'all or nothing: $name -> exit $exitCode, nothing on stdout',
    async ({ args, input, exitCode, stderr }) => {
      const result = await inject(args, input);
      expect(result.exitCode).toBe(exitCode);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(stderr);
    },
  );

  it('--pod-security and --mesh-exclusion: no init container, or the pod as it came with a warning', async () => {
    const annotated = await inject(
      ['--pod-security', 'baseline', '--mesh-exclusion', 'linkerd'],
      fixture('mesh-exclusion-flag.yaml'),
    );
    expect(annotated).toMatchObject({ exitCode: 0, stderr: AUTO_UNCHECKED });
    expect(annotated.stdout).toBe(fixture('mesh-exclusion-flag.injected.yaml').trimEnd());
    const refused = await inject(['--pod-security', 'restricted', '-f', `${FIXTURES}deployment.yaml`]);
    expect(refused.exitCode).toBe(0);
    expect(refused.stdout).toBe(fixture('deployment.yaml').trimEnd());
    expect(refused.stderr).toMatch(
      /^warning: Deployment\/shop: left untouched: Pod Security "restricted:latest" \(--pod-security\) refuses our init container's NET_ADMIN, NET_RAW; /,
    );
  });

  it("the Pod Security warning's way out: --mesh-exclusion, as it says, gives the companion without the init container", async () => {
    const refused = await inject(['--pod-security', 'restricted', '-f', `${FIXTURES}deployment.yaml`]);
    expect(refused.stderr).toContain(
      "list 15901-15904 in the mesh's exclusion annotation (inject --mesh-exclusion;",
    );
    const followed = await inject([
      '--pod-security',
      'restricted',
      '--mesh-exclusion',
      'osm',
      '-f',
      `${FIXTURES}deployment.yaml`,
    ]);
    expect(followed).toMatchObject({ exitCode: 0, stderr: AUTO_UNCHECKED });
    const template = (parse(followed.stdout) as { spec: { template: PodTemplate } }).spec.template;
    expect(template.spec.containers.map(({ name }) => name)).toContain('osm-healthcheck');
    expect((template.spec.initContainers ?? []).map(({ name }) => name)).not.toContain(
      'osm-healthcheck-init',
    );
    expect(template.metadata.annotations['openservicemesh.io/inbound-port-exclusion-list']).toBe(
      '15901,15902,15903,15904',
    );
  });

  it('--namespace-rules: the companion fits the namespace given, workloads of other namespaces as before', async () => {
    const other = fixture('deployment.yaml');
    const shop = other.replace('namespace: store', 'namespace: shop');
    const result = await inject(
      ['--namespace-rules', `${ROOT}test/fixtures/namespace-rules/shop.yaml`],
      `${shop}---\n${other}`,
    );
    expect(result).toMatchObject({ exitCode: 0, stderr: AUTO_UNCHECKED });
    const [fitted, unchecked] = result.stdout.split(/^---$/m).map((doc) => parse(doc));
    const resources = (doc: unknown, name: string) =>
      (
        doc as { spec: { template: { spec: { containers: { name: string; resources: unknown }[] } } } }
      ).spec.template.spec.containers.find((c) => c.name === name)?.resources;
    // LimitRange max memory 128Mi; the quota makes every container declare limits.cpu, with 500m left.
    expect(resources(fitted, 'osm-healthcheck')).toEqual({
      requests: { cpu: '50m', memory: '32Mi' },
      limits: { cpu: '500m', memory: '128Mi' },
    });
    expect(resources(unchecked, 'osm-healthcheck')).toEqual({
      requests: { cpu: '50m', memory: '32Mi' },
      limits: { memory: '320Mi' },
    });
  });

  it('--companion-cpu-limit: both containers get it, written canonical', async () => {
    const result = await inject(['--companion-cpu-limit', '0.5'], fixture('deployment.yaml'));
    expect(result.exitCode).toBe(0);
    const limits = [...result.stdout.matchAll(/limits:\n\s+cpu: (\S+)/g)].map((m) => m[1]);
    expect(limits).toEqual(['500m', '500m']);
  });

  it.each([
    {
      name: 'a LimitRange in the input with a value that is no quantity',
      args: [],
      input: `${fixture('deployment.yaml')}---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n    - type: Container\n      max: {cpu: lots}\n`,
      exitCode: 1,
      stderr:
        /^osm-healthcheck inject: stdin: document 2, line 41: LimitRange\/lr: spec.limits\[0\].max.cpu: must be a Kubernetes quantity, e.g. 100m or 64Mi, got "lots" \[OSM_HC_MANIFEST\]$/,
    },
    {
      name: 'a rules file with a Deployment in it',
      args: ['--namespace-rules', `${FIXTURES}deployment.yaml`],
      input: fixture('deployment.yaml'),
      exitCode: 1,
      stderr:
        /^osm-healthcheck inject: .*deployment\.yaml: document 1, line 2: Deployment\/shop: kind: is no LimitRange or ResourceQuota \(all --namespace-rules takes\) \[OSM_HC_MANIFEST\]$/,
    },
    {
      name: 'a workload without a namespace, rules of two',
      args: [],
      input: `apiVersion: v1\nkind: LimitRange\nmetadata: {name: a, namespace: a}\nspec: {limits: []}\n---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: b, namespace: b}\nspec: {limits: []}\n---\n${fixture('grpc.yaml')}`,
      exitCode: 1,
      stderr:
        /document 3, line \d+: Pod\/\S+: metadata.namespace: is not set, and the namespace rules given are for namespaces "a", "b": set it \[OSM_HC_MANIFEST\]$/,
    },
    {
      name: 'a CPU limit that is none',
      args: ['--companion-cpu-limit', '0'],
      input: fixture('deployment.yaml'),
      exitCode: 2,
      stderr:
        /--companion-cpu-limit "0" is not more than 0 \(a CPU quantity above 0, e.g. 500m or 0.5\) \[OSM_HC_USAGE\]$/,
    },
  ])(
    'namespace rules: $name -> exit $exitCode, nothing on stdout',
    async ({ args, input, exitCode, stderr }) => {
      const result = await inject(args, input);
      expect(result.exitCode).toBe(exitCode);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(stderr);
    },
  );

  it('--help describes the flags', async () => {
    const result = await inject(['--help']);
    expect(result.exitCode).toBe(0);
    for (const flag of [
      '-f, --filename',
      '--image',
      '--placement MODE',
      '--native-sidecar',
      '--kube-version',
      '--sidecar-containers-gate',
      '--pod-security',
      '--mesh-exclusion',
      '--namespace-rules',
      '--companion-cpu-limit',
      '-o, --output',
    ]) {
      expect(result.stdout).toContain(flag);
    }
  });
});
