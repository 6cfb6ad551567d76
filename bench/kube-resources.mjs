// What kubelet and the container runtime make of a container's resources, and what the kernel reports back: the
// pure arithmetic behind the fleet and contention benchmarks (bench/fleet.mjs, bench/contention.mjs).

/** kubelet pkg/kubelet/cm/helpers_linux.go: MinShares, SharesPerCPU, MilliCPUToCPU, MaxShares. */
const MIN_SHARES = 2;
const SHARES_PER_CPU = 1024;
const MILLI_CPU_TO_CPU = 1000;
const MAX_SHARES = 262144;

/** `10m` -> 10, `1` -> 1000, `0.5` -> 500 (a Kubernetes CPU quantity); throws naming the text otherwise. */
export function parseMilliCpu(text) {
  const match = /^(\d+(?:\.\d+)?)(m?)$/.exec(String(text).trim());
  if (match === null) throw new Error(`not a CPU quantity (like 10m or 0.5): "${text}"`);
  const value = Number(match[1]) * (match[2] === 'm' ? 1 : MILLI_CPU_TO_CPU);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`not a whole, positive number of millicores: "${text}"`);
  return value;
}

/** kubelet's MilliCPUToShares: the cgroup v1 cpu.shares a CPU request becomes (integer division, at least 2). */
export function milliCpuToShares(milliCpu) {
  if (milliCpu === 0) return MIN_SHARES;
  const shares = Math.floor((milliCpu * SHARES_PER_CPU) / MILLI_CPU_TO_CPU);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

/**
 * runc's ConvertCPUSharesToCgroupV2Value (libcontainer/cgroups/utils.go): cgroup v2's cpu.weight (1..10000) from
 * v1 shares, `1 + ((shares - 2) * 9999) / 262142` in integer arithmetic. Every request below 29m lands on weight 1.
 */
export function sharesToWeight(shares) {
  if (shares === 0) return 0;
  return 1 + Math.floor(((shares - 2) * 9999) / 262142);
}

/** A request's CPU knob on cgroup `version`: `{ file, value }` to write. */
export function cpuKnob(version, milliCpu) {
  const shares = milliCpuToShares(milliCpu);
  return version === 1
    ? { file: 'cpu.shares', value: shares }
    : { file: 'cpu.weight', value: sharesToWeight(shares) };
}

/** `key value` lines (memory.stat, smaps_rollup's `Key:   123 kB`) as a Map of numbers. */
export function parseKeyValues(text) {
  const values = new Map();
  for (const line of text.split('\n')) {
    const match = /^([\w()]+):?\s+(\d+)(?: kB)?$/.exec(line.trim());
    if (match !== null) values.set(match[1], Number(match[2]));
  }
  return values;
}

/**
 * The working set as kubelet counts it for eviction and `kubectl top` (cAdvisor's getMemoryStats): usage minus
 * inactive file pages, never below 0. v2: memory.current and memory.stat's `inactive_file`; v1:
 * memory.usage_in_bytes and `total_inactive_file`. Bytes.
 */
export function workingSet(version, usageBytes, statText) {
  const stat = parseKeyValues(statText);
  const inactive = stat.get(version === 1 ? 'total_inactive_file' : 'inactive_file') ?? 0;
  return usageBytes < inactive ? 0 : usageBytes - inactive;
}

/** /proc/PID/smaps_rollup as MiB: `{ rss, pss, private }`, private being Private_Clean + Private_Dirty. */
export function smapsRollup(text) {
  const kb = parseKeyValues(text);
  const need = (key) => {
    const value = kb.get(key);
    if (value === undefined) throw new Error(`smaps_rollup has no ${key}`);
    return value / 1024;
  };
  return { rss: need('Rss'), pss: need('Pss'), private: need('Private_Clean') + need('Private_Dirty') };
}

/** Bytes as the Kubernetes quantity of whole mebibytes at or above them: 33554433 -> `33Mi`. */
export function mebibytesAtLeast(bytes) {
  return `${Math.ceil(bytes / 2 ** 20)}Mi`;
}

/** `64Mi` / `1Gi` / `67108864` -> bytes (the binary suffixes and plain bytes, what inject writes). */
export function parseMemory(text) {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(String(text).trim());
  if (match === null) throw new Error(`not a memory quantity (like 64Mi): "${text}"`);
  const scale = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[match[2]] ?? 1;
  return Number(match[1]) * scale;
}

/**
 * The smallest CPU request whose probe p99 stays below `limitMs`: `rows` are `{ milliCpu, p99, failed }`; a row
 * with a failed probe never qualifies. undefined when none does.
 */
export function smallestPassing(rows, limitMs) {
  return [...rows]
    .sort((a, b) => a.milliCpu - b.milliCpu)
    .find((r) => r.failed === 0 && Number.isFinite(r.p99) && r.p99 < limitMs);
}

/** Room above the fleet's largest working set for the memory request (docs/resources.md). */
export const REQUEST_HEADROOM = 1.25;
/** Room above the worst burst's peak for the memory limit. */
export const LIMIT_HEADROOM = 1.2;

/** The memory request a measured working set (MiB) calls for: 1.25 x, rounded up to a multiple of 8 Mi. */
export function memoryRequestFor(workingSetMiB) {
  return `${Math.ceil((workingSetMiB * REQUEST_HEADROOM) / 8) * 8}Mi`;
}

/** The memory limit a measured burst peak (MiB) calls for: 1.2 x, rounded up to a multiple of 64 Mi. */
export function memoryLimitFor(peakMiB) {
  return `${Math.ceil((peakMiB * LIMIT_HEADROOM) / 64) * 64}Mi`;
}
