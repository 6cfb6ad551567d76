// Plays a pod as osm-edge's (or OSM's) injector wrote it, with our image as its healthcheck container's: a node
// and a pod network namespace (test/init/lab.ts); osm-init's own command (its iptables-restore of the mesh's
// rules) run in the pod; then the containers in spec order, as kubelet starts them: the app (the stand-in app),
// the mesh's `osm-healthcheck` container (our CLI, as the image's /osm-healthcheck runs it, as the image's user)
// and the sidecar (a Pipy or Envoy stand-in on 15901-15903, 15001 and 15003, with its securityContext). The kubelet stand-in in the node
// namespace runs osm-edge's rewritten probes against the pod IP while the app goes through phases. Every process
// is killed and both namespaces removed, whatever happens.

import { readFileSync } from 'node:fs';
import { COMPANION_UID } from '../../src/scheme.js';
import { stagedCli } from '../helpers/staged-cli.js';
import { Lab, POD } from '../init/lab.js';
import { KubeletStandin } from './kubelet-standin.js';
import { appStarter, IMAGE_ENV, type Phase, PLAYED_CLOCK_ENV, playPhases, proberCall } from './pod.js';
import { type ContainerSpec, readPodSpec, setprivArgs } from './pod-spec.js';
import { Processes, type Running } from './processes.js';
import { type SidecarProbe, startSidecarStandin } from './sidecar-standin.js';

export interface OsmEdgePlay {
  /** The pod as the mesh's injector wrote it. */
  manifest: string;
  /** The pod before it: the app serves what these probes probe. */
  original: string;
  /** The healthcheck image osm-edge's injector was given: ours. */
  image: string;
  /** The mesh's sidecar container and the probe listeners it has (sidecar-standin.ts). */
  sidecar: { name: string; probes: readonly SidecarProbe[] };
  tag: string;
  phases: readonly Phase[];
  tickMs: number;
  phaseTicks: number;
  programs: { app: string; prober: string };
  tls: { key: string; cert: string };
}

export interface OsmEdgeResult {
  /** Per container, per phase: `ready` or `not ready`, then the probe kinds that restarted it, if any. */
  table: Record<string, string[]>;
  /** The ports our container listened on, from its `serving` line. */
  ourPorts: Record<string, number>;
  transcript: string;
}

const CLI = stagedCli();
const START_TIMEOUT_MS = 15_000;
const READY_LINE = '"msg":"serving /osm-healthcheck only (osm-edge compat)"';

/**
 * What the image's /osm-healthcheck runs past tini and the supervisor (`node /app/dist/cli.mjs serve ...`),
 * read from image/osm-healthcheck itself; test/image/image.test.ts runs the script in the image's root.
 */
function osmHealthcheckArgs(): string[] {
  const script = readFileSync(new URL('../../image/osm-healthcheck', import.meta.url), 'utf8');
  const exec = script.split('\n').find((line) => line.startsWith('exec '));
  const words = exec?.split(' ') ?? [];
  const cli = words.indexOf('/app/dist/cli.mjs');
  if (cli < 0 || words.at(-1) !== '"$@"')
    throw new Error(`image/osm-healthcheck: no exec of the CLI: ${exec}`);
  return words.slice(cli + 1, -1);
}

/** Our CLI as osm-edge's container runs the image: its command's argv with the pod's args, as the image's user. */
function ourArgv(c: ContainerSpec): string[] {
  if (c.command?.join(' ') !== '/osm-healthcheck') {
    throw new Error(`${c.name}: only command [/osm-healthcheck] can be played, got ${c.command}`);
  }
  // No env of its own (osm-edge writes none): no POD_IP, so probes dial 127.0.0.1, as osm-edge's binary does.
  const user = setprivArgs({ runAsUser: COMPANION_UID, ...c.securityContext });
  return [
    'env',
    '-i',
    ...IMAGE_ENV,
    ...PLAYED_CLOCK_ENV,
    ...user,
    process.execPath,
    CLI,
    ...osmHealthcheckArgs(),
    ...c.args,
  ];
}

export async function playOsmEdgePod(play: OsmEdgePlay): Promise<OsmEdgeResult> {
  const pod = readPodSpec(play.manifest);
  const original = readPodSpec(play.original);
  const podIp = POD.v4;
  const transcript: string[] = [];
  const procs = new Processes();
  const running = new Map<string, Running>();
  const lab = await Lab.create(play.tag);
  let kubelet: KubeletStandin | undefined;
  let ours: Running | undefined;

  const startApp = appStarter(procs, lab, original, play, running);

  try {
    // osm-init: its own command, as root with NET_ADMIN in the pod (iptables-restore of osm-edge's rules).
    for (const c of pod.initContainers) {
      const result = await lab.run(lab.pod, [...(c.command ?? []), ...c.args]);
      transcript.push(
        `init container ${c.name} (exit ${result.exitCode}):\n${result.stdout}${result.stderr}`,
      );
      if (result.exitCode !== 0)
        throw new Error(`init container ${c.name} failed:\n${transcript.join('\n')}`);
    }
    const prober = procs.start('node prober', lab.node, [process.execPath, play.programs.prober]);
    await prober.waitFor((line) => line === 'ready', START_TIMEOUT_MS);
    kubelet = new KubeletStandin(pod.containers, proberCall(prober, podIp), play.tickMs);

    // kubelet's SyncPod: one container after another, in spec order (osm-edge appends its healthcheck container,
    // then the sidecar). Ours listening before the sidecar starts proves the order cannot matter: the sidecar
    // could not bind 15901-15903 if ours had taken them.
    for (const c of pod.containers) {
      if (c.image === play.image) {
        ours = procs.start(c.name, lab.pod, ourArgv(c));
        await ours.waitFor((line) => line.includes(READY_LINE), START_TIMEOUT_MS);
        running.set(c.name, ours);
      } else if (c.name === play.sidecar.name) {
        const probes = play.sidecar.probes;
        transcript.push(`sidecar probes: ${JSON.stringify(probes)}`);
        running.set(
          c.name,
          await startSidecarStandin(procs, lab.pod, probes, setprivArgs(c.securityContext), START_TIMEOUT_MS),
        );
      } else {
        await startApp(c.name);
      }
      kubelet.startContainer(c.name);
    }

    const appNames = pod.containers
      .filter((c) => c.image !== play.image && c.name !== play.sidecar.name)
      .map((c) => c.name);
    const containers = pod.containers.map((c) => c.name);
    const table = await playPhases(
      play,
      kubelet,
      containers,
      appNames,
      { running, procs, startApp },
      transcript,
    );
    for (const proc of running.values())
      transcript.push(`${proc.name} output:\n${proc.lines.join('\n')}${proc.stderr()}`);
    const serving = ours?.lines.find((line) => line.includes(READY_LINE));
    return {
      table,
      ourPorts: serving === undefined ? {} : (JSON.parse(serving) as { ports: Record<string, number> }).ports,
      transcript: transcript.join('\n'),
    };
  } finally {
    await kubelet?.stop();
    await procs.killAll();
    await lab.close();
  }
}
