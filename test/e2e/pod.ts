// Plays one pod for real. A node and a pod network namespace (test/init/lab.ts) with osm-edge's interception in
// the pod; the manifest's init containers run to completion, then its containers start in the manifest's order,
// as kubelet starts them: each container's postStart hook runs to its end before the next container starts.
// Containers of the osm-healthcheck image run the built CLI with their args, env and securityContext (and so do
// their hooks), the others run the stand-in app. In the node namespace the kubelet stand-in probes each container
// from the moment it started, against the pod IP, while the test moves the apps through phases. Whatever
// happens, every process is killed and both namespaces are removed.

import { FRESH_MS } from '../../src/server/shared-checks.js';
import { stagedCli } from '../helpers/staged-cli.js';
import { type Backend, Lab, POD } from '../init/lab.js';
import { type AppConfig, appServers } from './app-config.js';
import { KubeletStandin, type ProbeCall } from './kubelet-standin.js';
import { installOsmEdge, startSidecarProxy } from './mesh.js';
import { type ContainerSpec, containerEnv, readPodSpec, setprivArgs } from './pod-spec.js';
import { Processes, type Running } from './processes.js';
import { describeDecisions, verdict } from './verdicts.js';

export type Phase = 'healthy' | 'unhealthy' | 'dead';
export type Family = 'v4' | 'v6';

export interface PodPlay {
  /** The manifest kubelet gets: after inject, or the original for the run without it. */
  manifest: string;
  /** The manifest before inject: the app containers serve what its probes probe. */
  original: string;
  /** Containers of this image run the CLI (the image's entrypoint is `node dist/cli.mjs`). */
  image: string;
  family: Family;
  /** Names the namespaces; unique per concurrent play. */
  tag: string;
  backend: Backend;
  phases: readonly Phase[];
  tickMs: number;
  phaseTicks: number;
  programs: { app: string; prober: string };
  tls: { key: string; cert: string };
}

export interface PodResult {
  /** Per container, per phase: `ready` or `not ready`, then the probe kinds that restarted it, if any. */
  table: Record<string, string[]>;
  /** How the pod started: `start <container>`, `postStart <container>: exit <code>`, in order. */
  startup: string[];
  /** Per container, the failed probes kubelet recorded before the container was first Ready. */
  failuresBeforeReady: Record<string, string[]>;
  /** What happened, for a failing assertion's message. */
  transcript: string;
}

/** Staged where the companion's uid can read it, wherever the checkout is (test/helpers/staged-cli.ts). */
const CLI = stagedCli();
/** The image's CLI (Dockerfile ENTRYPOINT), as a hook names it: played by the built one. */
const IMAGE_CLI = ['node', '/app/dist/cli.mjs'];
/** The image's environment (Dockerfile: the node image's PATH, NODE_ENV=production) and nothing else. */
export const IMAGE_ENV = [
  'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  'NODE_ENV=production',
];
const START_TIMEOUT_MS = 15_000;
/** A played kubelet second, in real milliseconds: the played pods run ten times faster than kubelet's clock. */
export const PLAYED_TICK_MS = 100;
/**
 * The companion answers a probe from a check begun at most 100 ms before it (src/server/shared-checks.ts), a tenth
 * of kubelet's shortest period; with kubelet's second played in PLAYED_TICK_MS, the window is scaled with it.
 */
export const PLAYED_CLOCK_ENV = [
  `OSM_HEALTHCHECK_SHARED_CHECK_WINDOW_MS=${Math.round((FRESH_MS * PLAYED_TICK_MS) / 1000)}`,
];

/** The container's process: `env -i <image env> <container env> [setpriv ...] node dist/cli.mjs <args>`. */
export function cliArgv(c: ContainerSpec, podIp: string): string[] {
  return [...containerPrefix(c, podIp), process.execPath, CLI, ...c.args];
}

/** An exec hook runs in the container: its env and privileges, the command as given (no entrypoint). */
export function hookArgv(c: ContainerSpec, command: readonly string[], podIp: string): string[] {
  if (!IMAGE_CLI.every((word, i) => command[i] === word)) {
    throw new Error(
      `${c.name}: only hooks that run ${IMAGE_CLI.join(' ')} can be played, got ${command.join(' ')}`,
    );
  }
  return [...containerPrefix(c, podIp), process.execPath, CLI, ...command.slice(IMAGE_CLI.length)];
}

