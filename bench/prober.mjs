// A kubelet httpGet probe worker in its own process: GET `url` every `periodMs` with a `timeoutMs` deadline for
// `seconds`, never two at once (a late probe starts the next at once, as Go's ticker would), then prints
// { latencies, failures, failedAt } as JSON (failedAt: when each failed probe started, ms since the epoch).
//   node bench/prober.mjs <port> <path> <periodMs> <timeoutMs> <seconds> [headers as JSON]

import { httpProbe } from './clients.mjs';

const [port, path, periodMs, timeoutMs, seconds, headers = '{}'] = process.argv.slice(2);
const until = performance.now() + Number(seconds) * 1000;
const latencies = [];
const failures = [];
const failedAt = [];

let next = performance.now();
while (performance.now() < until) {
  const startedAt = Date.now();
  const result = await httpProbe(Number(port), path, JSON.parse(headers), Number(timeoutMs));
  latencies.push(result.ms);
  if (!result.ok) {
    failures.push(String(result.status));
    failedAt.push(startedAt);
  }
  next += Number(periodMs);
  const wait = next - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  else next = performance.now();
}
process.stdout.write(`${JSON.stringify({ latencies, failures, failedAt })}\n`);
