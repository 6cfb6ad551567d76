// A "node" and a "pod" network namespace joined by a veth pair, addresses only inside them. In the pod: a fake
// proxy answering PROXY, a stand-in companion answering COMPANION on 15901-15904, and the mesh's interception as
// osm-edge's init container writes it; for the outbound side, an app answering APP and a fake outbound
// listener answering OUTBOUND. close() kills the listeners and deletes both namespaces.

import { dirname } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { IP, IPTABLES, NFT, skipWithout } from '../helpers/system-tools.js';

export type Backend = 'nft' | 'legacy';

const IS_ROOT = process.getuid?.() === 0;
/**
 * Whether the namespace suites run: as root, with ip (iproute2) and iptables, which they drive. Without root they
 * skip (warnUnlessRoot says so); as root without the tools they skip loudly too, but fail under CI=true.
 */
export const LAB_READY =
  IS_ROOT && !skipWithout('the network-namespace suites (test/init, test/e2e)', [IP, IPTABLES]);
export const POD = { v4: '10.251.0.2', v6: 'fd00:251::2' } as const;
export const NODE = { v4: '10.251.0.1', v6: 'fd00:251::1' } as const;
/** osm-edge's inbound listener port (PROXY_INBOUND_PORT), where the mesh redirects every inbound connection. */
export const PROXY_PORT = 15003;
export const COMPANION_PORTS = [15901, 15902, 15903, 15904] as const;
/** osm-edge's outbound listener port (SidecarOutboundListenerPort): where the pod's own connections go. */
export const OUTBOUND_PORT = 15001;
/** The app the companion probes, listening on every pod address. */
export const APP_PORT = 8080;
/** osm-edge's proxy user (SidecarUID): the one user the mesh's outbound redirect exempts. */
export const PROXY_UID = 1500;

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
export const MESH_RULES = [
  '-t nat -N PROXY_INBOUND',
  '-t nat -N PROXY_IN_REDIRECT',
  `-t nat -A PROXY_IN_REDIRECT -p tcp -j REDIRECT --to-port ${PROXY_PORT}`,
  '-t nat -A PREROUTING -p tcp -j PROXY_INBOUND',
  '-t nat -A PROXY_INBOUND -p tcp --dport 15010 -j RETURN',
  '-t nat -A PROXY_INBOUND -p tcp -j PROXY_IN_REDIRECT',
];

// The outbound half, as OSM's pkg/injector/iptables.go wrote it before it added "-o lo" exemptions:
// everything the pod dials goes to the proxy except the proxy's own connections and 127.0.0.1, so a
// connection to the pod's own IP does too. IPv6 gets ::1 where IPv4 has 127.0.0.1, as Istio's rules do.
export function meshOutputRules(tool: 'iptables' | 'ip6tables'): string[] {
  const loopback = tool === 'iptables' ? '127.0.0.1/32' : '::1/128';
  return [
    '-t nat -N PROXY_OUTPUT',
    '-t nat -N PROXY_REDIRECT',
    `-t nat -A PROXY_REDIRECT -p tcp -j REDIRECT --to-port ${OUTBOUND_PORT}`,
    '-t nat -A PROXY_REDIRECT -p tcp --dport 15000 -j ACCEPT',
    '-t nat -A OUTPUT -p tcp -j PROXY_OUTPUT',
    `-t nat -A PROXY_OUTPUT -m owner --uid-owner ${PROXY_UID} -j RETURN`,
    `-t nat -A PROXY_OUTPUT -d ${loopback} -j RETURN`,
    '-t nat -A PROXY_OUTPUT -j PROXY_REDIRECT',
  ];
}

export const LISTENERS = `
const net = require('node:net');
const answers = JSON.parse(process.argv[1]);
let pending = answers.length;
for (const [port, text] of answers) {
  net.createServer((s) => { s.on('error', () => {}); s.end(text + '\\n'); })
    .listen({ port, host: '::' }, () => { if (--pending === 0) process.stdout.write('ready\\n'); });
}`;

