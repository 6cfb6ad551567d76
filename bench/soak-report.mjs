// Turns a soak run (bench/soak.mjs) into its verdict and a Markdown block for BENCHMARKS.md: the slopes of RSS,
// V8 heap used and open descriptors after warm-up against their limits, failed kubelet probes, and a time series.

import { check, formatSummary, percentile, slope, soakVerdict, summary, windowLows } from './stats.mjs';

/**
 * The most each measure's per-window low may rise per minute after warm-up for the companion to count as flat
 * (BENCHMARKS.md, Soak, says why these): V8 heap used and RSS in MiB per minute, descriptors per minute.
 */
export const SOAK_LIMITS = { heapUsed: 0.25, rss: 0.5, fds: 0.5 };

const MEASURES = [
  { key: 'rss', label: 'RSS MiB', decimals: 1 },
  { key: 'heapUsed', label: 'V8 heap used MiB', decimals: 1 },
  { key: 'fds', label: 'open file descriptors', decimals: 0 },
  { key: 'anon', label: '(not judged) anonymous RSS MiB', decimals: 1 },
];

/**
 * Each measure's fit (`{ key, first, last, slope, check }`: the first and last lows after warm-up, slope per
 * minute, met/missed/unmeasured against SOAK_LIMITS; no check for measures without a limit), the failed
 * kubelet probes, and the verdict.
 */
export function soakChecks(result) {
  const { floodEverySeconds, warmupSeconds } = result.options;
  const fits = MEASURES.map(({ key }) => {
    const lows = windowLows(result.samples, key, floodEverySeconds, warmupSeconds);
    const perMinute = slope(lows);
    const limit = SOAK_LIMITS[key];
    return {
      key,
      first: lows[0]?.y ?? Number.NaN,
      last: lows.at(-1)?.y ?? Number.NaN,
      slope: perMinute,
      check: limit === undefined ? undefined : check(perMinute, limit),
    };
  });
  const probes = result.probes.reduce((sum, p) => sum + p.count, 0);
  const failed = result.probes.reduce((sum, p) => sum + p.failures.length, 0);
  const probeCheck = probes === 0 ? 'unmeasured' : check(failed, 0);
  const checks = [...fits.map((f) => f.check).filter((c) => c !== undefined), probeCheck];
  return { fits, probes, failed, probeCheck, verdict: soakVerdict(checks) };
}

const table = (head, rows) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
const signed = (x, decimals) =>
  Number.isFinite(x) ? `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(decimals)}` : '—';
const number = (x, decimals) => (Number.isFinite(x) ? x.toFixed(decimals) : '—');
const CHECK_TEXT = { met: 'met', missed: '**missed**', unmeasured: 'not measured' };

function heapUnavailable(result) {
  return result.samples.every((s) => s.heapUsed === null);
}

function checksTable(result, c) {
  const unavailable = `unavailable: GET /metrics → ${result.metricsOutcome ?? 'nothing'}`;
  const rows = c.fits.map((fit) => {
    const measure = MEASURES.find((m) => m.key === fit.key);
    const limit = SOAK_LIMITS[fit.key];
    const values =
      fit.key === 'heapUsed' && heapUnavailable(result)
        ? [unavailable, '—', '—']
        : [number(fit.first, measure.decimals), number(fit.last, measure.decimals), signed(fit.slope, 2)];
    return [
      measure.label,
      ...values,
      limit === undefined ? '—' : `≤ ${limit}`,
      fit.check === undefined ? '—' : CHECK_TEXT[fit.check],
    ];
  });
  rows.push([
    'failed kubelet probes, all four ports',
    '—',
    `${c.failed} of ${c.probes}`,
    '—',
    '0',
    CHECK_TEXT[c.probeCheck],
  ]);
  const head = ['measure', 'first low after warm-up', 'last low', 'slope per minute', 'limit', 'verdict'];
  return table(head, rows);
}

