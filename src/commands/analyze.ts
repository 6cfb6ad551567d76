// `osm-healthcheck analyze`: read-only, against the cluster of the current kubeconfig context. Flags -> a client
// (src/analyze/kube-client.ts) -> the install, the round trip and every pod the webhook sees -> a table or JSON
// on stdout, and an exit status for CI and cron: 0 nothing to do, 1 something needs action, 2 usage, 3 no cluster.

import { boundHeap } from '../analyze/heap.js';
import { connect } from '../analyze/kube-client.js';
import { readPre } from '../analyze/pre.js';
import { formatPreJson, formatPreTable } from '../analyze/pre-report.js';
import { formatJson, formatTable } from '../analyze/report.js';
import { analyzeCluster } from '../analyze/run.js';
import { HealthcheckError } from '../errors.js';
import { badFlagValue, noArguments, parseFlags, usageError } from '../flags.js';
import { checkProbesFlags, PROBES_FLAGS, PROBES_USAGE, runProbes } from './analyze-probes.js';
import type { Command } from './command.js';

const OUTPUTS = ['table', 'json'] as const;
const DEFAULT_TIMEOUT_SECONDS = 30;

const usage = `Usage: osm-healthcheck analyze [--pre | --probes] [-n NAMESPACE | -A] [flags]

Read-only. Checks the install (the MutatingWebhookConfiguration, the webhook's Deployment and endpoints, the
caBundle against its serving certificate and when that expires), makes a server-side dry-run create of a pod
with a probe (nothing is stored) to see what the live webhook does with it, then puts every pod the webhook
sees, and every pod that carries the companion, in one class: covered (this release and image), stale (an
older one: a restart brings the new one), uncovered (created past the fail-open webhook: a restart injects
it), untouched by design (with the reason), or failing (the companion restarts). Pods are grouped by workload,
each group with the command that fixes it. docs/analyze.md says what each class and check means.

With --pre, the checks before install instead (docs/analyze.md#before-install-analyze---pre): the API server's and the kubelets'
versions and where the companion goes; the namespaces labelled for injection, with their Pod Security levels,
their LimitRanges and ResourceQuotas and what the companion gets there, and whether the API server admits a
pod with the companion (a server-side dry run, which ValidatingAdmissionPolicies judge); the other mutating
webhooks on pods and their order against ours; whether you may create what the install creates.

The cluster is found and authenticated as kubectl does it: KUBECONFIG (several files), ~/.kube/config, or the
pod's service account in a cluster; client certificates, tokens and exec credential plugins.

Flags:
  --pre                    the checks before install (needs more rights: where one is missing, a line says
                           which: "cannot check X: needs Y")
  --kubeconfig FILE        this kubeconfig file only
  --context NAME           this context of the kubeconfig, not its current one
  -n, --namespace NS       only this namespace (default: the context's namespace)
  -A, --all-namespaces     every namespace
  -o, --output FORMAT      ${OUTPUTS.join(' or ')} (default table)
  --show-covered           list covered workloads in the table too (JSON always has them)
  --no-dry-run             no round trip (it needs create on pods in a labelled namespace); with --pre, no
                           dry run: the ValidatingAdmissionPolicies on pods are listed, not tested
  --dry-run-namespace NS   the round trip's namespace (default: the first the webhook sees)
  --webhook-config NAME    the MutatingWebhookConfiguration (default osm-healthcheck)
  --webhook-deployment NAME
                           the webhook's Deployment, in its Service's namespace (default osm-healthcheck-webhook)
  --webhook-namespace NS   its namespace where the configuration names a URL (default osm-healthcheck)
  --request-timeout SECONDS
                           each request's deadline (default ${DEFAULT_TIMEOUT_SECONDS})
  --help, --version

${PROBES_USAGE}

Exit status: 0 when nothing needs action, 1 when a check failed or a pod is stale, uncovered or failing
(--pre: when a check failed; --probes: when a liveness probe restarted pods within the window, or with
--fail-on probes any finding),
2 on bad usage or an unreadable kubeconfig, 3 when the API server cannot be reached or refuses the credentials.`;

/** The flags, parsed: the one place that lists them. */
const parse = (argv: readonly string[]) =>
  parseFlags('analyze', argv, {
    pre: { type: 'boolean' },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
    namespace: { type: 'string', short: 'n' },
    'all-namespaces': { type: 'boolean', short: 'A' },
    output: { type: 'string', short: 'o' },
    'show-covered': { type: 'boolean' },
    'no-dry-run': { type: 'boolean' },
    'dry-run-namespace': { type: 'string' },
    'webhook-config': { type: 'string' },
    'webhook-deployment': { type: 'string' },
    'webhook-namespace': { type: 'string' },
    'request-timeout': { type: 'string' },
    ...PROBES_FLAGS,
  });

