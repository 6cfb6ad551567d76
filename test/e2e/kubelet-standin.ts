// The kubelet stand-in: one worker per probe of every container, from the moment that container started,
// probing on kubelet's schedule through `probe` and recording every result and the decisions kubelet would make
// (Ready changes, restarts). The rules are kubelet.ts's; this file owns only the clock and the calls. Time is scaled: one kubelet second is `tickMs` for initial delays and
// periods, while every probe keeps its real timeoutSeconds, so the companion's budget (timeoutSeconds less 10%)
// is judged honestly. A restart is modelled as kubelet sees it, a new container: its probes start over from
// their initial values and delays. Restart back-off is not modelled; it delays decisions, never changes them.

import type { ProbeKind } from '../../src/scheme.js';
import {
  isReady,
  isStarted,
  newWorker,
  type Outcome,
  onNewContainer,
  recordResult,
  shouldProbe,
  type WorkerState,
} from './kubelet.js';
import type { ContainerSpec, ProbeAction, ProbeSpec } from './pod-spec.js';

export type ProbeCall = (
  action: ProbeAction,
  timeoutMs: number,
) => Promise<{ outcome: Outcome; detail: string }>;

export interface ProbeResult {
  /** performance.now() when the probe started. */
  at: number;
  container: string;
  kind: ProbeKind;
  outcome: Outcome;
  detail: string;
}

export interface Decision {
  /** performance.now() when the probe that led to it started. */
  at: number;
  container: string;
  what: 'ready' | 'not ready' | 'restart';
  /** For a restart: the probe kind that failed failureThreshold times, and its last failure. */
  cause?: ProbeKind;
  detail?: string;
}

interface ContainerState {
  spec: ContainerSpec;
  /** Undefined until the container started: kubelet probes only running containers. */
  startedAt: number | undefined;
  /** Bumped on each restart: a result that comes back for an earlier container is dropped. */
  generation: number;
  workers: Map<ProbeKind, WorkerState>;
  ready: boolean;
}

export class KubeletStandin {
  readonly decisions: Decision[] = [];
  readonly results: ProbeResult[] = [];
  private readonly containers: ContainerState[];
  private readonly loops: Promise<void>[] = [];
  private readonly sleepers = new Set<() => void>();
  private stopped = false;

  constructor(
    specs: readonly ContainerSpec[],
    private readonly probe: ProbeCall,
    private readonly tickMs: number,
  ) {
    this.containers = specs.map((spec) => ({
      spec,
      startedAt: undefined,
      generation: 0,
      workers: new Map(spec.probes.map((p) => [p.kind, newWorker(p.kind)])),
      ready: false,
    }));
  }

  /**
   * The container started now (its process runs and its postStart hook returned), and its probe workers with
   * it: kubelet's first probe comes on the first tick after that, here at once, the soonest it can.
   */
  startContainer(name: string): void {
    const c = this.containers.find((container) => container.spec.name === name);
    if (c === undefined) throw new Error(`${name} is no container of this pod`);
    if (c.startedAt !== undefined) throw new Error(`${name} started twice`);
    const now = performance.now();
    c.startedAt = now;
    this.updateReady(c, now);
    for (const spec of c.spec.probes) this.loops.push(this.worker(c, spec));
  }

  /** Each container's Ready condition now. */
  readiness(): Record<string, boolean> {
    return Object.fromEntries(this.containers.map((c) => [c.spec.name, c.ready]));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.sleepers) wake();
    await Promise.all(this.loops);
  }

  /** worker.run: probe at once, then on every tick of the period. */
  private async worker(c: ContainerState, spec: ProbeSpec): Promise<void> {
    const periodMs = spec.timing.periodSeconds * this.tickMs;
    const t0 = performance.now();
    let tick = 0;
    while (!this.stopped) {
      await this.doProbe(c, spec);
      // Go's time.Ticker drops the ticks a slow receiver missed: the next probe waits for the next tick.
      tick = Math.max(tick + 1, Math.ceil((performance.now() - t0) / periodMs));
      await this.sleepUntil(t0 + tick * periodMs);
    }
  }

  private async doProbe(c: ContainerState, spec: ProbeSpec): Promise<void> {
    const worker = this.workerOf(c, spec.kind);
    if (c.startedAt === undefined) return;
    const gate = {
      secondsSinceStart: (performance.now() - c.startedAt) / this.tickMs,
      started: isStarted(c.workers.get('startup')?.published),
    };
    if (!shouldProbe(spec.kind, worker, spec.timing, gate)) return;
    const at = performance.now();
    const generation = c.generation;
    const { outcome, detail } = await this.probe(spec.action, spec.timing.timeoutSeconds * 1000);
    // kubelet files a result for a replaced container under the old container's ID, where nothing reads it.
    if (this.stopped || generation !== c.generation) return;
    this.results.push({ at, container: c.spec.name, kind: spec.kind, outcome, detail });
    const step = recordResult(spec.kind, this.workerOf(c, spec.kind), spec.timing, outcome);
    c.workers.set(spec.kind, step.worker);
    if (step.restart) {
      this.decisions.push({ at, container: c.spec.name, what: 'restart', cause: spec.kind, detail });
      c.generation += 1;
      c.startedAt = performance.now();
      for (const [kind, w] of c.workers) c.workers.set(kind, onNewContainer(kind, w));
    }
    this.updateReady(c, at);
  }

  private workerOf(c: ContainerState, kind: ProbeKind): WorkerState {
    const worker = c.workers.get(kind);
    if (worker === undefined) throw new Error(`${c.spec.name} has no ${kind} worker`);
    return worker;
  }

  private updateReady(c: ContainerState, at: number): void {
    const started = isStarted(c.workers.get('startup')?.published);
    const ready = isReady(started, c.workers.get('readiness')?.published);
    if (ready === c.ready) return;
    c.ready = ready;
    this.decisions.push({ at, container: c.spec.name, what: ready ? 'ready' : 'not ready' });
  }

  private sleepUntil(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, deadline - performance.now()));
      this.sleepers.add(wake);
    });
  }
}
