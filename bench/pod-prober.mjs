// kubelet inside a benchmark pod (run there with `ip netns exec`): kubelet-style HTTP probes (bench/clients.mjs) on
// loopback, from a JSON plan in argv[2]. It first waits until every port of `ready` answers HTTP, then:
//   rounds: `rounds` rounds every `periodMs`, each probing every target once, in turn (the fleet's pace);
//   loops:  each target probed every `periodMs` for `seconds`, never two at once, as kubelet's per-probe workers;
//   burst:  `concurrency` probes in flight per target, back to back, for `seconds` (a slow app's worst case).
// Prints { [target name]: { latencies, failures } } as one JSON line (failures: status or `timeout`, per failure).

import { httpProbe } from './clients.mjs';

const plan = JSON.parse(process.argv[2]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const results = Object.fromEntries(plan.targets.map((t) => [t.name, { latencies: [], failures: [] }]));

async function probe(target) {
  const r = await httpProbe(target.port, target.path, target.headers ?? {}, plan.timeoutMs ?? 1000);
  results[target.name].latencies.push(r.ms);
  if (!r.ok && !(target.expect ?? []).includes(r.status))
    results[target.name].failures.push(String(r.status));
  return r;
}

const readyBy = performance.now() + 15_000;
for (const port of plan.ready ?? []) {
  while ((await httpProbe(port, '/healthz', {}, 500)).status === 0) {
    if (performance.now() > readyBy) throw new Error(`port ${port} did not answer within 15 s`);
    await sleep(5);
  }
}

/** Runs `step` every `periodMs` until `until`; a late step starts the next at once, as Go's ticker would. */
async function every(periodMs, until, step) {
  let next = performance.now();
  while (performance.now() < until()) {
    await step();
    next += periodMs;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    else next = performance.now();
  }
}

if (plan.mode === 'rounds') {
  let done = 0;
  await every(
    plan.periodMs,
    () => (done < plan.rounds ? Number.POSITIVE_INFINITY : 0),
    async () => {
      for (const target of plan.targets) await probe(target);
      done++;
    },
  );
} else {
  const until = performance.now() + plan.seconds * 1000;
  const workers =
    plan.mode === 'loops'
      ? plan.targets.map((t) =>
          every(
            plan.periodMs,
            () => until,
            () => probe(t),
          ),
        )
      : plan.targets.flatMap((t) =>
          Array.from({ length: plan.concurrency }, async () => {
            while (performance.now() < until) await probe(t);
          }),
        );
  await Promise.all(workers);
}
process.stdout.write(`${JSON.stringify(results)}\n`);