function range(values, decimals) {
  const present = values.filter((v) => v !== null);
  if (present.length === 0) return '—';
  const low = Math.min(...present).toFixed(decimals);
  const high = Math.max(...present).toFixed(decimals);
  return low === high ? low : `${low}–${high}`;
}

/** One row per flood interval: each measure's low–high, the failed probes and the flood that started it. */
function series(result) {
  const { floodEverySeconds: every, warmupSeconds, seconds } = result.options;
  const rows = [];
  for (let from = 0; from < seconds; from += every) {
    const inWindow = (t) => t >= from && t < from + every;
    const samples = result.samples.filter((s) => inWindow(s.t));
    const failed = result.probes.reduce((sum, p) => sum + p.failedAt.filter(inWindow).length, 0);
    const flood = result.floods.find((f) => inWindow(f.t));
    rows.push([
      `${from}–${Math.min(from + every, seconds)}${from < warmupSeconds ? ' (warm-up)' : ''}`,
      ...MEASURES.map((m) =>
        range(
          samples.map((s) => s[m.key]),
          m.decimals,
        ),
      ),
      String(failed),
      flood === undefined ? '—' : `${Math.round(flood.rps)}${flood.odd > 0 ? ` (${flood.odd} odd)` : ''}`,
    ]);
  }
  const head = [
    'seconds',
    'RSS MiB',
    'V8 heap used MiB',
    'open fds',
    'anonymous RSS MiB',
    'failed probes',
    'flood req/s',
  ];
  return table(head, rows);
}

function verdictLine(result, c) {
  if (c.verdict === 'flat') return '**Verdict: flat**: every limit below met, and no kubelet probe failed.';
  if (c.verdict === 'not flat') return '**Verdict: not flat**: a limit below is missed.';
  const why = heapUnavailable(result)
    ? `V8 heap used is unavailable (GET /metrics → ${result.metricsOutcome ?? 'nothing'})`
    : 'a measure has too few samples after warm-up';
  return `**Verdict: not judged**: nothing below is missed, but ${why}.`;
}

export function renderSoak(result) {
  const i = result.info;
  const o = result.options;
  const c = soakChecks(result);
  const perPort = result.probes
    .map(
      (p) =>
        `${p.role} ${p.failures.length} of ${p.count} (p99 ${number(percentile(p.latencies, 0.99), 1)} ms)`,
    )
    .join(', ');
  const rps = result.floods.length === 0 ? '—' : formatSummary(summary(result.floods.map((f) => f.rps)), 0);
  return [
    `Soak ${i.date}: ${i.cpu}, ${i.memory}, Linux ${i.kernel}, Node ${i.node}; commit ${i.commit}; CLI \`${i.cli}\`; ` +
      `${result.companion} ${i.pinned ? 'pinned to core 0, clients (probers, flood, app) to core 1' : 'not pinned'}; ` +
      `its heap from ${i.podHeap ?? 'V8 flags'}; load average ${i.loadBefore} before, ${i.loadAfter} after. ` +
      `${o.seconds} s: kubelet-style probes (a new ` +
      `connection each, \`Connection: close\`, \`kube-probe/1.30\`, ${result.probeTimeoutMs / 1000} s timeout) ` +
      `every ${o.probePeriodSeconds} s on each of the four ports; a flood of ${o.floodSeconds} s (autocannon, ` +
      `c${result.floodConnections}, \`/osm-healthcheck\` on an open port) every ${o.floodEverySeconds} s; a ` +
      `sample every ${o.sampleSeconds} s. Slopes: least squares over the lowest sample of each ` +
      `${o.floodEverySeconds} s interval after the first ${o.warmupSeconds} s.`,
    '',
    verdictLine(result, c),
    '',
    checksTable(result, c),
    '',
    `Kubelet probes, failed of sent: ${perPort}. Floods: ${rps} req/s (median, min–max), ` +
      `${result.floods.reduce((sum, f) => sum + f.odd, 0)} odd answers.`,
    '',
    `**Over time** (one row per ${o.floodEverySeconds} s, each starting with its flood; lowest–highest sample)`,
    '',
    series(result),
  ].join('\n');
}
