// A "node" and a "pod" network namespace joined by a veth pair, addresses only inside them. In the pod: a fake
// proxy answering PROXY, a stand-in companion answering COMPANION on 15901-15904, and the mesh's interception as
// osm-edge's init container writes it. close() kills the listeners and deletes both namespaces.

import { execa, type ResultPromise } from 'execa';

export type Backend = 'nft' | 'legacy';

export const IS_ROOT = process.getuid?.() === 0;
export const POD = { v4: '10.251.0.2', v6: 'fd00:251::2' } as const;
const NODE = { v4: '10.251.0.1', v6: 'fd00:251::1' } as const;
/** osm-edge's inbound listener port (PROXY_INBOUND_PORT), where the mesh redirects every inbound connection. */
export const PROXY_PORT = 15003;
export const COMPANION_PORTS = [15901, 15902, 15903, 15904] as const;

/** Loud, never silent: a suite that cannot run here says so in the output. */
export function warnUnlessRoot(suite: string): void {
  if (IS_ROOT) return;
  console.warn(
    `\n!!! SKIPPED ${suite}: it needs root for network namespaces and iptables (CI runs as root).\n` +
      '!!! Run `sudo npx vitest run test/init` to prove the bypass on this machine.\n',
  );
}

// The inbound half of osm-edge's init container (openservicemesh/osm-docs "Iptables Redirection"), minus its
// RETURNs for 15901-15903: that exclusion is exactly what `init` has to provide here.
const MESH_RULES = [
  '-t nat -N PROXY_INBOUND',
  '-t nat -N PROXY_IN_REDIRECT',
  `-t nat -A PROXY_IN_REDIRECT -p tcp -j REDIRECT --to-port ${PROXY_PORT}`,
  '-t nat -A PREROUTING -p tcp -j PROXY_INBOUND',
  '-t nat -A PROXY_INBOUND -p tcp --dport 15010 -j RETURN',
  '-t nat -A PROXY_INBOUND -p tcp -j PROXY_IN_REDIRECT',
];

const LISTENERS = `
const net = require('node:net');
const answers = JSON.parse(process.argv[1]);
let pending = answers.length;
for (const [port, text] of answers) {
  net.createServer((s) => { s.on('error', () => {}); s.end(text + '\\n'); })
    .listen({ port, host: '::' }, () => { if (--pending === 0) process.stdout.write('ready\\n'); });
}`;

const DIAL = `
const net = require('node:net');
const dial = ([host, port]) => new Promise((resolve) => {
  let data = '';
  const s = net.connect({ host, port, timeout: 3000 });
  s.setEncoding('utf8');
  s.on('data', (d) => { data += d; });
  s.on('end', () => resolve(data.trim()));
  s.on('timeout', () => { s.destroy(); resolve('timeout'); });
  s.on('error', (e) => resolve('error ' + e.code));
});
Promise.all(JSON.parse(process.argv[1]).map(dial)).then((r) => process.stdout.write(JSON.stringify(r)));`;

/** iptables-save output without its date comments and with counters zeroed: comparable across runs. */
export function normaliseSave(text: string): string {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.replace(/\[\d+:\d+\]/g, '[0:0]'))
    .join('\n');
}

async function ip(...args: string[]): Promise<void> {
  await execa('ip', args);
}

/**
 * Whether `backend` can write nat rules for both families on this kernel (some kernels ship without the legacy
 * xtables modules). Tried in a scratch namespace; a suite skips that backend, loudly, when it cannot.
 */
export async function backendWorks(backend: Backend): Promise<boolean> {
  const scratch = `ohc-${process.pid}-probe-${backend}`;
  await execa('ip', ['netns', 'del', scratch], { reject: false });
  await ip('netns', 'add', scratch);
  try {
    const rule = '-t nat -A PREROUTING -p tcp --dport 9 -j ACCEPT';
    const result = await execa(
      'ip',
      ['netns', 'exec', scratch, 'sh', '-ec', `iptables-${backend} ${rule}; ip6tables-${backend} ${rule}`],
      { reject: false },
    );
    if (result.exitCode !== 0) {
      console.warn(
        `\n!!! SKIPPED the iptables-${backend} cases: it cannot write nat rules here: ${result.stderr}\n`,
      );
    }
    return result.exitCode === 0;
  } finally {
    await execa('ip', ['netns', 'del', scratch], { reject: false });
  }
}

export class Lab {
  private listeners: ResultPromise | undefined;

  private constructor(
    readonly node: string,
    readonly pod: string,
  ) {}

