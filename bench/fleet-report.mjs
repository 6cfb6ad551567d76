// Markdown for the fleet and contention benchmarks (bench/fleet.mjs, bench/burst.mjs, bench/contention.mjs): the
// memory of each kind of process across the fleet, the companion's working set as kubelet counts it, its worst
// burst, and its probe latency under CPU contention per CPU request, judged against its targets.

import { memoryLimitFor, memoryRequestFor, parseMemory } from './kube-resources.mjs';
import { percentile } from './stats.mjs';

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const table = (head, rows) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
const LABEL = {
  idle: 'idle `node -e` (the floor of any Node process)',
  floor: "raw node:http (the Go osm-healthcheck's job)",
  companion: 'companion (`serve`)',
};

/** Per kind: mean RSS, PSS, private; and for the companion, working sets of pod 0 (first) and the others. */
export function fleetSummary(fleet) {
  const kinds = {};
  for (const kind of ['idle', 'floor', 'companion']) {
    const samples = fleet.results.flatMap((r) => r.samples[kind]);
    const first = samples.filter((s) => s.pod === 0);
    const others = samples.filter((s) => s.pod !== 0);
    kinds[kind] = {
      rss: mean(samples.map((s) => s.smaps.rss)),
      pss: mean(samples.map((s) => s.smaps.pss)),
      private: mean(samples.map((s) => s.smaps.private)),
      wsFirst: mean(first.map((s) => s.workingSet)),
      wsOthers: others.length > 0 ? mean(others.map((s) => s.workingSet)) : Number.NaN,
      usageFirst: mean(first.map((s) => s.usage)),
      mappedFirst: mean(first.map((s) => s.mappedFile)),
    };
  }
  const idle = fleet.results.flatMap((r) => r.idleMemory);
  return {
    kinds,
    idleWsFirst: mean(fleet.results.map((r) => r.idleMemory[0].workingSet)),
    idleWsOthers:
      idle.length > fleet.results.length
        ? mean(fleet.results.flatMap((r) => r.idleMemory.slice(1).map((m) => m.workingSet)))
        : Number.NaN,
    failures: fleet.results.flatMap((r) => r.failures).length,
    probes: fleet.results.reduce((n, r) => n + r.probes, 0),
  };
}

export function renderFleet(fleet, info, resources) {
  const s = fleetSummary(fleet);
  const b = fleet.burst;
  const rows = ['idle', 'floor', 'companion'].map((kind) => {
    const k = s.kinds[kind];
    return [LABEL[kind], f1(k.rss), f1(k.pss), f1(k.private), f1(k.wsFirst), f1(k.wsOthers)];
  });
  const burst = Object.entries(b.answers).map(
    ([name, a]) =>
      `${name} ${a.probes} (${Object.entries(a.failures)
        .map(([st, n]) => `${st === '0' ? 'cut' : st}: ${n}`)
        .join(', ')})`,
  );
  const c = s.kinds.companion;
  return [
    `Fleet ${info.date}: ${info.cpu}, ${info.memory}, Linux ${info.kernel}, cgroup v${fleet.cgroupVersion}; companion and raw/idle Node ${fleet.node} (one copy of the binary, built by it), apps and probers on ${process.version}; commit ${info.commit}; ${fleet.k} pods, ${fleet.runs} runs, ${fleet.rounds} probe rounds every ${fleet.periodMs} ms (${s.probes} probes, ${s.failures} failed); inject writes requests ${resources.requests.cpu} / ${resources.requests.memory}, limit ${resources.limits.memory}.`,
    '',
    `**Memory per process** (MiB; mean over ${fleet.k} pods × 3 samples × ${fleet.runs} runs of \`/proc/PID/smaps_rollup\`, after the probe rounds; working set = the process's own memory cgroup, usage − inactive file, as kubelet counts it)`,
    '',
    table(
      ['process', 'RSS', 'PSS', 'private', 'working set, pod 0 (first)', 'working set, other pods'],
      rows,
    ),
    '',
    `Companion, pod 0 (started first, the binary and build just dropped from the page cache): cgroup usage ${f1(c.usageFirst)} MiB of which mapped file pages ${f1(c.mappedFirst)} MiB; working set at idle (1 s after start, before probes) ${f1(s.idleWsFirst)} MiB, other pods ${f1(s.idleWsOthers)} MiB.`,
    '',
    `**Worst burst** (${b.seconds} s, ${'256 + 8'} probes in flight on each of the four ports against an app that never answers; companion in a memory cgroup limited to ${f1(b.limitMiB)} MiB): working set idle ${f1(b.idle)} MiB, peak ${f1(b.peak)} MiB, 5 s after ${f1(b.after)} MiB; OOM kills ${b.oomKills}, companion ${b.running ? 'still running' : b.restarts > 0 ? `serve **restarted ${b.restarts} times** by its supervisor` : '**killed**'}. Probes sent: ${burst.join('; ')}.`,
    ...(b.unlimited === undefined
      ? []
      : [
          '',
          `The same burst with no memory limit (V8 sizes its heap from the machine): working set peak ${f1(b.unlimited.peak)} MiB, 5 s after ${f1(b.unlimited.after)} MiB, idle ${f1(b.unlimited.idle)} MiB.`,
        ]),
    '',
    suggestion(s, b, resources),
  ].join('\n');
}

