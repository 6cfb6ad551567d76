// The manifests of a pod that runs a Node.js script on the real node (test/helpers/node-cluster.ts): the script in a
// ConfigMap, run by the node binary of the project's own image (/usr/local/bin/node), so a test needs no other
// image and no registry. Plain objects, for a Pod, a Deployment's or a DaemonSet's template alike.

/** What a script pod runs, and how. */
export interface NodeScript {
  /** The Pod's and the ConfigMap's name (a DNS label). */
  name: string;
  namespace: string;
  /** The script's source, an ES module (`.mjs`). */
  script: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  labels?: Readonly<Record<string, string>>;
  /** The node's own network namespace (a DaemonSet on the node, reaching 127.0.0.1 of the host). */
  hostNetwork?: boolean;
  /** The uid it runs as; the image's non-root 65532 by default. */
  runAsUser?: number;
  /** Never (the default) for a script that ends; Always for one that serves. */
  restartPolicy?: 'Never' | 'Always' | 'OnFailure';
}

/** Where the ConfigMap is mounted in the container, and the file the script is. */
export const SCRIPT_DIR = '/osm-hc-script';
export const SCRIPT_FILE = 'script.mjs';
/** The container's name. */
export const SCRIPT_CONTAINER = 'script';

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects, walked by the field names Kubernetes defines
export type KubeObject = Record<string, any>;

export function scriptConfigMap(s: NodeScript): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: s.name, namespace: s.namespace },
    data: { [SCRIPT_FILE]: s.script },
  };
}

/** The pod spec that runs `s.script` with the image `image`'s node: a template's or a Pod's `spec`. */
export function scriptPodSpec(s: NodeScript, image: string): KubeObject {
  return {
    restartPolicy: s.restartPolicy ?? 'Never',
    // No DNS server runs on the node (../shared/node/README.md): the host's resolv.conf, Service IPs by address.
    dnsPolicy: s.hostNetwork === true ? 'ClusterFirstWithHostNet' : 'Default',
    ...(s.hostNetwork === true ? { hostNetwork: true } : {}),
    terminationGracePeriodSeconds: 1,
    containers: [
      {
        name: SCRIPT_CONTAINER,
        image,
        imagePullPolicy: 'Never',
        command: ['/usr/local/bin/node', `${SCRIPT_DIR}/${SCRIPT_FILE}`, ...(s.args ?? [])],
        env: Object.entries(s.env ?? {}).map(([name, value]) => ({ name, value })),
        securityContext: { runAsUser: s.runAsUser ?? 65532, allowPrivilegeEscalation: false },
        volumeMounts: [{ name: 'script', mountPath: SCRIPT_DIR, readOnly: true }],
      },
    ],
    volumes: [{ name: 'script', configMap: { name: s.name } }],
  };
}

/** The ConfigMap and the Pod that runs it. */
export function scriptPodManifests(s: NodeScript, image: string): KubeObject[] {
  return [
    scriptConfigMap(s),
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: s.name, namespace: s.namespace, labels: { ...s.labels } },
      spec: scriptPodSpec(s, image),
    },
  ];
}
