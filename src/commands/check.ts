// `osm-healthcheck check`: runs every probe of the table once, now, and says what kubelet would conclude and why
// (kubelet keeps only the status of a failed probe, never the companion's reason). Flags -> table -> selection
// -> probes (directly, or through the companion's ports) -> table or JSON on stdout.

import { formatJson, formatTable, passed, summary } from '../check/report.js';
import { runDirect, runViaCompanion } from '../check/run.js';
import { selectEntries } from '../check/select.js';
import { HealthcheckError } from '../errors.js';
import { badFlagValue, flagOrEnv, noArguments, parseFlags, sourceName, usageError } from '../flags.js';
import { parseListenPorts } from '../ports.js';
import { DEFAULT_PORTS, LISTENER_ROLES, PROBE_KINDS, PROBES_ENV } from '../scheme.js';
import { loadProbeTable } from '../table/load.js';
import { type Command, podTargetHost } from './command.js';

const OUTPUTS = ['table', 'json'] as const;

const usage = `Usage: osm-healthcheck check [flags]

Runs every probe of the probe table once, all in parallel, each within its own timeout, and prints one row per
probe: kind, container, the original target, kubelet's verdict (Success, Warning, Failure), status, time
against the probe's budget, and the reason. Run it in the pod:
  kubectl exec POD -c osm-healthcheck -- node /app/dist/cli.mjs check

Flags:
  --probes FILE        probe table JSON file (else env ${PROBES_ENV} holds the JSON itself, as for serve)
  --via-companion      send each probe through the companion's ports, as kubelet does, instead of running it
                       here with the companion's prober: shows a companion that is down or unreachable
  --ports LIST         the companion's liveness,readiness,startup,healthcheck ports, with --via-companion
                       (OSM_HEALTHCHECK_PORTS; default ${LISTENER_ROLES.map((r) => DEFAULT_PORTS[r]).join(',')})
  --kind KIND          only these kinds: ${PROBE_KINDS.join(', ')} (repeat, or comma-separate)
  --container NAME     only these containers (repeat, or comma-separate)
  -o, --output FORMAT  ${OUTPUTS.join(' or ')} (default table)
  --help, --version

Probes go to env POD_IP when set (what kubelet dials), else 127.0.0.1.
Exit status: 0 when every selected probe passes (a Warning passes, as in kubelet), 1 when one fails,
2 on bad usage or a bad probe table.`;

async function run(argv: readonly string[]): Promise<void> {
  const { values, positionals } = parseFlags('check', argv, {
    probes: { type: 'string' },
    'via-companion': { type: 'boolean' },
    ports: { type: 'string' },
    kind: { type: 'string', multiple: true },
    container: { type: 'string', multiple: true },
    output: { type: 'string', short: 'o' },
  });
  noArguments('check', positionals);
  const output = values.output ?? 'table';
  if (!(OUTPUTS as readonly string[]).includes(output)) {
    throw badFlagValue('--output', output, OUTPUTS.join(' or '));
  }
  const via = values['via-companion'] === true;
  if (values.ports !== undefined && !via) {
    throw usageError('--ports without --via-companion', '--ports goes with --via-companion');
  }
  const portsText = via ? flagOrEnv(values.ports, 'OSM_HEALTHCHECK_PORTS') : undefined;
  const portsFrom = sourceName(values.ports, '--ports', 'OSM_HEALTHCHECK_PORTS');
  const ports = portsText === undefined ? { ...DEFAULT_PORTS } : parseListenPorts(portsText, portsFrom);
  if (Object.values(ports).includes(0)) {
    throw badFlagValue(portsFrom, portsText, "the companion's ports; 0 cannot be dialled");
  }
  const host = podTargetHost();
  const table = await loadProbeTable({ file: values.probes, env: process.env[PROBES_ENV] });
  if (table === undefined) {
    throw usageError('no probe table', `pass --probes FILE or set env ${PROBES_ENV}, as for serve`);
  }
  const selected = selectEntries(table, { kinds: values.kind ?? [], containers: values.container ?? [] });

  const rows = via ? await runViaCompanion(selected, host, ports) : await runDirect(selected, host);
  const report = { host, companionPorts: via ? ports : null, rows };
  process.stdout.write(output === 'json' ? formatJson(report) : formatTable(report));
  if (!passed(rows)) throw new HealthcheckError('OSM_HC_CHECK', summary(rows));
}

export const checkCommand: Command = {
  name: 'check',
  usage,
  run,
};