/** The request and limit this run's numbers call for, against what inject writes. */
export function suggestion(s, b, resources) {
  const largest = Math.max(s.kinds.companion.wsFirst, s.kinds.companion.wsOthers);
  const request = memoryRequestFor(largest);
  const peak = b.unlimited?.peak ?? b.peak;
  const limit = memoryLimitFor(peak);
  const ok = (have, want) => (parseMemory(have) >= parseMemory(want) ? 'met' : '**missed**');
  return (
    `**This run calls for** a memory request of ${request} (1.25 × the largest companion working set, ${f1(largest)} MiB, rounded up to 8 Mi) ` +
    `and a limit of ${limit} (1.2 × the no-limit burst's peak, ${f1(peak)} MiB, rounded up to 64 Mi). ` +
    `inject writes ${resources.requests.memory} (${ok(resources.requests.memory, request)}) and ${resources.limits.memory} (${ok(resources.limits.memory, limit)}${b.running ? '' : '; the burst under it was OOM-killed'}).`
  );
}

/** One row per CPU request: latency percentiles over all probes of that request, failures, CPU per probe. */
export function contentionRows(result) {
  return result.rows.map((r) => ({
    milliCpu: r.milliCpu,
    knob: r.knob,
    probes: r.latencies.length,
    failed: r.failures.length,
    p50: percentile(r.latencies, 0.5),
    p99: percentile(r.latencies, 0.99),
    max: r.latencies.length === 0 ? Number.NaN : Math.max(...r.latencies),
    cpuMs: mean(r.cpu) / 1000,
  }));
}

export function renderContention(result, info, resources, limitMs, chosen) {
  const rows = contentionRows(result).map((r) => [
    r.milliCpu === undefined
      ? 'siblings stopped'
      : `${r.milliCpu}m${resources.milliCpu === r.milliCpu ? ' (inject)' : ''}`,
    r.knob === undefined ? '—' : `${r.knob.file} ${r.knob.value}`,
    String(r.probes),
    String(r.failed),
    f1(r.p50),
    f1(r.p99),
    f1(r.max),
    r.cpuMs.toFixed(2),
  ]);
  const atInject = contentionRows(result).find((r) => r.milliCpu === resources.milliCpu);
  const verdict =
    atInject === undefined
      ? `inject's request ${resources.requests.cpu} was not among the candidates.`
      : `At inject's request ${resources.requests.cpu}: p99 ${f1(atInject.p99)} ms, ${atInject.failed} failed — ${atInject.failed === 0 && atInject.p99 < limitMs ? 'met' : '**missed**'} (target: p99 < ${limitMs} ms, none failed).`;
  return [
    `Contention ${info.date}: ${info.cpu}, Linux ${info.kernel}, cgroup v${result.cgroupVersion}; companion on Node ${info.node}; commit ${info.commit}; ${result.cores} cores all kept busy by two sibling cgroups (one busy loop per core each) requesting the node's other ${result.cores * 1000}m − the companion's; the HTTP, TCP and gRPC probes of examples/probes.json each every ${result.periodMs} ms (kubelet's shortest periodSeconds), 1 s timeout, ${result.rounds} interleaved rounds of ${result.seconds} s per request.`,
    '',
    table(
      [
        'companion CPU request',
        'its cgroup knob',
        'probes',
        'failed (1 s timeout)',
        'p50 ms',
        'p99 ms',
        'max ms',
        'companion CPU ms per probe',
      ],
      rows,
    ),
    '',
    `Smallest request with p99 < ${limitMs} ms and no failure: ${chosen === undefined ? 'none of the candidates' : `${chosen.milliCpu}m (p99 ${f1(chosen.p99)} ms)`}. ${verdict}`,
  ].join('\n');
}
