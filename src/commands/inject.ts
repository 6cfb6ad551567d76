// `osm-healthcheck inject`: manifests in (file or stdin), rewritten manifests out on stdout, warnings on
// stderr. All or nothing: on any error nothing reaches stdout.

import { readFile } from 'node:fs/promises';
import { cpuLimitOf, imageOf, placementOf, sealOf } from '../companion-flags.js';
import { describeValue, HealthcheckError } from '../errors.js';
import { badFlagValue, flagValue, parseFlags, usageError } from '../flags.js';
import { formatVersion, OLDEST_KUBE_VERSION, readKubeVersionFlag } from '../kube-version.js';
import { injectManifests, type OutputFormat } from '../manifest/inject.js';
import { readNamespaceRules } from '../manifest/namespace-rules-file.js';
import { DEFAULT_IMAGE } from '../rewrite/companion.js';
import { MESH_FORMATS, MESHES, type Mesh } from '../rewrite/mesh-exclusion.js';
import { type ClusterKnowledge, choosePlacement, PLACEMENT_MODES } from '../rewrite/placement.js';
import { POD_SECURITY_LEVELS, type PodSecurityKnowledge, parseLevel } from '../rewrite/pod-security.js';
import type { Command } from './command.js';

const USAGE = `Usage: osm-healthcheck inject [-f FILE | -f - | -] [--image IMAGE] [--placement MODE | --native-sidecar]
                              [--kube-version X.Y] [--sidecar-containers-gate] [--pod-security LEVEL]
                              [--mesh-exclusion MESH] [--namespace-rules FILE]
                              [--companion-cpu-limit QUANTITY] [--seal off|node] [-o yaml|json]

Rewrites the probes of Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers,
Jobs, CronJobs, Argo Rollouts and OpenKruise's CloneSets, StatefulSets and DaemonSets (and the items of a List)
so kubelet asks the osm-healthcheck companion, and adds the companion and its init container. Other documents
pass through untouched; one without kind or apiVersion, or of another kind with a pod template, with a warning.
Input that is no manifest (binary, a string or list, nothing at all) is an error.

The companion is a native sidecar (an init container with restartPolicy: Always) where --kube-version says the
cluster is 1.33+ (native sidecars GA); else it goes first among the containers, with a postStart hook
(osm-healthcheck wait) that holds the next containers back until it listens: this works on every Kubernetes
version. Which one and why goes to stderr. Pods that must end (restartPolicy Never or OnFailure: Jobs, CronJobs)
get it as a native sidecar where the cluster has them (--kube-version 1.29+, or --placement native-sidecar),
else are left untouched with a warning; the pod-template annotation
osm-healthcheck/run-to-completion: native-sidecar | skip forces either.

The companion and its init container fit the namespace's LimitRanges and ResourceQuotas, read from the input
(they pass through unchanged) and from --namespace-rules; a pod where nothing fits, a hostNetwork pod and a
Windows pod are left untouched, with a warning (docs/admission-rules.md).

Flags:
  -f, --filename FILE          manifest to read, YAML or JSON, several documents allowed ("-" or none: stdin)
      --image IMAGE            image of the companion and init container (default ${DEFAULT_IMAGE})
      --placement MODE         where the companion goes in pods that keep running (${PLACEMENT_MODES.join('|')}):
                               auto (default): a native sidecar where --kube-version is 1.33+ (native
                               sidecars GA), else first; native-sidecar: a native sidecar wherever the
                               cluster has them (1.29+, or 1.28 with --sidecar-containers-gate), and as
                               asked where no --kube-version is given; first: always first among the containers
      --native-sidecar         an alias of --placement native-sidecar (kept for existing scripts)
      --kube-version X.Y       the cluster's Kubernetes version (kubectl version), 1.19 or later, for the API
                               server and the kubelets: the placement is then decided as the webhook does
      --sidecar-containers-gate  with --kube-version 1.28: the SidecarContainers feature gate is on
      --pod-security LEVEL     the Pod Security level the namespace enforces (${POD_SECURITY_LEVELS.join('|')}), as
                               the webhook reads it from the namespace: above privileged, no init container
                               (it needs NET_ADMIN, NET_RAW); a pod whose mesh annotation does not exclude
                               15901-15904 is then left untouched, with a warning
      --mesh-exclusion MESH    exclude 15901-15904 with the mesh's own annotation instead of the init container
                               (${MESHES.map((mesh) => `${mesh}: ${MESH_FORMATS[mesh].annotation}`).join(',\n                               ')})
      --namespace-rules FILE   LimitRanges and ResourceQuotas of the workloads' namespace, a YAML stream or a
                               List (kubectl get limitrange,resourcequota -n NS -o yaml > FILE); without any,
                               in the input or here, nothing is checked against them
      --companion-cpu-limit QUANTITY  a CPU limit on both containers (e.g. 500m), for policies inject cannot
                               read (ValidatingAdmissionPolicy, Kyverno, Gatekeeper) that demand one
      --seal off|node          node: the init container asks the node agent (osm-healthcheck node) to prove the
                               seal, and lets 15901-15904 past the mesh only from its source where it does;
                               elsewhere the pod runs open, as with off (the default: no change to any pod until
                               the agent runs on its nodes)
  -o, --output FORMAT          yaml (default) or json

Pod templates annotated osm-healthcheck/rewrite-probes: "false" are left alone ("true" or "false" only).
Warnings go to stderr; exit code 1 and no output when any document is invalid; 141 when the reader of stdout
closes it early (| head).`;

