// The pod event that says whether a pod was sealed, posted by the node agent, the one party that both saw the
// proof and may speak to the API server. The pod is the one the agent just connected back to: the proof's caller
// address, looked up among the pods of this node, and only a pod whose record asks to be sealed. No pod can get an event posted on another's behalf, nor make the agent write more than
// one event per address per minute. Without API access the agent posts none; init's termination message and
// `analyze` still say it.

import { isObject, type Json } from '../json.js';
import type { ApiClient } from '../kube/api/client.js';
import type { Logger } from '../log.js';
import { INIT_NAME } from '../rewrite/companion.js';
import { readRecord } from '../rewrite/record.js';
import { describeVerdict, type SealVerdict, sealVerdict } from '../seal/verdict.js';

export const EVENT_COMPONENT = 'osm-healthcheck-node';
export const SEALED_REASON = 'Sealed';
export const NOT_SEALED_REASON = 'NotSealed';
/** One event per caller address at most this often: a pod that floods proofs floods nothing further. */
export const EVENT_INTERVAL_MS = 60_000;
/** The addresses remembered for that; a node runs at most a few hundred pods. */
const REMEMBERED = 1024;

/** The pod of this node at `address` that asked to be sealed, or why no event goes to any. Pure. */
export function sealedPodAt(
  pods: readonly Json[],
  address: string,
  nodeName: string,
): { pod: Json } | { skip: string } {
  const at = pods.filter((pod) => {
    const spec = isObject(pod.spec) ? pod.spec : {};
    const status = isObject(pod.status) ? pod.status : {};
    const ips = Array.isArray(status.podIPs)
      ? status.podIPs.map((p) => (isObject(p) ? p.ip : undefined))
      : [];
    return (
      spec.nodeName === nodeName &&
      spec.hostNetwork !== true &&
      (status.podIP === address || ips.includes(address))
    );
  });
  if (at.length !== 1) return { skip: `${at.length} pods of ${nodeName} have the address ${address}` };
  const [pod = {}] = at;
  const metadata = isObject(pod.metadata) ? pod.metadata : {};
  const record = readRecord(isObject(metadata.annotations) ? metadata.annotations : undefined);
  if (record.state !== 'present' || record.record.seal !== 'node') {
    return { skip: `pod ${metadata.namespace}/${metadata.name} at ${address} does not ask to be sealed` };
  }
  return { pod };
}

/** The core/v1 Event on `pod` for the verdict the agent's proof connection showed. Pure. */
export function sealEvent(pod: Json, verdict: SealVerdict, nodeName: string, now: Date): Json {
  const metadata = isObject(pod.metadata) ? pod.metadata : {};
  const at = now.toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${metadata.name}.`, namespace: metadata.namespace },
    involvedObject: {
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: metadata.namespace,
      name: metadata.name,
      uid: metadata.uid,
      fieldPath: `spec.initContainers{${INIT_NAME}}`,
    },
    reason: verdict.sealed ? SEALED_REASON : NOT_SEALED_REASON,
    message: describeVerdict(verdict),
    type: verdict.sealed ? 'Normal' : 'Warning',
    source: { component: EVENT_COMPONENT, host: nodeName },
    reportingComponent: EVENT_COMPONENT,
    reportingInstance: nodeName,
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  };
}

export interface SealEvents {
  /** After a proof: `seen`, the address init saw the agent's connection from. Never throws, never waits. */
  proved(address: string, seen: string): void;
}

/** Posts sealEvent for each proof's pod through `client`, at most one per address per EVENT_INTERVAL_MS. */
export function sealEvents(
  client: ApiClient,
  nodeName: string,
  log: Logger,
  now: () => number = Date.now,
): SealEvents {
  const last = new Map<string, number>();
  const post = async (address: string, seen: string) => {
    const selector = `spec.nodeName=${nodeName},status.podIP=${address}`;
    const page = await client.list(`/api/v1/pods?fieldSelector=${encodeURIComponent(selector)}&limit=2`);
    if (!page.ok) throw new Error(`list pods (${selector}): ${page.reason}: ${page.message}`);
    const found = sealedPodAt([...page.items()], address, nodeName);
    if ('skip' in found) return void log.debug({ pod: address }, `no seal event: ${found.skip}`);
    const verdict = sealVerdict({ arrived: true, from: seen, nonceMatched: true });
    const event = sealEvent(found.pod, verdict, nodeName, new Date(now()));
    const namespace = String((found.pod.metadata as Json).namespace);
    const reply = await client.post(`/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, event);
    if (!reply.ok) throw new Error(`create the event in ${namespace}: ${reply.reason}: ${reply.message}`);
  };
  return {
    proved(address, seen) {
      const at = now();
      if (at - (last.get(address) ?? Number.NEGATIVE_INFINITY) < EVENT_INTERVAL_MS) return;
      last.delete(address);
      last.set(address, at);
      // A Map iterates in insertion order: the first key is the address heard from longest ago.
      if (last.size > REMEMBERED) last.delete(last.keys().next().value as string);
      post(address, seen).catch((err: Error) =>
        log.warn(
          { pod: address, err: err.message },
          'cannot post the seal event; init and analyze still say it',
        ),
      );
    },
  };
}
