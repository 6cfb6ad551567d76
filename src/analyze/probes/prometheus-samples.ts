// The samples from a user's Prometheus: the instant queries at the window's end and the range query of liveness
// failures step by step over it (promql.ts), asked one after the other (a Prometheus is shared; seven small
// queries are nothing to it).

import type { Prometheus } from './prometheus-client.js';
import { failureSteps, instantQueries, type Series, samplesOf, scopeMatcher, windowsOf } from './promql.js';
import type { Samples } from './samples.js';

/** The step in which "every replica failed at once" is judged: 5 minutes, or the whole window if shorter. */
const STEP_SECONDS = 300;

export async function prometheusSamples(
  prom: Prometheus,
  namespace: string | undefined,
  windowSeconds: number,
  now: number,
): Promise<Samples> {
  const scope = scopeMatcher(namespace);
  const answers: Record<string, Series[]> = {};
  for (const [name, query] of Object.entries(instantQueries(`${windowSeconds}s`, scope))) {
    answers[name] = await prom.instant(query, now);
  }
  const step = Math.min(STEP_SECONDS, windowSeconds);
  const matrix = await prom.range(failureSteps(`${step}s`, scope), now - windowSeconds + step, now, step);
  return {
    source: `Prometheus ${prom.url}`,
    windowSeconds,
    ...samplesOf(answers),
    windows: windowsOf(matrix, step),
  };
}
