// "Pods" for the fleet and contention benchmarks: network namespaces with only a loopback, so every pod's app and
// companion listen on the same ports (examples/app.mjs's 14001-14003, the companion's 15901-15904) as in a
// cluster. Traffic stays inside each namespace. Every namespace is deleted when the bench ends, also on Ctrl-C or
// a crash (`ip netns del` works while processes still run in it; the kernel frees it once they are gone).

import { spawnSync } from 'node:child_process';

const made = new Set();

function ip(...args) {
  const result = spawnSync('ip', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr || result.error?.message}`);
}

function removeAll() {
  for (const name of made) spawnSync('ip', ['netns', 'del', name]);
  made.clear();
}
process.once('exit', removeAll);
// Ctrl-C or a kill: run the exit handlers (children killed, namespaces and cgroups removed) before going.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

/** Why pods cannot be made here (not root, no `ip`), or undefined when they can. */
export function podsUnavailable() {
  if (process.getuid?.() !== 0) return 'it needs root for network namespaces and cgroups';
  const result = spawnSync('ip', ['netns', 'list']);
  if (result.status !== 0)
    return `\`ip netns\` does not work here: ${result.error?.message ?? result.stderr}`;
  return undefined;
}

/** A pod named `ohc-<pid>-<tag>`: `run(argv)` is argv run inside it; `remove()` deletes it. */
export function makePod(tag) {
  const name = `ohc-${process.pid}-${tag}`;
  spawnSync('ip', ['netns', 'del', name]);
  ip('netns', 'add', name);
  made.add(name);
  ip('-n', name, 'link', 'set', 'lo', 'up');
  return {
    name,
    run: (argv) => ['ip', 'netns', 'exec', name, ...argv],
    remove: () => {
      spawnSync('ip', ['netns', 'del', name]);
      made.delete(name);
    },
  };
}
