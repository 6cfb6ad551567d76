// The slice of the Kubernetes Pod API the rewrite reads and writes, and the rewrite's own inputs and outputs.
// Only the fields we touch are typed; everything else rides along untouched in the index signatures.

import type { SealMode } from '../seal/setting.js';
import type { ProbeTableDocument } from '../table/types.js';
import type { Mesh } from './mesh-exclusion.js';
import type { ClusterKnowledge, KubeletKnowledge, PlacementMode } from './placement.js';
import type { PodSecurityKnowledge } from './pod-security.js';
import type { NamespaceRulesKnowledge } from './resources/namespace-rules.js';

/** A port as Kubernetes writes it: a number, or the name of one of the container's ports. */
export type IntOrString = number | string;

export interface HTTPGetAction {
  path?: string;
  port?: IntOrString;
  host?: string;
  scheme?: string;
  httpHeaders?: { name: string; value: string }[];
  [field: string]: unknown;
}

export interface TCPSocketAction {
  port?: IntOrString;
  host?: string;
  [field: string]: unknown;
}

export interface GRPCAction {
  port?: number;
  service?: string;
  [field: string]: unknown;
}

export interface Probe {
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  grpc?: GRPCAction;
  exec?: unknown;
  timeoutSeconds?: number;
  [field: string]: unknown;
}

export interface ContainerPort {
  name?: string;
  containerPort?: number;
  [field: string]: unknown;
}

export interface Container {
  name?: string;
  ports?: ContainerPort[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  /** `Always` on an init container makes it a native sidecar (KEP-753). */
  restartPolicy?: string;
  env?: { name: string; value?: string; [field: string]: unknown }[];
  [field: string]: unknown;
}

export interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  /** Always (the default), OnFailure or Never: the last two must end, and decide where the companion goes. */
  restartPolicy?: string;
  [field: string]: unknown;
}

/**
 * Why a pod with probes for the companion is left as it came, one word each, for those who count or sort pods by
 * it (analyze, the webhook's log): a pod that must end where no native sidecar is allowed, a pod no mesh touches
 * (host network, Windows), a namespace's Pod Security level that refuses our init container, admission rules
 * (LimitRanges, ResourceQuotas) that leave our containers no room, a pod osm-edge or OSM injected.
 */
export type UntouchedCause =
  | 'run-to-completion'
  | 'host-network'
  | 'windows'
  | 'pod-security'
  | 'admission-rules'
  | 'osm-mesh';

/** Where the companion goes in one pod and why (rewrite/run-to-completion.ts decideCompanion). */
export type CompanionDecision =
  | { companion: 'native-sidecar' | 'first'; reason: string }
  /** `warn`: the reason is a warning for the user (false only where the annotation asked for this). */
  | { companion: 'untouched'; cause: UntouchedCause; reason: string; warn: boolean };

export interface RewriteOptions {
  /** Image of the companion and of the init container. */
  image: string;
  /**
   * --placement: where the companion goes in pods that keep running, as a native sidecar (an init container with
   * `restartPolicy: Always`) or first among the containers (rewrite/placement.ts choosePlacement).
   */
  placement: PlacementMode;
  /** What is known of the cluster; absent: unchecked (inject without --kube-version). */
  cluster?: ClusterKnowledge;
  /** The kubelets that may run the pod (webhook: a watch of nodes); absent: unchecked. */
  kubelets?: KubeletKnowledge;
  /** The Pod Security level the pod's namespace enforces; absent: unchecked (inject without --pod-security). */
  podSecurity?: PodSecurityKnowledge;
  /** inject --mesh-exclusion: exclude 15901-15904 with this mesh's annotation instead of the init container. */
  meshExclusion?: Mesh;
  /** The LimitRanges and ResourceQuotas of the pod's namespace; absent: unchecked (namespace-rules.ts). */
  namespaceRules?: NamespaceRulesKnowledge;
  /**
   * A CPU limit for our two containers, cluster-wide (webhook --companion-cpu-limit, inject the same flag): for
   * policies we cannot read (ValidatingAdmissionPolicy, Kyverno, Gatekeeper) that demand one. Canonical quantity.
   */
  companionCpuLimit?: string;
  /** inject --seal, the webhook's --seal (seal.ts): `node` seals where the node agent proves it can. Default off. */
  seal?: SealMode;
}

export interface RewriteResult {
  /** A new spec; the input is never mutated. Equal to the input when `changed` is false. */
  spec: PodSpec;
  /**
   * Annotations to set on the pod (template)'s metadata: kubectl's default container (never over the pod's own),
   * and the mesh's inbound port exclusion list with --mesh-exclusion (the pod's own list, completed).
   */
  annotations: Readonly<Record<string, string>>;
  /** The probe table written into the companion's env (empty when nothing was rewritten). */
  table: ProbeTableDocument;
  /** One line each, naming the resource and container, for probes left as they were. */
  warnings: string[];
  /** The spec changed, or there are annotations to add. */
  changed: boolean;
  /** Where the companion went and why; absent when there was nothing for it to answer (or the pod opted out). */
  placement?: CompanionDecision;
}
