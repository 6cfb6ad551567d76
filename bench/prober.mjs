// A kubelet liveness worker in its own process: GET `url` every `periodMs` with a `timeoutMs` deadline for
// `seconds`, never two at once (a late probe starts the next at once, as Go's ticker would), then prints
// { latencies, failures } as JSON.   node bench/prober.mjs <port> <path> <periodMs> <timeoutMs> <seconds>

import { httpProbe } from './clients.mjs';

const [port, path, periodMs, timeoutMs, seconds] = process.argv.slice(2);
const until = performance.now() + Number(seconds) * 1000;
const latencies = [];
const failures = [];

let next = performance.now();
while (performance.now() < until) {
  const result = await httpProbe(Number(port), path, {}, Number(timeoutMs));
  latencies.push(result.ms);
  if (!result.ok) failures.push(String(result.status));
  next += Number(periodMs);
  const wait = next - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  else next = performance.now();
}
process.stdout.write(`${JSON.stringify({ latencies, failures })}\n`);
