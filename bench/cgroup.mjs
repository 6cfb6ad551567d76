// A pod's memory limit for the bench's `@128Mi` servers: a memory cgroup of 128 MiB, as the kubelet gives a
// container with `limits.memory: 128Mi`, so Node sizes V8's heap from it exactly as in a pod and no V8 flag is
// needed. Where no cgroup can be made (not root, or no writable cgroup filesystem), the bench falls back to the V8
// flags below, which are stricter than a pod (see BENCHMARKS.md, "A pod's heap").

import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const POD_LIMIT_BYTES = 128 * 1024 * 1024;

/**
 * The stand-in used when no cgroup can be made: V8 flags for a 64 MiB old generation and 1 MiB semi-spaces; a real 128 MiB cgroup gets 1 MiB semi-spaces and V8's minimum old
 * generation of 256 MiB (measured on Node 20 and 24: heap_size_limit 259 MiB under a 128 MiB cgroup, 67 MiB with
 * these flags). On Node 20 any heap flag also changes V8's flag hash, so code caches are rejected.
 */
export const HEAP_FLAGS_128MI = ['--max-semi-space-size=1', '--max-old-space-size=64'];

/** The mount point of cgroup v1's `controller` hierarchy, from /proc/self/mountinfo; undefined when none. */
function v1Mount(controller) {
  let lines;
  try {
    lines = readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [mount, rest] = line.split(' - ');
    const [type, , options = ''] = (rest ?? '').split(' ');
    if (type === 'cgroup' && options.split(',').includes(controller)) return mount?.split(' ')[4];
  }
  return undefined;
}

/**
 * Where this process's cgroup for `controller` (memory, cpu) is: `{ version, dir }`, v1 when a v1 hierarchy has
 * that controller, else v2 (unified); undefined when neither is found.
 */
export function ownCgroup(controller) {
  let lines;
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [, controllers, path] = line.split(':');
    if (controllers?.split(',').includes(controller)) {
      const mount = v1Mount(controller) ?? join('/sys/fs/cgroup', controller);
      return { version: 1, dir: join(mount, path ?? '/') };
    }
  }
  const unified = lines.find((line) => line.startsWith('0::'));
  if (unified !== undefined) return { version: 2, dir: join('/sys/fs/cgroup', unified.slice(3)) };
  return undefined;
}

/**
 * Makes a memory cgroup of `bytes` (128 MiB unless given) for the bench's pod-like servers, or returns undefined
 * (with the reason) when it cannot. `wrap(argv)` turns a command into one that joins the cgroup first; `remove()`
 * deletes it once empty.
 */
export function podCgroup(bytes = POD_LIMIT_BYTES) {
  const own = ownCgroup('memory');
  if (own === undefined) return { cgroup: undefined, reason: 'no memory cgroup in /proc/self/cgroup' };
  const dir = join(own.dir, `osm-hc-bench-${process.pid}-${bytes}`);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, own.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'), String(bytes));
  } catch (err) {
    try {
      rmdirSync(dir);
    } catch {}
    return { cgroup: undefined, reason: `cannot make a memory cgroup: ${err.message}` };
  }
  const procs = join(dir, 'cgroup.procs');
  return {
    cgroup: {
      dir,
      wrap: (argv) => ['sh', '-c', `echo $$ > '${procs}' && exec "$@"`, 'sh', ...argv],
      remove: () => {
        try {
          rmdirSync(dir);
        } catch {}
      },
    },
    reason: undefined,
  };
}
