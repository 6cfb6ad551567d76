// What kubelet would have made of an outage, read from dense samples of an endpoint (probed every ~50 ms): the
// spans it failed, and the most consecutive failures a kubelet probing it every `periodMs` would have counted, at
// the worst phase its ticker can have. An endpoint is taken to answer as its latest sample did.

export interface Point {
  /** When the sample's request started (ms). */
  at: number;
  ok: boolean;
}

export interface Span {
  from: number;
  /** The first good sample after the failures; the last sample's time when none came. */
  to: number;
}

export function outages(points: readonly Point[]): Span[] {
  const spans: Span[] = [];
  let from: number | undefined;
  for (const p of points) {
    if (!p.ok && from === undefined) from = p.at;
    if (p.ok && from !== undefined) {
      spans.push({ from, to: p.at });
      from = undefined;
    }
  }
  if (from !== undefined) spans.push({ from, to: points.at(-1)?.at ?? from });
  return spans;
}

/** The most consecutive failures over every phase of a kubelet ticker of `periodMs`, tried `stepMs` apart. */
export function worstConsecutiveFailures(points: readonly Point[], periodMs: number, stepMs = 10): number {
  const first = points[0]?.at;
  const last = points.at(-1)?.at;
  if (first === undefined || last === undefined) return 0;
  let worst = 0;
  for (let phase = 0; phase < periodMs; phase += stepMs) {
    let run = 0;
    let i = 0;
    for (let t = first + phase; t <= last; t += periodMs) {
      while (i + 1 < points.length && (points[i + 1]?.at ?? Number.POSITIVE_INFINITY) <= t) i++;
      run = points[i]?.ok ? 0 : run + 1;
      worst = Math.max(worst, run);
    }
  }
  return worst;
}
