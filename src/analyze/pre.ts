// `analyze --pre`: the cluster before install, read as the webhook would read it once it runs (docs/analyze.md#before-install-analyze---pre).
// The versions and the placement that follows; the namespaces labelled for injection, each with its Pod Security
// level, its LimitRanges and ResourceQuotas and what the fit makes of the companion there, and whether the API
// server admits a pod with the companion (a dry run); the other mutating webhooks on pods and their order against
// ours; whether the caller may create what the install creates. A right it lacks is a `skip` line saying which.

import { keptNamespace } from '../cluster/namespace-policies.js';
import { clusterKnowledge } from '../cluster/view.js';
import { type Check, forbidden, refused } from './checks.js';
import { podLabels } from './classify.js';
import {
  type Knowledge,
  NO_RULES,
  readKubelets,
  readNamespaceRules,
  readServerVersion,
  type ServerVersion,
} from './cluster-reads.js';
import { DEFAULT_NAMESPACE_SELECTOR, INJECT_WEBHOOK } from './install.js';
import { asList, asObject, nameOf } from './json.js';
import type { ClusterClient, Json } from './kube-client.js';
import { type LabelSelector, matchesSelector, selectorQuery } from './label-selector.js';
import { eachItem } from './paged-list.js';
import {
  injectSample,
  type NamespaceFacts,
  optionsFor,
  placementChecks,
  podSecurityCheck,
  rulesCheck,
  versionsLine,
} from './pre-namespaces.js';
import { listPodPolicies, type PolicyList, testSample } from './pre-policies.js';
import { readInstallRights } from './pre-rights.js';
import { podWebhooks, webhookOrderChecks } from './pre-webhooks.js';
import { type WebhookSettings, webhookSettings } from './webhook-settings.js';

export interface PreOptions {
  /** One namespace, or every labelled one (-A). */
  namespace: string | undefined;
  webhookConfig: string;
  webhookNamespace: string;
  webhookDeployment: string;
  /** Test the sample pod by a server-side dry run in each labelled namespace. */
  dryRun: boolean;
}

export interface PreReport {
  cluster: { server: string; context: string; version: string };
  scope: string;
  /** The namespaceSelector the namespaces were chosen by, and whose it is. */
  selector: { query: string; source: string };
  namespaces: { name: string; podSecurity: string }[];
  checks: Check[];
  needsAction: boolean;
}

/** Namespaces beyond this many are not tested one by one: said in a line. */
export const NAMESPACE_LIMIT = 100;

const check = (name: string, status: Check['status'], detail: string): Check => ({
  section: 'pre',
  name,
  status,
  detail,
});

/** Ours as deployed where it is, else the manifests': the selector and the reinvocation the order depends on. */
interface Ours {
  selector: LabelSelector;
  reinvocation: string;
  source: string;
  service: { namespace: string } | undefined;
}

async function readConfigurations(
  client: ClusterClient,
  name: string,
): Promise<{ ours: Ours; all: Json[] | undefined }> {
  const all: Json[] = [];
  const listed = await eachItem(
    client,
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    (c) => all.push(c),
  );
  let mine: Json | undefined;
  if (listed.ok) mine = all.find((c) => nameOf(c) === name);
  else {
    const got = await client.get(
      `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${name}`,
    );
    if (got.ok) mine = got.body;
  }
  const entry = asList(mine?.webhooks).find((w) => w.name === INJECT_WEBHOOK);
  const ours: Ours =
    entry === undefined
      ? {
          selector: DEFAULT_NAMESPACE_SELECTOR,
          reinvocation: 'IfNeeded',
          source: "the manifests' (the webhook is not installed)",
          service: undefined,
        }
      : {
          selector: asObject(entry.namespaceSelector) as LabelSelector,
          reinvocation: String(entry.reinvocationPolicy ?? 'Never'),
          source: `the installed configuration ${name}'s`,
          service: (() => {
            const ns = asObject(asObject(entry.clientConfig).service).namespace;
            return typeof ns === 'string' ? { namespace: ns } : undefined;
          })(),
        };
  return { ours, all: listed.ok ? all : undefined };
}

