// Cgroups the fleet and contention benchmarks make, as kubelet makes them for pods: a parent (the node's pods) with
// one child per container, each with a memory cgroup (its working set, as kubelet counts it) and a CPU cgroup (its
// weight from a CPU request). cgroup v1 (a hierarchy per controller) or v2 (one unified tree), as root.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownCgroup } from './cgroup.mjs';
import { cpuKnob, parseKeyValues, workingSet } from './kube-resources.mjs';

const CONTROLLERS = ['memory', 'cpu'];

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
};

/** Deletes `dir` and the cgroups below it, deepest first; a cgroup still holding a process stays. */
function removeTree(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) removeTree(join(dir, entry.name));
  }
  try {
    rmdirSync(dir);
  } catch {}
}

/** Trees a killed run left behind (`<prefix>-<pid>` with that pid gone), removed before making a new one. */
function sweep(parent, prefix) {
  for (const name of existsSync(parent) ? readdirSync(parent) : []) {
    const pid = Number(name.slice(prefix.length + 1));
    if (name.startsWith(`${prefix}-`) && Number.isInteger(pid) && !alive(pid)) removeTree(join(parent, name));
  }
}

/** A memory cgroup's usage, working set and mapped file pages (bytes), read with `read(file)`. */
function memoryOf(version, read) {
  const usage = Number(read(version === 1 ? 'memory.usage_in_bytes' : 'memory.current'));
  const statText = read('memory.stat');
  const mapped = parseKeyValues(statText).get(version === 1 ? 'total_mapped_file' : 'file_mapped') ?? 0;
  return { usage, workingSet: workingSet(version, usage, statText), mappedFile: mapped };
}

/**
 * A parent cgroup named `<prefix>-<pid>` in this process's own memory and CPU cgroups, or `{ tree: undefined,
 * reason }` when it cannot be made (not root, no such controller, v2 without delegation).
 */
export function cgroupTree(prefix) {
  const own = Object.fromEntries(CONTROLLERS.map((c) => [c, ownCgroup(c)]));
  if (own.memory === undefined || own.cpu === undefined)
    return { tree: undefined, reason: 'no memory or cpu cgroup in /proc/self/cgroup' };
  const version = own.memory.version;
  if (own.cpu.version !== version)
    return { tree: undefined, reason: 'memory and cpu controllers on different cgroup versions' };
  const name = `${prefix}-${process.pid}`;
  // v1: one parent per hierarchy; v2: one parent, with both controllers enabled for its children.
  const bases = version === 1 ? CONTROLLERS.map((c) => own[c].dir) : [own.memory.dir];
  const parents = bases.map((base) => join(base, name));
  try {
    for (const base of bases) sweep(base, prefix);
    if (version === 2) writeFileSync(join(own.memory.dir, 'cgroup.subtree_control'), '+memory +cpu');
    for (const dir of parents) mkdirSync(dir);
    if (version === 2) writeFileSync(join(parents[0], 'cgroup.subtree_control'), '+memory +cpu');
  } catch (err) {
    for (const dir of parents) removeTree(dir);
    return { tree: undefined, reason: `cannot make cgroups under ${bases.join(', ')}: ${err.message}` };
  }
  const remove = () => {
    for (const dir of parents) removeTree(dir);
  };
  process.once('exit', remove);
  const [memoryParent, cpuParent = memoryParent] = parents;
  const setCpu = (dir, milliCpu) => {
    const { file, value } = cpuKnob(version, milliCpu);
    writeFileSync(join(dir, file), String(value));
  };
  return {
    reason: undefined,
    tree: {
      version,
      /** The parent's CPU weight from a request (as kubelet's kubepods gets the node's allocatable CPU). */
      setCpu: (milliCpu) => setCpu(cpuParent, milliCpu),
      /**
       * A child cgroup for one container: optional memory limit (bytes) and CPU request (millicores); `oomGroup`:
       * v2's memory.oom.group=1, as kubelet sets it for a container, so an OOM kill takes all of its processes
       * (v1 has none: the kernel kills the largest process only).
       * @param {string} childName
       * @param {{ memoryMax?: number, milliCpu?: number, oomGroup?: boolean }} [options]
       */
      child: (childName, { memoryMax, milliCpu, oomGroup = false } = {}) => {
        const memoryDir = join(memoryParent, childName);
        const cpuDir = join(cpuParent, childName);
        for (const dir of new Set([memoryDir, cpuDir])) mkdirSync(dir);
        if (memoryMax !== undefined)
          writeFileSync(
            join(memoryDir, version === 1 ? 'memory.limit_in_bytes' : 'memory.max'),
            String(memoryMax),
          );
        if (milliCpu !== undefined) setCpu(cpuDir, milliCpu);
        if (oomGroup && version === 2) writeFileSync(join(memoryDir, 'memory.oom.group'), '1');
        const procs = [...new Set([memoryDir, cpuDir])].map((dir) => join(dir, 'cgroup.procs'));
        const read = (file) => readFileSync(join(memoryDir, file), 'utf8');
        return {
          /** argv that joins this cgroup, then execs argv (the pid stays the command's). */
          wrap: (argv) => [
            'sh',
            '-c',
            `${procs.map((p) => `echo $$ > '${p}'`).join(' && ')} && exec "$@"`,
            'sh',
            ...argv,
          ],
          setCpu: (value) => setCpu(cpuDir, value),
          /** kubelet's working set of this cgroup, bytes. */
          workingSet: () => memoryOf(version, read).workingSet,
          /** Usage (page cache included), working set and the mapped part of the page cache, bytes. */
          memory: () => memoryOf(version, read),
          /** The kernel's peak usage (page cache included), bytes; undefined where the kernel has none. */
          peak: () => {
            try {
              return Number(read(version === 1 ? 'memory.max_usage_in_bytes' : 'memory.peak'));
            } catch {
              return undefined;
            }
          },
          /** How often the OOM killer ran in this cgroup. */
          oomKills: () => {
            const text = read(version === 1 ? 'memory.oom_control' : 'memory.events');
            return Number(/oom_kill (\d+)/.exec(text)?.[1] ?? 0);
          },
        };
      },
      remove,
    },
  };
}
