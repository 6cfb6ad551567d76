// `npm run bench -- --fleet` and `-- --contention`: the knobs, and the runs that write the fleet and
// contention blocks of BENCHMARKS.md, one per Node major. Needs root (network namespaces, cgroups): without it
// both parts say loudly that they are skipped.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { runContention } from './contention.mjs';
import { runFleet, smapsText } from './fleet.mjs';
import { contentionRows, renderContention, renderFleet } from './fleet-report.mjs';
import { injectResources } from './inject-resources.mjs';
import { smallestPassing, smapsRollup } from './kube-resources.mjs';
import { benchNodes, buildWith } from './node-builds.mjs';
import { podsUnavailable } from './pods.mjs';
import { machineInfo, placeResults } from './report.mjs';

const say = (text) => process.stderr.write(`${text}\n`);
/** The chosen CPU request keeps probe p99 under full contention below this. */
export const P99_LIMIT_MS = 250;

/** Writes `text` into the `kind` block of Node `major` in BENCHMARKS.md (or BENCH_FILE). */
function write(kind, version, text) {
  const file = process.env.BENCH_FILE ?? 'BENCHMARKS.md';
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  writeFileSync(file, placeResults(current, version.slice(1).split('.')[0], text, kind));
}

export async function runFleetParts(plan, parts) {
  const why = podsUnavailable();
  if (why !== undefined) {
    say(
      `\n!!! SKIPPED the fleet and contention benchmarks: ${why}.\n!!! Run \`sudo npm run bench -- --fleet --contention\`.\n`,
    );
    return;
  }
  const nodes = benchNodes(plan.nodes);
  const resources = injectResources();
  const info = machineInfo('dist/cli.mjs');
  if (parts.has('fleet')) {
    for (const node of nodes) {
      const fleet = await runFleet({
        node,
        k: plan.k,
        runs: plan.runs,
        rounds: plan.rounds,
        periodMs: plan.periodMs,
        smaps: (pid) => smapsRollup(smapsText(pid)),
        say,
        burst: { seconds: plan.burstSeconds, limitBytes: resources.limitBytes },
      });
      const text = renderFleet(fleet, info, resources);
      process.stdout.write(`${text}\n\n`);
      write('fleet', node.version, text);
    }
  }
  if (parts.has('contention') && nodes.length > 0) {
    const [node] = nodes;
    const built = buildWith(node);
    try {
      const result = await runContention({
        build: { ...built, node: node.path },
        candidates: plan.candidates,
        rounds: plan.contentionRounds,
        seconds: plan.contentionSeconds,
        periodMs: plan.contentionPeriodMs,
        say,
      });
      const chosen = smallestPassing(
        contentionRows(result).filter((r) => r.milliCpu !== undefined),
        P99_LIMIT_MS,
      );
      const text = renderContention(result, { ...info, node: node.version }, resources, P99_LIMIT_MS, chosen);
      process.stdout.write(`${text}\n\n`);
      write('contention', node.version, text);
    } finally {
      built.remove();
    }
  }
}