type Values = ReturnType<typeof parse>['values'];

/** The combinations no run can mean, refused before any request; the request timeout in seconds. */
function checkFlags(values: Values): number {
  if (!(OUTPUTS as readonly string[]).includes(values.output ?? 'table'))
    throw badFlagValue('--output', values.output, OUTPUTS.join(' or '));
  if (values.namespace !== undefined && values['all-namespaces'] === true) {
    throw usageError('--namespace with --all-namespaces', 'one of them');
  }
  if (values['no-dry-run'] === true && values['dry-run-namespace'] !== undefined) {
    throw usageError('--dry-run-namespace with --no-dry-run', 'one of them');
  }
  // Each goes into a request path: a DNS-1123 label, as Kubernetes requires of a namespace's name, or no request.
  for (const flag of ['namespace', 'dry-run-namespace', 'webhook-namespace'] as const) {
    const value = values[flag];
    if (value !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value))
      throw badFlagValue(
        flag === 'namespace' ? '--namespace/-n' : `--${flag}`,
        value,
        'a namespace name (a DNS-1123 label)',
      );
  }
  if (values.pre === true && values.probes === true) throw usageError('--pre with --probes', 'one of them');
  for (const flag of ['dry-run-namespace', 'show-covered'] as const) {
    if (values.pre === true && values[flag] !== undefined) {
      throw usageError(
        `--${flag} with --pre`,
        '--pre dry-runs in every labelled namespace and lists no pods',
      );
    }
  }
  checkProbesFlags(values);
  const timeoutText = values['request-timeout'] ?? String(DEFAULT_TIMEOUT_SECONDS);
  const timeout = Number(timeoutText);
  if (!/^\d+$/.test(timeoutText) || timeout < 1 || timeout > 600) {
    throw badFlagValue('--request-timeout', timeoutText, 'whole seconds, 1-600');
  }
  return timeout;
}

async function run(argv: readonly string[]): Promise<void> {
  const { values, positionals } = parse(argv);
  noArguments('analyze', positionals);
  const output = values.output ?? 'table';
  const timeout = checkFlags(values);
  boundHeap();
  const client = connect({
    ...(values.kubeconfig === undefined ? {} : { kubeconfig: values.kubeconfig }),
    ...(values.context === undefined ? {} : { context: values.context }),
    timeoutMs: timeout * 1000,
  });
  const namespace = values['all-namespaces'] === true ? undefined : (values.namespace ?? client.namespace);
  if (values.probes === true) return runProbes(values, client, namespace, output === 'json', timeout * 1000);
  if (values.pre === true) {
    // Before install the labelled namespaces are what matter: all of them unless -n names one.
    const report = await readPre(client, {
      namespace: values.namespace,
      webhookConfig: values['webhook-config'] ?? 'osm-healthcheck',
      webhookDeployment: values['webhook-deployment'] ?? 'osm-healthcheck-webhook',
      webhookNamespace: values['webhook-namespace'] ?? 'osm-healthcheck',
      dryRun: values['no-dry-run'] !== true,
    });
    process.stdout.write(output === 'json' ? formatPreJson(report) : formatPreTable(report));
    if (report.needsAction) {
      const failed = report.checks.filter((c) => c.status === 'fail').length;
      throw new HealthcheckError('OSM_HC_ANALYZE', `${failed} failed check(s) before install`);
    }
    return;
  }
  const report = await analyzeCluster(client, {
    namespace,
    webhookConfig: values['webhook-config'] ?? 'osm-healthcheck',
    webhookDeployment: values['webhook-deployment'] ?? 'osm-healthcheck-webhook',
    webhookNamespace: values['webhook-namespace'] ?? 'osm-healthcheck',
    dryRun: values['no-dry-run'] === true ? false : { namespace: values['dry-run-namespace'] },
    now: new Date(),
  });
  process.stdout.write(
    output === 'json' ? formatJson(report) : formatTable(report, values['show-covered'] === true),
  );
  if (report.needsAction) {
    const pods = report.groups.filter((g) => g.needsAction).reduce((n, g) => n + g.pods.length, 0);
    const failed = report.checks.filter((c) => c.status === 'fail').length;
    throw new HealthcheckError(
      'OSM_HC_ANALYZE',
      `${failed} failed check(s), ${pods} pod(s) to restart or look at`,
    );
  }
}

export const analyzeCommand: Command = {
  name: 'analyze',
  usage,
  run,
};