async function readRules(file: string | undefined) {
  if (file === undefined) return undefined;
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (err) {
    throw new HealthcheckError('OSM_HC_MANIFEST', `cannot read ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return readNamespaceRules(source, file);
}

/** The -f file or stdin, as text: bytes that are no UTF-8 (a binary, UTF-16) are no manifest. */
async function readInput(file: string | undefined): Promise<{ source: string; input: string }> {
  const input = file === undefined || file === '-' ? 'stdin' : file;
  let bytes: Buffer;
  if (input === 'stdin') {
    if (process.stdin.isTTY) throw usageError('no input', 'give -f FILE, or pipe a manifest to stdin');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    bytes = Buffer.concat(chunks);
  } else {
    try {
      bytes = await readFile(input);
    } catch (err) {
      throw new HealthcheckError('OSM_HC_MANIFEST', `cannot read ${input}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  try {
    return { source: new TextDecoder('utf-8', { fatal: true }).decode(bytes), input };
  } catch (err) {
    const problem = 'is not UTF-8 text (binary data, or another encoding): not a YAML or JSON manifest';
    throw new HealthcheckError('OSM_HC_MANIFEST', `${input}: ${problem}`, { cause: err });
  }
}

const KUBE_VERSION_ACCEPTED = `${formatVersion(OLDEST_KUBE_VERSION)} or later, e.g. 1.29 or v1.28.3 as kubectl version prints it`;

function clusterOf(kubeVersion: string | undefined, sidecarGate: boolean): ClusterKnowledge {
  const version =
    kubeVersion === undefined
      ? undefined
      : flagValue(readKubeVersionFlag(kubeVersion), '--kube-version ', KUBE_VERSION_ACCEPTED).version;
  // The SidecarContainers gate exists in 1.28 only as a choice: off by default there, on from 1.29, GA in 1.33.
  if (sidecarGate && (version === undefined || version.major !== 1 || version.minor !== 28)) {
    const given = version === undefined ? 'no --kube-version' : `--kube-version ${formatVersion(version)}`;
    throw usageError(
      `--sidecar-containers-gate means nothing with ${given}`,
      'it goes with --kube-version 1.28, whose SidecarContainers gate is off by default; 1.29+ have native sidecars on',
    );
  }
  return version === undefined ? { state: 'unchecked' } : { state: 'known', version, sidecarGate };
}

function podSecurityOf(text: string | undefined): PodSecurityKnowledge {
  if (text === undefined) return { state: 'unchecked' };
  const level = parseLevel(text);
  if (level === undefined) throw badFlagValue('--pod-security', text, POD_SECURITY_LEVELS.join(', '));
  return { state: 'known', policy: { level, version: 'latest', source: '--pod-security' } };
}

function meshOf(text: string | undefined): Mesh | undefined {
  if (text === undefined) return undefined;
  const mesh = MESHES.find((name) => name === text);
  if (mesh === undefined)
    throw badFlagValue('--mesh-exclusion', text, `${MESHES.join(', ')}; osm: OSM and osm-edge`);
  return mesh;
}

/** -f FILE, -f -, a lone - (stdin, as the synopsis offers), or nothing (stdin). */
function inputOf(filename: string | undefined, positionals: readonly string[]): string | undefined {
  if (positionals.length === 0) return filename;
  if (positionals.length === 1 && positionals[0] === '-' && filename === undefined) return '-';
  throw usageError(
    `unexpected argument ${describeValue(positionals[0])}`,
    'give the manifest with -f FILE; -f - or a lone - for stdin, once',
  );
}

export const injectCommand: Command = {
  name: 'inject',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseFlags('inject', argv, {
      filename: { type: 'string', short: 'f' },
      image: { type: 'string' },
      placement: { type: 'string' },
      'native-sidecar': { type: 'boolean', default: false },
      'kube-version': { type: 'string' },
      'sidecar-containers-gate': { type: 'boolean', default: false },
      'pod-security': { type: 'string' },
      'mesh-exclusion': { type: 'string' },
      'namespace-rules': { type: 'string' },
      'companion-cpu-limit': { type: 'string' },
      seal: { type: 'string' },
      output: { type: 'string', short: 'o', default: 'yaml' },
    });
    const file = inputOf(values.filename, positionals);
    const format = values.output;
    if (format !== 'yaml' && format !== 'json') throw badFlagValue('--output', format, 'yaml or json');
    const image = imageOf(values.image ?? DEFAULT_IMAGE);
    const cluster = clusterOf(values['kube-version'], values['sidecar-containers-gate']);
    const mode = placementOf(values.placement, values['native-sidecar']);
    // --kube-version stands for the kubelets too: unchecked kubelets take the cluster's version.
    const placement = choosePlacement(mode, cluster, { state: 'unchecked' });
    const { source, input } = await readInput(file);
    const podSecurity = podSecurityOf(values['pod-security']);
    const meshExclusion = meshOf(values['mesh-exclusion']);
    const companionCpuLimit = cpuLimitOf(values['companion-cpu-limit']);
    const seal = sealOf(values.seal);
    const namespaceRules = await readRules(values['namespace-rules']);
    const options = {
      image,
      placement: mode,
      cluster,
      podSecurity,
      ...(meshExclusion === undefined ? {} : { meshExclusion }),
      ...(companionCpuLimit === undefined ? {} : { companionCpuLimit }),
      ...(seal === 'off' ? {} : { seal }),
    };
    const { chunks, warnings, placedRunningPods, notes } = injectManifests(
      source,
      options,
      format satisfies OutputFormat,
      namespaceRules,
      input,
    );
    // Said whenever a pod that keeps running got the companion: never a silent choice. A warning where the
    // cluster may refuse it, or where a native sidecar was asked for and not granted (the webhook returns that
    // line as a warning too).
    if (placedRunningPods) {
      const warn = mode === 'native-sidecar' && (cluster.state === 'unchecked' || !placement.native);
      process.stderr.write(`${warn ? 'warning' : 'note'}: ${placement.reason}\n`);
    }
    for (const note of notes) process.stderr.write(`note: ${note}\n`);
    for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
    for (const chunk of chunks) process.stdout.write(chunk);
  },
};
