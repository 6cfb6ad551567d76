// A node with two pods, as a CNI bridge lays them out: a "node" network namespace holding a bridge (the pods'
// gateway, 10.253.0.1 and fd00:253::1) and forwarding, and two pod namespaces on it, "pod" (the one sealed) and
// "other" (any other pod of the cluster). Only addresses inside them. In "pod", osm-edge's interception (test/init/lab.ts's
// rules, inbound and outbound) and listeners for the fake proxy, the fake outbound listener and the app. close()
// kills every process started here and deletes the namespaces.

import { execa } from 'execa';
import { Processes, type Running } from '../e2e/processes.js';
import {
  type Backend,
  DIAL,
  LISTENERS,
  MESH_RULES,
  meshOutputRules,
  OUTBOUND_PORT,
  PROXY_PORT,
} from './lab.js';

export const BRIDGE = { v4: '10.253.0.1', v6: 'fd00:253::1' } as const;
export const SEALED_POD = { v4: '10.253.0.2', v6: 'fd00:253::2' } as const;
export const OTHER_POD = { v4: '10.253.0.3', v6: 'fd00:253::3' } as const;
export const POD_CIDRS = '10.253.0.0/24,fd00:253::/64';
/** The app the companion probes, in the sealed pod. */
export const APP_PORT = 8080;

async function ip(...args: string[]): Promise<void> {
  await execa('ip', args);
}

export class NodeLab {
  readonly procs = new Processes();
  private readonly others: Running[] = [];

  private constructor(
    readonly node: string,
    readonly pod: string,
    readonly other: string,
  ) {}

  static async create(tag: string): Promise<NodeLab> {
    const base = `ohc-${process.pid}-${tag}`;
    const lab = new NodeLab(`${base}-node`, `${base}-pod`, `${base}-other`);
    await lab.deleteNamespaces();
    try {
      for (const ns of [lab.node, lab.pod, lab.other]) {
        await ip('netns', 'add', ns);
        // No duplicate address detection: a tentative address makes the first IPv6 connect wait a second.
        await lab.sysctl(ns, 'net.ipv6.conf.default.accept_dad=0', 'net.ipv6.conf.all.accept_dad=0');
        await ip('-n', ns, 'link', 'set', 'lo', 'up');
      }
      await lab.sysctl(lab.node, 'net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1');
      await ip('-n', lab.node, 'link', 'add', 'br0', 'type', 'bridge');
      await ip('-n', lab.node, 'addr', 'add', `${BRIDGE.v4}/24`, 'dev', 'br0');
      await ip('-n', lab.node, '-6', 'addr', 'add', `${BRIDGE.v6}/64`, 'dev', 'br0', 'nodad');
      await ip('-n', lab.node, 'link', 'set', 'br0', 'up');
      for (const [ns, address, hostSide] of [
        [lab.pod, SEALED_POD, 'vpod'],
        [lab.other, OTHER_POD, 'vother'],
      ] as const) {
        await ip(
          'link',
          'add',
          'eth0',
          'netns',
          ns,
          'type',
          'veth',
          'peer',
          'name',
          hostSide,
          'netns',
          lab.node,
        );
        await ip('-n', lab.node, 'link', 'set', hostSide, 'master', 'br0', 'up');
        await ip('-n', ns, 'addr', 'add', `${address.v4}/24`, 'dev', 'eth0');
        await ip('-n', ns, '-6', 'addr', 'add', `${address.v6}/64`, 'dev', 'eth0', 'nodad');
        await ip('-n', ns, 'link', 'set', 'eth0', 'up');
        await ip('-n', ns, 'route', 'add', 'default', 'via', BRIDGE.v4);
        await ip('-n', ns, '-6', 'route', 'add', 'default', 'via', BRIDGE.v6);
      }
    } catch (err) {
      await lab.close();
      throw err;
    }
    return lab;
  }

  private async sysctl(ns: string, ...settings: string[]): Promise<void> {
    await execa('ip', ['netns', 'exec', ns, 'sysctl', '-q', '-w', ...settings]);
  }

  run(ns: string, argv: readonly string[]) {
    return execa('ip', ['netns', 'exec', ns, ...argv], { reject: false, stdin: 'ignore' });
  }

  /** osm-edge's interception in the sealed pod, inbound and outbound, IPv4 and IPv6. */
  async installMesh(backend: Backend): Promise<void> {
    const commands = (['iptables', 'ip6tables'] as const).flatMap((tool) =>
      [...MESH_RULES, ...meshOutputRules(tool)].map((rule) => `${tool}-${backend} ${rule}`),
    );
    const result = await this.run(this.pod, ['sh', '-ec', commands.join('\n')]);
    if (result.exitCode !== 0) throw new Error(`installing the mesh rules failed: ${result.stderr}`);
  }

  /** The mesh's redirect taken away (the jump from PREROUTING), as in a pod without a mesh. */
  async removeMeshInbound(backend: Backend): Promise<void> {
    const commands = ['iptables', 'ip6tables'].map(
      (tool) => `${tool}-${backend} -t nat -D PREROUTING -p tcp -j PROXY_INBOUND`,
    );
    const result = await this.run(this.pod, ['sh', '-ec', commands.join('\n')]);
    if (result.exitCode !== 0) throw new Error(`removing the mesh's redirect failed: ${result.stderr}`);
  }

  /** The mesh's redirect put back, after ours (appended: our jump stays first). */
  async restoreMeshInbound(backend: Backend): Promise<void> {
    const commands = ['iptables', 'ip6tables'].map(
      (tool) => `${tool}-${backend} -t nat -A PREROUTING -p tcp -j PROXY_INBOUND`,
    );
    const result = await this.run(this.pod, ['sh', '-ec', commands.join('\n')]);
    if (result.exitCode !== 0) throw new Error(`restoring the mesh's redirect failed: ${result.stderr}`);
  }

  /** The fake proxy (PROXY) and the mesh's fake outbound listener (OUTBOUND) in the sealed pod. */
  async startMeshListeners(): Promise<void> {
    const child = this.procs.start('mesh listeners', this.pod, [
      process.execPath,
      '-e',
      LISTENERS,
      JSON.stringify([
        [PROXY_PORT, 'PROXY'],
        [OUTBOUND_PORT, 'OUTBOUND'],
      ]),
    ]);
    this.others.push(child);
    await child.waitFor((line) => line === 'ready', 10_000);
  }

  /** Connects from `ns` to each target and returns what answered each (test/init/lab.ts's DIAL). */
  async dial(ns: string, targets: ReadonlyArray<readonly [string, number]>): Promise<string[]> {
    const result = await this.run(ns, [process.execPath, '-e', DIAL, JSON.stringify(targets)]);
    if (result.exitCode !== 0) throw new Error(`dialing from ${ns} failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as string[];
  }

  private async deleteNamespaces(): Promise<void> {
    for (const ns of [this.node, this.pod, this.other])
      await execa('ip', ['netns', 'del', ns], { reject: false });
  }

  async close(): Promise<void> {
    await this.procs.killAll();
    await this.deleteNamespaces();
  }
}