function containerPrefix(c: ContainerSpec, podIp: string): string[] {
  const env = Object.entries(containerEnv(c.env, { 'status.podIP': podIp })).map(([k, v]) => `${k}=${v}`);
  return ['env', '-i', ...IMAGE_ENV, ...PLAYED_CLOCK_ENV, ...env, ...setprivArgs(c.securityContext)];
}

/**
 * Starts an app container of the original manifest in the pod's namespace, serving what its probes probe, and
 * waits until it listens.
 */
export function appStarter(
  procs: Processes,
  lab: Lab,
  original: { containers: readonly ContainerSpec[] },
  play: { programs: { app: string }; tls: { key: string; cert: string } },
  running: Map<string, Running>,
): (name: string) => Promise<void> {
  return async (name) => {
    const spec = original.containers.find((c) => c.name === name);
    if (spec === undefined) throw new Error(`container ${name} is not in the original manifest`);
    const config: AppConfig = { container: name, servers: appServers(spec), tls: play.tls };
    const app = procs.start(`app ${name}`, lab.pod, [
      process.execPath,
      play.programs.app,
      JSON.stringify(config),
    ]);
    await app.waitFor((line) => line === 'ready', START_TIMEOUT_MS);
    running.set(name, app);
  };
}

export async function playPod(play: PodPlay): Promise<PodResult> {
  const pod = readPodSpec(play.manifest);
  const original = readPodSpec(play.original);
  const podIp = POD[play.family];
  const transcript: string[] = [];
  const procs = new Processes();
  const running = new Map<string, Running>();
  const lab = await Lab.create(play.tag);
  let standin: KubeletStandin | undefined;

  const startApp = appStarter(procs, lab, original, play, running);

  try {
    await installOsmEdge(lab, play.backend, pod.annotations);
    await startSidecarProxy(procs, lab, START_TIMEOUT_MS);

    for (const c of pod.initContainers) {
      if (c.image !== play.image)
        throw new Error(`init container ${c.name}: only ${play.image} can be played`);
      const result = await lab.run(lab.pod, cliArgv(c, podIp));
      transcript.push(
        `init container ${c.name} (exit ${result.exitCode}):\n${result.stdout}\n${result.stderr}`,
      );
      if (result.exitCode !== 0)
        throw new Error(`init container ${c.name} failed:\n${transcript.join('\n')}`);
    }
    const prober = procs.start('node prober', lab.node, [process.execPath, play.programs.prober]);
    await prober.waitFor((line) => line === 'ready', START_TIMEOUT_MS);
    const kubelet = new KubeletStandin(pod.containers, proberCall(prober, podIp), play.tickMs);
    standin = kubelet;

    // kubelet's SyncPod: one container after another, each postStart hook to its end before the next.
    const startup: string[] = [];
    for (const c of pod.containers) {
      startup.push(`start ${c.name}`);
      if (c.image !== play.image) {
        // The stand-in app listens at once, as an app whose own start-up is instant: this test is about
        // whether the companion answers by the app's first probe, not about how fast an app starts.
        await startApp(c.name);
      } else {
        running.set(c.name, procs.start(c.name, lab.pod, cliArgv(c, podIp)));
        transcript.push(
          `${c.name}: ${cliArgv(c, podIp)
            .slice(2 + IMAGE_ENV.length)
            .join(' ')}`,
        );
      }
      if (c.postStart !== undefined) {
        const hook = await lab.run(lab.pod, hookArgv(c, c.postStart, podIp));
        startup.push(`postStart ${c.name}: exit ${hook.exitCode}`);
        transcript.push(`postStart ${c.name} (exit ${hook.exitCode}):\n${hook.stdout}\n${hook.stderr}`);
      }
      kubelet.startContainer(c.name);
    }

    const appNames = pod.containers.filter((c) => c.image !== play.image).map((c) => c.name);
    const containers = pod.containers.map((c) => c.name);
    const table = await playPhases(
      play,
      kubelet,
      containers,
      appNames,
      { running, procs, startApp },
      transcript,
    );
    for (const proc of running.values()) {
      transcript.push(
        `${proc.name} output:\n${proc.lines.filter((l) => !l.includes('"level":20')).join('\n')}`,
      );
    }
    return {
      table,
      startup,
      failuresBeforeReady: failuresBeforeReady(kubelet),
      transcript: transcript.join('\n'),
    };
  } finally {
    await standin?.stop();
    await procs.killAll();
    await lab.close();
  }
}

