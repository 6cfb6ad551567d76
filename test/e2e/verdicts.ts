// The kubelet stand-in's decisions, cut into phases: what the test asserts (one verdict per container and phase)
// and what it prints when an assertion fails (every decision, in ticks from the phase's start).

import type { Decision } from './kubelet-standin.js';

/** `ready` or `not ready` at the phase's end, then the probe kinds that restarted the container in it, if any. */
export function verdict(
  ready: boolean,
  decisions: readonly Decision[],
  container: string,
  start: number,
  end: number,
) {
  const causes = decisions
    .filter((d) => d.container === container && d.what === 'restart' && d.at >= start && d.at < end)
    .map((d) => d.cause);
  const kinds = [...new Set(causes)].sort();
  return `${ready ? 'ready' : 'not ready'}${kinds.length > 0 ? `, restarted by ${kinds.join(' and ')}` : ''}`;
}

export function describeDecisions(
  decisions: readonly Decision[],
  start: number,
  end: number,
  tickMs: number,
) {
  const lines = decisions
    .filter((d) => d.at >= start && d.at < end)
    .map((d) => {
      const tick = ((d.at - start) / tickMs).toFixed(1);
      const cause = d.cause === undefined ? '' : ` (${d.cause}: ${d.detail})`;
      return `  +${tick} ticks ${d.container} ${d.what}${cause}`;
    });
  return lines.length === 0 ? 'no decisions' : `\n${lines.join('\n')}`;
}