  /** Namespaces named after this process and `tag`, so parallel runs never share one. */
  static async create(tag: string): Promise<Lab> {
    const lab = new Lab(`ohc-${process.pid}-${tag}-node`, `ohc-${process.pid}-${tag}-pod`);
    // A namespace by these names can only be left over from a killed run that had our pid.
    await lab.close();
    try {
      await ip('netns', 'add', lab.node);
      await ip('netns', 'add', lab.pod);
      await ip(
        'link',
        'add',
        'eth0',
        'netns',
        lab.node,
        'type',
        'veth',
        'peer',
        'name',
        'eth0',
        'netns',
        lab.pod,
      );
      for (const [ns, address] of [
        [lab.node, NODE],
        [lab.pod, POD],
      ] as const) {
        await ip('-n', ns, 'addr', 'add', `${address.v4}/30`, 'dev', 'eth0');
        await ip('-n', ns, '-6', 'addr', 'add', `${address.v6}/64`, 'dev', 'eth0', 'nodad');
        await ip('-n', ns, 'link', 'set', 'eth0', 'up');
        await ip('-n', ns, 'link', 'set', 'lo', 'up');
      }
    } catch (err) {
      await lab.close();
      throw err;
    }
    return lab;
  }

  run(ns: string, argv: readonly string[]) {
    return execa('ip', ['netns', 'exec', ns, ...argv], { reject: false, stdin: 'ignore' });
  }

  /** `osm-healthcheck init ...` inside the pod, as its init container runs it. */
  init(cli: string, args: readonly string[], prefix: readonly string[] = []) {
    return this.run(this.pod, [...prefix, process.execPath, cli, 'init', ...args]);
  }

  /** The fake proxy and the stand-in companion, listening on all pod addresses (IPv4 and IPv6). */
  async startListeners(): Promise<void> {
    const answers = [[PROXY_PORT, 'PROXY'], ...COMPANION_PORTS.map((port) => [port, 'COMPANION'])];
    const child = execa(
      'ip',
      ['netns', 'exec', this.pod, process.execPath, '-e', LISTENERS, JSON.stringify(answers)],
      {
        reject: false,
        stdin: 'ignore',
      },
    );
    this.listeners = child;
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      child.then((r) => reject(new Error(`pod listeners exited: ${r.stderr}`)), reject);
    });
  }

  /** Connects from the node namespace, as kubelet does, and returns what answered each target. */
  async dial(targets: ReadonlyArray<readonly [string, number]>): Promise<string[]> {
    const result = await this.run(this.node, [process.execPath, '-e', DIAL, JSON.stringify(targets)]);
    if (result.exitCode !== 0) throw new Error(`dialing from the node namespace failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as string[];
  }

  /** osm-edge's inbound interception, IPv4 and IPv6, written with `backend`'s iptables. */
  async installMesh(backend: Backend, ns = this.pod): Promise<void> {
    const commands = ['iptables', 'ip6tables'].flatMap((tool) =>
      MESH_RULES.map((rule) => `${tool}-${backend} ${rule}`),
    );
    const result = await this.run(ns, ['sh', '-ec', commands.join('\n')]);
    if (result.exitCode !== 0) throw new Error(`installing the mesh rules failed: ${result.stderr}`);
  }

  /** Every ruleset in the pod (both families, both backends), normalised. */
  async ruleset(ns = this.pod): Promise<string> {
    const parts: string[] = [];
    for (const save of [
      'iptables-nft-save',
      'ip6tables-nft-save',
      'iptables-legacy-save',
      'ip6tables-legacy-save',
    ]) {
      const result = await this.run(ns, [save]);
      if (result.exitCode !== 0) throw new Error(`${save} failed: ${result.stderr}`);
      parts.push(`== ${save}`, normaliseSave(result.stdout));
    }
    return parts.join('\n');
  }

  /** The ruleset a pod has with the mesh's rules alone: installed in a scratch namespace, read, deleted. */
  async meshOnlyRuleset(backend: Backend): Promise<string> {
    const scratch = `${this.pod}-ref`;
    await ip('netns', 'add', scratch);
    try {
      await this.installMesh(backend, scratch);
      return await this.ruleset(scratch);
    } finally {
      await execa('ip', ['netns', 'del', scratch], { reject: false });
    }
  }

  async close(): Promise<void> {
    if (this.listeners !== undefined) {
      this.listeners.kill('SIGKILL');
      await this.listeners;
    }
    for (const ns of [this.node, this.pod]) await execa('ip', ['netns', 'del', ns], { reject: false });
  }
}