export async function readPre(client: ClusterClient, options: PreOptions): Promise<PreReport> {
  const serverVersion = await readServerVersion(client);
  const checks: Check[] = [];
  const { ours, all } = await readConfigurations(client, options.webhookConfig);
  const knowledge = await readKnowledge(client, ours, options, serverVersion, checks);
  const found = await labelledNamespaces(client, ours.selector, options.namespace);
  const query = selectorQuery(ours.selector);
  const namespaces: PreReport['namespaces'] = [];
  if ('problem' in found) checks.push(found.problem);
  else {
    checks.push(
      namespacesCheck(
        found.names.map((n) => n.name),
        query,
        ours.source,
        options.namespace,
        found.selected,
      ),
    );
    checks.push(...(await eachNamespace(client, options, knowledge, found.names, namespaces)));
  }
  checks.push(...otherWebhooksChecks(all, ours, options, namespaces, 'problem' in found ? [] : found.names));
  checks.push(...(await readInstallRights(client, options.webhookNamespace, options.webhookConfig)));
  return {
    cluster: { server: client.server, context: client.context, version: serverVersion.text },
    scope: options.namespace === undefined ? 'all namespaces' : `namespace ${options.namespace}`,
    selector: { query, source: ours.source },
    namespaces,
    checks,
    needsAction: checks.some((c) => c.status === 'fail'),
  };
}

/** An installed webhook's settings decide (before install, its defaults), with the versions it would see. */
async function readKnowledge(
  client: ClusterClient,
  ours: Ours,
  options: PreOptions,
  serverVersion: ServerVersion,
  checks: Check[],
): Promise<Knowledge> {
  let settings: WebhookSettings = webhookSettings({});
  if (ours.service !== undefined) {
    const deployment = await client.get(
      `/apis/apps/v1/namespaces/${ours.service.namespace}/deployments/${options.webhookDeployment}`,
    );
    if (deployment.ok) settings = webhookSettings(deployment.body);
  }
  const { kubelets, listed: nodesListed } = await readKubelets(client);
  const cluster = clusterKnowledge(serverVersion.read, settings.sidecarGate);
  const knowledge: Knowledge = { cluster, kubelets, settings };
  checks.push(...placementChecks(versionsLine(serverVersion.text, kubelets), knowledge));
  if (!nodesListed.ok) {
    checks.push(forbiddenOr('nodes', "the kubelets' versions", nodesListed, 'list nodes'));
  }
  return knowledge;
}

/** The labelled namespaces, the first NAMESPACE_LIMIT by name one by one: the sample pod through the rewrite. */
async function eachNamespace(
  client: ClusterClient,
  options: PreOptions,
  knowledge: Knowledge,
  names: readonly Labelled[],
  namespaces: PreReport['namespaces'],
): Promise<Check[]> {
  const checks: Check[] = [];
  const tested = names.slice(0, NAMESPACE_LIMIT);
  if (names.length > tested.length) {
    checks.push(
      check(
        'namespaces',
        'warn',
        `${names.length} labelled namespaces: the first ${tested.length} by name are checked one by one (-n NAMESPACE for another)`,
      ),
    );
  }
  const read = await readNamespaceRules(client, options.namespace);
  const rules = read.ranges.ok && read.quotas.ok ? read.rules : undefined;
  const rulesRight = `list limitranges and resourcequotas ${options.namespace === undefined ? 'cluster-wide' : `in ${options.namespace}`}`;
  let policies: Promise<PolicyList> | undefined;
  const listPolicies = () => {
    policies ??= listPodPolicies(client);
    return policies;
  };
  const { settings } = knowledge;
  for (const ns of tested) {
    const policy = keptNamespace(ns.object, ns.name, settings.podSecurityDefault);
    const facts: NamespaceFacts = {
      name: ns.name,
      policy,
      rules: rules?.get(ns.name) ?? (rules === undefined ? undefined : NO_RULES),
    };
    namespaces.push({ name: ns.name, podSecurity: policy.level });
    const sample = injectSample(facts, optionsFor(facts, knowledge));
    checks.push(podSecurityCheck(facts), rulesCheck(facts, sample, rulesRight));
    if (!options.dryRun) continue;
    const reinject = (limit: string) =>
      injectSample(
        facts,
        optionsFor(facts, { ...knowledge, settings: { ...settings, companionCpuLimit: limit } }),
      );
    const retry = settings.companionCpuLimit === undefined ? reinject : undefined;
    checks.push(await testSample(client, sample, retry, listPolicies));
  }
  if (!options.dryRun) checks.push(listedOnly(await listPodPolicies(client)));
  return checks;
}

