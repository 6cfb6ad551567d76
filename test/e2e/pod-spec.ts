// What the end-to-end test reads from a manifest, as kubelet and the container runtime would: each container's
// args, env (downward API resolved), privileges (as setpriv flags), postStart hook and probes (named ports
// resolved).

import { parseAllDocuments } from 'yaml';
import { PROBE_KINDS, type ProbeKind } from '../../src/scheme.js';
import { type ProbeTiming, probeTiming } from './kubelet.js';

export type ProbeAction =
  | {
      type: 'httpGet';
      scheme: 'HTTP' | 'HTTPS';
      port: number;
      path: string;
      headers: { name: string; value: string }[];
    }
  | { type: 'tcpSocket'; port: number }
  | { type: 'grpc'; port: number; service: string };

export interface ProbeSpec {
  kind: ProbeKind;
  action: ProbeAction;
  timing: ProbeTiming;
}

export interface ContainerSpec {
  name: string;
  image: string;
  /** `command`: replaces the image's entrypoint (osm-edge's own containers set it). */
  command: string[] | undefined;
  args: string[];
  env: EnvVar[];
  securityContext: SecurityContext;
  /** `lifecycle.postStart.exec.command`: kubelet runs it to its end before it starts the next container. */
  postStart: string[] | undefined;
  /** `Always` on an init container: a native sidecar, which runs alongside the containers (KEP-753). */
  restartPolicy: string | undefined;
  probes: ProbeSpec[];
}

export interface PodSpec {
  initContainers: ContainerSpec[];
  containers: ContainerSpec[];
  /** The pod (template)'s annotations: the mesh's injector reads its port exclusions there. */
  annotations: Record<string, string>;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath?: string } };
}

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
}

type Json = Record<string, unknown>;
const object = (value: unknown): Json => (typeof value === 'object' && value !== null ? (value as Json) : {});
const list = (value: unknown): Json[] => (Array.isArray(value) ? value.map(object) : []);

/** The pod spec of the first Pod or workload (anything with spec.template.spec) in a YAML stream. */
export function readPodSpec(yamlText: string): PodSpec {
  for (const doc of parseAllDocuments(yamlText)) {
    const manifest = object(doc.toJS());
    const template = manifest.kind === 'Pod' ? manifest : object(object(manifest.spec).template);
    const spec = object(template.spec);
    if (Array.isArray(spec.containers)) {
      const annotations = Object.entries(object(object(template.metadata).annotations));
      return {
        initContainers: list(spec.initContainers).map(readContainer),
        containers: list(spec.containers).map(readContainer),
        annotations: Object.fromEntries(annotations.map(([key, value]) => [key, String(value)])),
      };
    }
  }
  throw new Error('no Pod or workload with a pod template in the manifest');
}

function readContainer(c: Json): ContainerSpec {
  const name = String(c.name);
  const probes = PROBE_KINDS.flatMap((kind) => {
    const probe = c[`${kind}Probe`];
    return probe === undefined
      ? []
      : [{ kind, action: readAction(object(probe), c, kind), timing: probeTiming(object(probe)) }];
  });
  return {
    name,
    image: String(c.image),
    command: Array.isArray(c.command) ? c.command.map(String) : undefined,
    args: Array.isArray(c.args) ? c.args.map(String) : [],
    env: list(c.env) as unknown as EnvVar[],
    securityContext: object(c.securityContext) as SecurityContext,
    postStart: readPostStart(object(c.lifecycle).postStart, name),
    restartPolicy: typeof c.restartPolicy === 'string' ? c.restartPolicy : undefined,
    probes,
  };
}

function readPostStart(hook: unknown, container: string): string[] | undefined {
  if (hook === undefined) return undefined;
  const command = object(object(hook).exec).command;
  if (!Array.isArray(command)) throw new Error(`${container}: only exec postStart hooks can be played`);
  return command.map(String);
}

function readAction(probe: Json, container: Json, kind: string): ProbeAction {
  const where = `${container.name}.${kind}Probe`;
  if (probe.httpGet !== undefined) {
    const h = object(probe.httpGet);
    return {
      type: 'httpGet',
      scheme: h.scheme === 'HTTPS' ? 'HTTPS' : 'HTTP',
      port: resolvePort(h.port, container, where),
      path: typeof h.path === 'string' && h.path !== '' ? h.path : '/',
      headers: list(h.httpHeaders).map((x) => ({ name: String(x.name), value: String(x.value) })),
    };
  }
  if (probe.tcpSocket !== undefined) {
    return { type: 'tcpSocket', port: resolvePort(object(probe.tcpSocket).port, container, where) };
  }
  if (probe.grpc !== undefined) {
    const g = object(probe.grpc);
    return { type: 'grpc', port: Number(g.port), service: typeof g.service === 'string' ? g.service : '' };
  }
  throw new Error(`${where}: only httpGet, tcpSocket and grpc probes can be played`);
}

/** kubelet's probe.ResolveContainerPort: a number as is, a name through the container's ports. */
export function resolvePort(port: unknown, container: Json, where: string): number {
  if (typeof port === 'number') return port;
  const named = list(container.ports).find((p) => p.name === port);
  if (named === undefined) throw new Error(`${where}: no container port named ${JSON.stringify(port)}`);
  return Number(named.containerPort);
}

/** The environment the runtime gives the container: plain values, and `fieldRef`s from `downward`. */
export function containerEnv(
  env: readonly EnvVar[],
  downward: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of env) {
    if (v.value !== undefined) {
      out[v.name] = v.value;
      continue;
    }
    const path = v.valueFrom?.fieldRef?.fieldPath;
    const value = path === undefined ? undefined : downward[path];
    if (value === undefined) throw new Error(`env ${v.name}: cannot resolve ${JSON.stringify(v.valueFrom)}`);
    out[v.name] = value;
  }
  return out;
}

/**
 * setpriv flags giving a process what the securityContext gives a container: its uid (and gid), only the
 * capabilities added back after `drop: [ALL]`, and no_new_privs for `allowPrivilegeEscalation: false`.
 */
export function setprivArgs(sc: SecurityContext): string[] {
  const args: string[] = [];
  if (sc.runAsUser !== undefined && sc.runAsUser !== 0) {
    args.push(`--reuid=${sc.runAsUser}`, `--regid=${sc.runAsGroup ?? sc.runAsUser}`, '--clear-groups');
  }
  if (sc.capabilities?.drop?.includes('ALL')) {
    const add = (sc.capabilities.add ?? []).map((cap) => `,+${cap.toLowerCase()}`).join('');
    args.push(`--bounding-set=-all${add}`, '--inh-caps=-all');
  }
  if (sc.allowPrivilegeEscalation === false) args.push('--no-new-privs');
  return args.length === 0 ? [] : ['setpriv', ...args];
}