/** `kind: detail` of every failed probe of each container before its first Ready (all of them if never Ready). */
function failuresBeforeReady(kubelet: KubeletStandin): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const name of Object.keys(kubelet.readiness())) {
    const ready = kubelet.decisions.find((d) => d.container === name && d.what === 'ready')?.at ?? Infinity;
    const failed = kubelet.results.filter(
      (r) => r.container === name && r.outcome === 'failure' && r.at < ready,
    );
    if (failed.length > 0) out[name] = failed.map((r) => `${r.kind}: ${r.detail}`);
  }
  return out;
}

let switches = 0;

/** Moves the app processes from one phase to the next: switch their health, kill them, or start them again. */
/** The apps of a played pod, started, killed and started again as the phases move. */
export interface PlayedApps {
  running: Map<string, Running>;
  procs: Processes;
  startApp: (name: string) => Promise<void>;
}

/**
 * Plays the phases on a started pod: each lasts `phaseTicks` ticks, then the apps move to the next phase. Per
 * container, kubelet's verdict for each phase; each phase's decisions go into the transcript.
 */
export async function playPhases(
  play: { phases: readonly Phase[]; phaseTicks: number; tickMs: number },
  kubelet: KubeletStandin,
  containers: readonly string[],
  appNames: readonly string[],
  apps: PlayedApps,
  transcript: string[],
): Promise<Record<string, string[]>> {
  const table: Record<string, string[]> = Object.fromEntries(containers.map((name) => [name, []]));
  let phaseStart = performance.now();
  for (const [i, phase] of play.phases.entries()) {
    await new Promise((resolve) => setTimeout(resolve, play.phaseTicks * play.tickMs));
    const ready = kubelet.readiness();
    const next = play.phases[i + 1];
    // The phase owns what happens until the next one begins: a transition is still the old phase.
    if (next !== undefined) await moveApps(phase, next, appNames, apps);
    const phaseEnd = performance.now();
    for (const name of containers) {
      table[name]?.push(verdict(ready[name] === true, kubelet.decisions, name, phaseStart, phaseEnd));
    }
    transcript.push(
      `phase ${phase}: ${describeDecisions(kubelet.decisions, phaseStart, phaseEnd, play.tickMs)}`,
    );
    phaseStart = phaseEnd;
  }
  return table;
}

async function moveApps(
  from: Phase,
  to: Phase,
  names: readonly string[],
  { running, procs, startApp }: PlayedApps,
): Promise<void> {
  for (const name of names) {
    if (to === 'dead') {
      const app = running.get(name);
      if (app !== undefined) await procs.kill(app);
      running.delete(name);
      continue;
    }
    if (from === 'dead') await startApp(name);
    const app = running.get(name);
    if (app === undefined) throw new Error(`app ${name} is not running`);
    const ack = `mode ${to} ${++switches}`;
    app.send(ack.slice('mode '.length));
    await app.waitFor((line) => line === ack, START_TIMEOUT_MS);
  }
}

/** Sends each probe to the node's prober as one JSON line and matches the answer by id. */
export function proberCall(prober: Running, host: string): ProbeCall {
  let nextId = 0;
  const pending = new Map<number, (v: { outcome: 'success' | 'failure'; detail: string }) => void>();
  prober.onLine((line) => {
    if (!line.startsWith('{')) return;
    const answer = JSON.parse(line) as { id: number; outcome: 'success' | 'failure'; detail: string };
    pending.get(answer.id)?.(answer);
    pending.delete(answer.id);
  });
  prober.exited.then(() => {
    for (const resolve of pending.values()) resolve({ outcome: 'failure', detail: 'the node prober exited' });
    pending.clear();
  });
  return (action, timeoutMs) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      prober.send(JSON.stringify({ id, host, action, timeoutMs }));
    });
}