/** Where our webhook runs among the other mutating webhooks on pods of those namespaces. */
function otherWebhooksChecks(
  all: Json[] | undefined,
  ours: Ours,
  options: PreOptions,
  namespaces: PreReport['namespaces'],
  found: readonly Labelled[],
): Check[] {
  if (all === undefined) {
    return [
      forbidden(
        'pre',
        'other-webhooks',
        'the other mutating webhooks on pods',
        'list mutatingwebhookconfigurations',
      ),
    ];
  }
  const labelled = namespaces.map((n) => ({
    name: n.name,
    labels: found.find((f) => f.name === n.name)?.labels ?? {},
  }));
  return webhookOrderChecks(podWebhooks(all, options.webhookConfig, labelled), {
    config: options.webhookConfig,
    reinvocation: ours.reinvocation,
  });
}

const forbiddenOr = (
  name: string,
  what: string,
  failed: { status: number; message: string },
  right: string,
) => refused('pre', name, what, failed, right);

interface Labelled {
  name: string;
  labels: Record<string, string>;
  object: Json;
}

/** The namespaces the selector takes (or -n's one, labelled or not), sorted by name. */
async function labelledNamespaces(
  client: ClusterClient,
  selector: LabelSelector,
  namespace: string | undefined,
): Promise<{ names: Labelled[]; selected: boolean } | { problem: Check }> {
  const keep = (object: Json): Labelled => {
    const name = nameOf(object);
    return { name, labels: { 'kubernetes.io/metadata.name': name, ...podLabels(object) }, object };
  };
  if (namespace !== undefined) {
    const reply = await client.get(`/api/v1/namespaces/${namespace}`);
    if (!reply.ok) {
      return {
        problem: forbiddenOr('namespaces', `namespace ${namespace}`, reply, `get namespaces/${namespace}`),
      };
    }
    const one = keep(reply.body);
    return { names: [one], selected: matchesSelector(selector, one.labels) };
  }
  const names: Labelled[] = [];
  const query = encodeURIComponent(selectorQuery(selector));
  const listed = await eachItem(client, `/api/v1/namespaces?labelSelector=${query}`, (o) =>
    names.push(keep(o)),
  );
  if (!listed.ok) {
    return {
      problem: forbiddenOr(
        'namespaces',
        'which namespaces are labelled for injection',
        listed,
        'list namespaces',
      ),
    };
  }
  // The API server's label selector is the configuration's; matched here too, for a selector it would read otherwise.
  const matching = names.filter((n) => matchesSelector(selector, n.labels));
  return { names: matching.sort((a, b) => a.name.localeCompare(b.name)), selected: true };
}

export function namespacesCheck(
  names: readonly string[],
  query: string,
  source: string,
  namespace: string | undefined,
  selected: boolean,
): Check {
  const selector = `the namespaceSelector ${query === '' ? '(every namespace)' : query}, ${source}`;
  if (namespace !== undefined && !selected) {
    return check(
      'namespaces',
      'warn',
      `${namespace} does not match ${selector}: the webhook will not see its pods (checked below as if it did)`,
    );
  }
  if (names.length === 0) {
    return check(
      'namespaces',
      'warn',
      `no namespace matches ${selector}: label those whose pods get the companion`,
    );
  }
  return check('namespaces', 'ok', `${names.length} matching ${selector}: ${names.join(', ')}`);
}

/** --no-dry-run: the policies on pods named, none tested. */
function listedOnly(policies: PolicyList): Check {
  const name = 'admission-policies';
  switch (policies.state) {
    case 'forbidden':
      return forbidden(
        'pre',
        name,
        'the ValidatingAdmissionPolicies on pods',
        'list validatingadmissionpolicies',
      );
    case 'none':
      return check(name, 'ok', `no ValidatingAdmissionPolicy: ${policies.why}`);
    case 'listed':
      return policies.onPods.length === 0
        ? check(name, 'ok', 'no ValidatingAdmissionPolicy covers pods')
        : check(
            name,
            'warn',
            `ValidatingAdmissionPolicies on pods, not tested against the companion (--no-dry-run): ${policies.onPods.join(', ')}`,
          );
  }
}
