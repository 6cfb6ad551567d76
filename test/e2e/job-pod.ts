// Plays a pod that must end (a Job's: restartPolicy Never) to its end, as kubelet runs it, in a pod network
// namespace behind osm-edge's interception (test/e2e/pod.ts plays pods that run on). Init containers in order:
// ours to completion, a native sidecar (restartPolicy Always) started and held until its startup probe passes;
// then the containers, each postStart hook to its end. Kubelet probes the app through the companion once; the
// app answers and exits 0. Then kubelet's rule for pods that must end: once every regular container has
// terminated, the pod is done and its native sidecars are stopped, in reverse order, with SIGTERM
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions; the order in
// kuberuntime_termination_order.go). A regular container that never exits keeps the pod Running: the play waits
// for it at most `neverMs` and reports it still running. The mesh's own proxy plays no container here.

import type { Backend } from '../init/lab.js';
import { Lab, POD } from '../init/lab.js';
import { installOsmEdge, startSidecarProxy } from './mesh.js';
import { cliArgv, hookArgv } from './pod.js';
import { type ContainerSpec, readPodSpec } from './pod-spec.js';
import { Processes, type Running } from './processes.js';

export interface JobPlay {
  /** The injected manifest: a Job or a Pod with restartPolicy Never. */
  manifest: string;
  /** Containers of this image run the CLI; the app container runs APP below. */
  image: string;
  tag: string;
  backend: Backend;
  /** How long a container that should have ended is given before the pod is reported never completing. */
  neverMs: number;
}

export interface JobResult {
  /** What happened, in order: `start x`, `postStart x: exit 0`, `probe: 200 ...`, `exit x: 0`, `SIGTERM x`. */
  events: string[];
  /** Succeeded (every container ended, the app with 0) or Running (some container still runs). */
  phase: 'Succeeded' | 'Running';
  transcript: string;
}

const START_TIMEOUT_MS = 15_000;
/** The companion drains within the pod's grace (30 s by default); this bounds the wait for it. */
const STOP_TIMEOUT_MS = 30_000;
const IMAGE_CLI = ['node', '/app/dist/cli.mjs'];

/** The Job's app: serves GET /status on 8081 once, then ends its work and exits 0. */
const APP = `
const server = require('node:http').createServer((req, res) => {
  res.end('ok');
  res.on('finish', () => { server.close(); process.exit(0); });
});
server.listen(8081, () => console.log('ready'));`;

/** kubelet's rewritten liveness probe, sent from the node: GET POD:15901/osm-liveness-probe/<container>. */
function probeScript(host: string, container: string): string {
  return `require('node:http').get({ host: '${host}', port: 15901, path: '/osm-liveness-probe/${container}' },
  (res) => { let b = ''; res.on('data', (c) => { b += c; }); res.on('end', () => console.log(res.statusCode + ' ' + b.trim())); })
  .on('error', (e) => console.log('error ' + e.message));`;
}

export async function playJob(play: JobPlay): Promise<JobResult> {
  const pod = readPodSpec(play.manifest);
  const podIp = POD.v4;
  const events: string[] = [];
  const transcript: string[] = [];
  const procs = new Processes();
  const lab = await Lab.create(play.tag);
  const sidecars: { c: ContainerSpec; proc: Running }[] = [];
  const containers: { c: ContainerSpec; proc: Running }[] = [];
  const ours = (c: ContainerSpec) => c.image === play.image;
  let phase: JobResult['phase'] = 'Running';
  try {
    await installOsmEdge(lab, play.backend);
    await startSidecarProxy(procs, lab, START_TIMEOUT_MS);
    for (const c of pod.initContainers) {
      if (!ours(c)) throw new Error(`init container ${c.name}: only ${play.image} can be played`);
      if (c.restartPolicy !== 'Always') {
        const result = await lab.run(lab.pod, cliArgv(c, podIp));
        events.push(`init ${c.name}: exit ${result.exitCode}`);
        if (result.exitCode !== 0) throw new Error(`init ${c.name} failed: ${result.stderr}`);
        continue;
      }
      events.push(`start ${c.name} (native sidecar)`);
      sidecars.push({ c, proc: procs.start(c.name, lab.pod, cliArgv(c, podIp)) });
      // Its startupProbe (GET /healthz on 15904) holds the next container back; `wait` polls the same URL.
      const started = await lab.run(lab.pod, hookArgv(c, [...IMAGE_CLI, 'wait'], podIp));
      events.push(`startupProbe ${c.name}: ${started.exitCode === 0 ? 'passed' : 'failed'}`);
    }
    for (const c of pod.containers) {
      events.push(`start ${c.name}`);
      const proc = ours(c)
        ? procs.start(c.name, lab.pod, cliArgv(c, podIp))
        : procs.start(c.name, lab.pod, [process.execPath, '-e', APP]);
      if (!ours(c)) await proc.waitFor((line) => line === 'ready', START_TIMEOUT_MS);
      if (c.postStart !== undefined) {
        const hook = await lab.run(lab.pod, hookArgv(c, c.postStart, podIp));
        events.push(`postStart ${c.name}: exit ${hook.exitCode}`);
      }
      containers.push({ c, proc });
    }
    const app = containers.find(({ c }) => !ours(c));
    if (app === undefined) throw new Error('no app container in the pod');
    const probe = await lab.run(lab.node, [process.execPath, '-e', probeScript(podIp, app.c.name)]);
    events.push(`probe liveness/${app.c.name}: ${probe.stdout.trim()}`);
    events.push(`exit ${app.c.name}: ${await app.proc.exited}`);

    // Every regular container must have terminated for the pod to be done.
    const others = containers.filter((entry) => entry !== app);
    const ended = await Promise.all(others.map(({ proc }) => exitWithin(proc, play.neverMs)));
    others.forEach(({ c }, i) => {
      events.push(ended[i] === undefined ? `${c.name}: still running` : `exit ${c.name}: ${ended[i]}`);
    });
    if (ended.every((code) => code !== undefined)) {
      for (const { c, proc } of [...sidecars].reverse()) {
        events.push(`SIGTERM ${c.name}`);
        proc.child.kill('SIGTERM');
        const code = await exitWithin(proc, STOP_TIMEOUT_MS);
        events.push(code === undefined ? `${c.name}: still running` : `exit ${c.name}: ${code}`);
      }
      phase = 'Succeeded';
    }
  } finally {
    for (const proc of [...sidecars, ...containers].map(({ proc }) => proc)) {
      transcript.push(`${proc.name}:\n${proc.lines.join('\n')}\n${proc.stderr()}`);
    }
    await procs.killAll();
    await lab.close();
  }
  return { events, phase, transcript: transcript.join('\n') };
}

/** The exit code, or undefined if the process still runs after `ms`. */
function exitWithin(proc: Running, ms: number): Promise<number | null | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([proc.exited, bound]).finally(() => clearTimeout(timer));
}
