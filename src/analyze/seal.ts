// The sealed mode as analyze reports it (docs/analyze.md#sealed-mode): per node, whether its agent runs and how many
// of its pods are sealed or open and why; the pods that run open on a node whose agent runs, with the restart that
// seals them; and what removing a node's agent rules would break. Pure, a function of the pods as the API server
// holds them (test/analyze/seal.test.ts).

import { INIT_NAME } from '../rewrite/companion.js';
import { readRecord } from '../rewrite/record.js';
import { asList, asObject, type Json } from './json.js';
import { fixCommand, type Workload } from './workloads.js';

/** The agent's pods carry this label (deploy/node/daemonset.yaml). */
export const AGENT_SELECTOR = 'app.kubernetes.io/name=osm-healthcheck-node';

/** What one pod of ours says of the seal; undefined for a pod with no record or no node yet. */
export type PodSeal =
  | { node: string; state: 'sealed' }
  | { node: string; state: 'open'; why: string }
  /** Asked, and init has not said yet. */
  | { node: string; state: 'proving' }
  /** Injected without the seal setting (or before it existed): runs open, asked nothing. */
  | { node: string; state: 'not asked' };

/** init's termination message, from its current or last run. */
function initMessage(pod: Json): string | undefined {
  const statuses = asList(asObject(pod.status).initContainerStatuses);
  const init = statuses.find((s) => s.name === INIT_NAME);
  if (init === undefined) return undefined;
  for (const state of [asObject(init.state), asObject(init.lastState)]) {
    const message = asObject(state.terminated).message;
    if (typeof message === 'string' && message !== '') return message.trim();
  }
  return undefined;
}

export function podSeal(pod: Json): PodSeal | undefined {
  const node = asObject(pod.spec).nodeName;
  const record = readRecord(asObject(asObject(pod.metadata).annotations) as Record<string, unknown>);
  if (typeof node !== 'string' || record.state !== 'present') return undefined;
  if (record.record.bypass !== 'init-container') return undefined;
  if (record.record.seal !== 'node') return { node, state: 'not asked' };
  const message = initMessage(pod);
  if (message?.startsWith('sealed:')) return { node, state: 'sealed' };
  if (message?.startsWith('open:')) {
    const because = message.indexOf(' because ');
    return { node, state: 'open', why: because < 0 ? message : message.slice(because + ' because '.length) };
  }
  return { node, state: 'proving' };
}

export interface NodeSeal {
  node: string;
  /** A Running agent pod is on it. */
  agent: boolean;
  sealed: number;
  open: number;
  notAsked: number;
  /** Each distinct reason init gave for running open here. */
  whyOpen: string[];
}

/** Pods that run open, by workload and node; where the node's agent runs, the restart that seals them. */
export interface OpenPods extends Workload {
  node: string;
  pods: string[];
  state: 'open' | 'not asked';
  /** Absent where the node has no running agent: a restart would run open again. */
  fix?: string;
}

export interface SealReport {
  nodes: NodeSeal[];
  open: OpenPods[];
}

/** Collects pods as they are read, then reports against the nodes whose agent runs. */
export class SealTally {
  private readonly nodes = new Map<string, NodeSeal>();
  private readonly open = new Map<
    string,
    { workload: Workload; node: string; state: 'open' | 'not asked'; pods: string[] }
  >();

  private nodeOf(name: string): NodeSeal {
    let node = this.nodes.get(name);
    if (node === undefined) {
      node = { node: name, agent: false, sealed: 0, open: 0, notAsked: 0, whyOpen: [] };
      this.nodes.set(name, node);
    }
    return node;
  }

  /** An agent pod (kube-system, AGENT_SELECTOR): its node has the agent when it runs. */
  agentPod(pod: Json): void {
    const node = asObject(pod.spec).nodeName;
    if (typeof node === 'string' && asObject(pod.status).phase === 'Running') this.nodeOf(node).agent = true;
  }

  private askedAny = false;

  /** Whether any pod read so far asked for the seal. */
  asked(): boolean {
    return this.askedAny;
  }

  pod(pod: Json, workload: Workload, name: string): void {
    const seal = podSeal(pod);
    if (seal !== undefined && seal.state !== 'not asked') this.askedAny = true;
    if (seal === undefined || seal.state === 'proving') return;
    const node = this.nodeOf(seal.node);
    if (seal.state === 'sealed') {
      node.sealed++;
      return;
    }
    if (seal.state === 'open') {
      node.open++;
      if (!node.whyOpen.includes(seal.why)) node.whyOpen.push(seal.why);
    } else node.notAsked++;
    const key = JSON.stringify([workload.namespace, workload.kind, workload.name, seal.node, seal.state]);
    const group = this.open.get(key);
    if (group === undefined)
      this.open.set(key, { workload, node: seal.node, state: seal.state, pods: [name] });
    else group.pods.push(name);
  }

  report(): SealReport {
    const nodes = [...this.nodes.values()]
      .filter((n) => n.agent || n.sealed > 0 || n.open > 0)
      .sort((a, b) => a.node.localeCompare(b.node));
    const open = [...this.open.values()]
      // A pod injected without the setting, on a node without the agent: nothing the sealed mode says about it.
      .filter((g) => g.state === 'open' || this.nodes.get(g.node)?.agent === true)
      .map((g): OpenPods => {
        const pods = [...g.pods].sort();
        const fix =
          this.nodes.get(g.node)?.agent === true ? fixCommand(g.workload, 'stale', pods) : undefined;
        return { ...g.workload, node: g.node, pods, state: g.state, ...(fix === undefined ? {} : { fix }) };
      })
      .sort(
        (a, b) =>
          a.node.localeCompare(b.node) ||
          a.namespace.localeCompare(b.namespace) ||
          a.name.localeCompare(b.name),
      );
    return { nodes, open };
  }
}

/** The report's lines; none where no node runs the agent and no pod asked for the seal. */
export function sealSection(report: SealReport, table: (rows: string[][]) => string[]): string[] {
  if (report.nodes.length === 0) return [];
  const rows = report.nodes.map((n) => [
    n.node,
    n.agent ? 'running' : 'none',
    String(n.sealed),
    String(n.open + n.notAsked),
    n.whyOpen.join('; '),
  ]);
  const lines = [
    '',
    'SEALED MODE (docs/node.md)',
    ...table([['NODE', 'AGENT', 'SEALED', 'OPEN', 'WHY OPEN'], ...rows]),
  ];
  const unseal = report.nodes.filter((n) => n.sealed > 0);
  for (const n of unseal) {
    lines.push(
      `  removing the node agent's rules from ${n.node} (node --cleanup) fails every probe of its ${n.sealed} sealed pod${n.sealed === 1 ? '' : 's'}: set the webhook's --seal off and restart them open first (docs/install.md#the-node-agent)`,
    );
  }
  if (report.open.length > 0) {
    lines.push('', 'RUNNING OPEN (where the node agent runs, a restart seals them if the proof passes):');
    for (const g of report.open) {
      const then = g.fix === undefined ? `no agent on ${g.node}` : g.fix;
      lines.push(`  ${g.node} ${g.namespace} ${g.kind}/${g.name} ${g.pods.join(',')} (${g.state}): ${then}`);
    }
  }
  return lines;
}