export const DIAL = `
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

/**
 * Whether the node agent's native nftables suites run: the namespace suites' needs and nft, and nat chains of both
 * families written with it in a scratch namespace. Without nft they skip loudly, but run and fail under CI=true.
 */
export async function nftablesReady(suite: string): Promise<boolean> {
  if (!LAB_READY || skipWithout(suite, [NFT])) return false;
  if (!NFT.present) return true;
  const scratch = `ohc-${process.pid}-probe-nftables`;
  await execa('ip', ['netns', 'del', scratch], { reject: false });
  await ip('netns', 'add', scratch);
  try {
    const input = ['ip', 'ip6']
      .map((family) => `table ${family} t { chain c { type nat hook postrouting priority srcnat; }; }`)
      .join('\n');
    const result = await execa('ip', ['netns', 'exec', scratch, 'nft', '-f', '-'], { input, reject: false });
    if (result.exitCode !== 0) {
      console.warn(`\n!!! SKIPPED ${suite}: nft cannot write nat chains here: ${result.stderr}\n`);
    }
    return result.exitCode === 0;
  } finally {
    await execa('ip', ['netns', 'del', scratch], { reject: false });
  }
}

export class Lab {
  private readonly listeners: ResultPromise[] = [];

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
      await lab.knowNeighbours();
    } catch (err) {
      await lab.close();
      throw err;
    }
    return lab;
  }

  /**
   * Each end's MAC address as a permanent neighbour of the other, for both families. For about a second after a
   * veth comes up its link-local IPv6 address is tentative (DAD), and the first Neighbor Solicitation for the pod
   * address gets no answer: the first IPv6 connection then waits for the SYN's retransmit, 1 s, which is a whole
   * probe timeout. Measured here: a connect right after link-up took ~1030 ms in most tries, 10 ms with these.
   */
  private async knowNeighbours(): Promise<void> {
    const mac = async (ns: string) => {
      const { stdout } = await execa('ip', ['-n', ns, '-j', 'link', 'show', 'eth0']);
      return (JSON.parse(stdout) as Array<{ address: string }>)[0]?.address ?? '';
    };
    const [nodeMac, podMac] = await Promise.all([mac(this.node), mac(this.pod)]);
    for (const [ns, peer, lladdr] of [
      [this.node, POD, podMac],
      [this.pod, NODE, nodeMac],
    ] as const) {
      for (const address of [peer.v4, peer.v6]) {
        await ip('-n', ns, 'neigh', 'replace', address, 'lladdr', lladdr, 'dev', 'eth0', 'nud', 'permanent');
      }
    }
  }

  run(ns: string, argv: readonly string[], cwd?: string) {
    return execa('ip', ['netns', 'exec', ns, ...argv], { reject: false, stdin: 'ignore', cwd });
  }

  /**
   * `osm-healthcheck init ...` inside the pod, as its init container runs it: from the package root of `cli`
   * (<root>/dist/cli.mjs), as the image's WORKDIR /app, which a non-root uid can enter even when the checkout can't.
   */
  init(cli: string, args: readonly string[], prefix: readonly string[] = []) {
    return this.run(this.pod, [...prefix, process.execPath, cli, 'init', ...args], dirname(dirname(cli)));
  }

  /** The fake proxy and the stand-in companion, listening on all pod addresses (IPv4 and IPv6). */
  async startListeners(): Promise<void> {
    await this.listen([
      [PROXY_PORT, 'PROXY'],
      ...COMPANION_PORTS.map((port) => [port, 'COMPANION'] as const),
    ]);
  }

  /** The app on APP_PORT and the mesh's fake outbound listener, on all pod addresses (IPv4 and IPv6). */
  async startOutboundListeners(): Promise<void> {
    await this.listen([
      [APP_PORT, 'APP'],
      [OUTBOUND_PORT, 'OUTBOUND'],
    ]);
  }

  private async listen(answers: ReadonlyArray<readonly [number, string]>): Promise<void> {
    const child = execa(
      'ip',
      ['netns', 'exec', this.pod, process.execPath, '-e', LISTENERS, JSON.stringify(answers)],
      {
        reject: false,
        stdin: 'ignore',
      },
    );
    this.listeners.push(child);
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

  /** Connects from inside the pod as `uid`, as the companion probes the app, and returns what answered. */
  async dialAs(uid: number, targets: ReadonlyArray<readonly [string, number]>): Promise<string[]> {
    const drop = ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];
    const result = await this.run(this.pod, [...drop, process.execPath, '-e', DIAL, JSON.stringify(targets)]);
    if (result.exitCode !== 0) throw new Error(`dialing as uid ${uid} in the pod failed: ${result.stderr}`);
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

  /** osm-edge's outbound interception (nat OUTPUT), IPv4 and IPv6, written with `backend`'s iptables. */
  async installMeshOutbound(backend: Backend, ns = this.pod): Promise<void> {
    const commands = (['iptables', 'ip6tables'] as const).flatMap((tool) =>
      meshOutputRules(tool).map((rule) => `${tool}-${backend} ${rule}`),
    );
    const result = await this.run(ns, ['sh', '-ec', commands.join('\n')]);
    if (result.exitCode !== 0) throw new Error(`installing the outbound mesh rules failed: ${result.stderr}`);
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

  /**
   * The ruleset a pod has with the mesh's rules alone (with `outbound`, its outbound ones too): installed in
   * a scratch namespace, read, deleted.
   */
  async meshOnlyRuleset(backend: Backend, outbound = false): Promise<string> {
    const scratch = `${this.pod}-ref`;
    await ip('netns', 'add', scratch);
    try {
      await this.installMesh(backend, scratch);
      if (outbound) await this.installMeshOutbound(backend, scratch);
      return await this.ruleset(scratch);
    } finally {
      await execa('ip', ['netns', 'del', scratch], { reject: false });
    }
  }

  async close(): Promise<void> {
    for (const child of this.listeners.splice(0)) {
      child.kill('SIGKILL');
      await child;
    }
    for (const ns of [this.node, this.pod]) await execa('ip', ['netns', 'del', ns], { reject: false });
  }
}
