// The other mutating webhooks on pods (a mesh's injector among them) and where they stand against ours: the API
// server calls mutating webhook configurations in the order of their names, and the webhooks of one
// configuration in their order in it; a webhook with reinvocationPolicy IfNeeded is called once more when a
// later one changed the pod. Pure: the configurations as listed, our configuration's name and reinvocation.

import type { Check } from './checks.js';
import { asList, asObject } from './json.js';
import type { Json } from './kube-client.js';
import { type LabelSelector, matchesSelector } from './label-selector.js';

/** A mesh's injector, known by its configuration's or its webhook's name as the mesh's own manifests write them. */
const INJECTORS: readonly { mesh: string; matches: (config: string, webhook: string) => boolean }[] = [
  {
    mesh: 'Istio',
    matches: (c, w) => c.startsWith('istio-sidecar-injector') || w.endsWith('sidecar-injector.istio.io'),
  },
  {
    mesh: 'Linkerd',
    matches: (c, w) =>
      c === 'linkerd-proxy-injector-webhook-config' || w === 'linkerd-proxy-injector.linkerd.io',
  },
  {
    mesh: 'Kuma',
    matches: (c, w) => c === 'kuma-admission-mutating-webhook-configuration' || w.endsWith('.kuma.io'),
  },
  {
    mesh: 'Consul',
    matches: (c, w) => c.endsWith('connect-injector') || w.endsWith('connect-injector.consul.hashicorp.com'),
  },
  { mesh: 'osm-edge or OSM', matches: (c, w) => c.startsWith('osm-webhook-') || w === 'osm-inject.k8s.io' },
];

export function meshOf(config: string, webhook: string): string | undefined {
  return INJECTORS.find((i) => i.matches(config, webhook))?.mesh;
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);

/** A rule of a webhook that sends it pods when they are created (wildcards included; `pods/status` is not pods). */
export function matchesPodCreate(rule: Json): boolean {
  const has = (list: string[], ...wanted: string[]) => list.some((v) => v === '*' || wanted.includes(v));
  return (
    has(strings(rule.operations), 'CREATE') &&
    has(strings(rule.apiGroups), '') &&
    has(strings(rule.apiVersions), 'v1') &&
    strings(rule.resources).some((r) => r === '*' || r === '*/*' || r === 'pods') &&
    (rule.scope === undefined || rule.scope === '*' || rule.scope === 'Namespaced')
  );
}

/** One webhook on pods, and where it stands against ours. */
export interface PodWebhook {
  config: string;
  webhook: string;
  /** The API server calls it before ours (its configuration's name sorts first). */
  before: boolean;
  reinvocation: string;
  failurePolicy: string;
  mesh: string | undefined;
  /** Of the namespaces labelled for us, those its namespaceSelector also takes. */
  namespaces: string[];
}

/** The webhooks on pods CREATE of every configuration but ours, in the order the API server calls them. */
export function podWebhooks(
  configurations: readonly Json[],
  ours: string,
  labelled: readonly { name: string; labels: Record<string, string> }[],
): PodWebhook[] {
  // The API server's order: by configuration name (a byte-wise comparison, as Go's < on strings).
  const byName = [...configurations].sort((a, b) => {
    const [x, y] = [String(asObject(a.metadata).name ?? ''), String(asObject(b.metadata).name ?? '')];
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return byName.flatMap((configuration) => {
    const config = String(asObject(configuration.metadata).name ?? '');
    if (config === ours) return [];
    return asList(configuration.webhooks)
      .filter((w) => asList(w.rules).some(matchesPodCreate))
      .map((w) => {
        const webhook = String(w.name ?? '');
        const selector =
          w.namespaceSelector === undefined ? undefined : (asObject(w.namespaceSelector) as LabelSelector);
        return {
          config,
          webhook,
          before: config < ours,
          reinvocation: String(w.reinvocationPolicy ?? 'Never'),
          failurePolicy: String(w.failurePolicy ?? 'Fail'),
          mesh: meshOf(config, webhook),
          namespaces: labelled.filter((n) => matchesSelector(selector, n.labels)).map((n) => n.name),
        };
      });
  });
}

/** One line per webhook; a warning where a mesh's injector after ours changes pods we are not called again for. */
export function webhookOrderChecks(
  webhooks: readonly PodWebhook[],
  ours: { config: string; reinvocation: string },
): Check[] {
  if (webhooks.length === 0) {
    return [
      {
        section: 'pre',
        name: 'other-webhooks',
        status: 'ok',
        detail: 'no other mutating webhook on pods: ours is the only one that changes a pod as it is created',
      },
    ];
  }
  return webhooks.map((w) => {
    const who = `${w.mesh === undefined ? 'mutating webhook' : `${w.mesh}'s injector`} ${w.webhook} (configuration ${w.config})`;
    const where =
      w.namespaces.length === 0 ? 'in none of the labelled namespaces' : `in ${w.namespaces.join(', ')}`;
    const settings = `reinvocationPolicy ${w.reinvocation}, failurePolicy ${w.failurePolicy}`;
    if (w.before) {
      const again = w.reinvocation === 'IfNeeded' ? ', and is called again after ours changed the pod' : '';
      return {
        section: 'pre',
        name: 'other-webhooks',
        status: 'ok',
        detail: `${who} runs before ours (${ours.config})${again}; ${settings}; ${where}`,
      };
    }
    const followed = ours.reinvocation === 'IfNeeded';
    const status = !followed && w.mesh !== undefined && w.namespaces.length > 0 ? 'warn' : 'ok';
    return {
      section: 'pre',
      name: 'other-webhooks',
      status,
      detail: followed
        ? `${who} runs after ours (${ours.config}); ours is called again after it (reinvocationPolicy IfNeeded) and rewrites what it added; ${settings}; ${where}`
        : `${who} runs after ours (${ours.config}), and ours has reinvocationPolicy ${ours.reinvocation}: probes it adds or moves are not rewritten (set IfNeeded, as the manifests do); ${settings}; ${where}`,
    };
  });
}
