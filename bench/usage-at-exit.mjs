// Preloaded (`node --import`) into a process the inject benchmark runs: at exit, its own CPU time and peak RSS
// (getrusage) into the file BENCH_USAGE_FILE names. The process runs as users run it; only this line is added.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const usage = process.resourceUsage();
  const cpuSeconds = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  // maxRSS is in KiB on Linux.
  writeFileSync(
    process.env.BENCH_USAGE_FILE,
    JSON.stringify({ cpuSeconds, peakRssMiB: usage.maxRSS / 1024 }),
  );
});
