// `osm-healthcheck wait`: returns once the companion's /healthz answers 200, or fails after a bounded time.
// inject makes it the companion's postStart hook: kubelet starts a pod's containers in order and runs each
// postStart hook to its end before starting the next container, so no app container starts (and no probe of
// it reaches 15901-15904) before the companion listens. Istio's holdApplicationUntilProxyStarts does the same.

import { isIP } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { HealthcheckError } from '../errors.js';
import { badFlagValue, flagOrEnv, noArguments, parseFlags, sourceName } from '../flags.js';
import { parseListenPorts } from '../ports.js';
import { DEFAULT_PORTS, LISTENER_ROLES } from '../scheme.js';
import { getHealthz, healthzUrl } from '../wait/healthz.js';
import {
  type Attempt,
  DEFAULT_PLAN,
  giveUpMessage,
  lastToSay,
  nextStep,
  type WaitPlan,
} from '../wait/schedule.js';
import type { Command } from './command.js';

const MAX_TIMEOUT_SECONDS = 3600;

const usage = `Usage: osm-healthcheck wait [flags]

Waits until the companion (osm-healthcheck serve) answers 200 on /healthz, which it does once all four of its
ports listen; exit 0 then. Exit 1, saying what it asked and the last answer, if that does not happen in time.
inject makes this the companion's postStart hook, so the app containers start only once the companion listens.

Flags (each also read from the environment variable shown, as serve reads it; flags win):
  --ports LIST         serve's liveness,readiness,startup,healthcheck ports; /healthz is on the last one
                       (OSM_HEALTHCHECK_PORTS; default ${LISTENER_ROLES.map((r) => DEFAULT_PORTS[r]).join(',')})
  --host ADDRESS       serve's bind address (OSM_HEALTHCHECK_HOST); asked at 127.0.0.1 when it is a wildcard
  --timeout SECONDS    give up after this long (default ${DEFAULT_PLAN.timeoutMs / 1000}, at most ${MAX_TIMEOUT_SECONDS})
  --help, --version`;

function parseTimeout(text: string): number {
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_TIMEOUT_SECONDS) {
    throw badFlagValue('--timeout', text, `seconds, more than 0 and at most ${MAX_TIMEOUT_SECONDS}`);
  }
  return Math.round(seconds * 1000);
}

/** Where serve can be reached from inside the pod: its bind address, or loopback for a wildcard one. */
function dialHost(bind: string | undefined, field: string): string {
  if (bind === undefined || bind === '::' || bind === '0.0.0.0') return '127.0.0.1';
  if (isIP(bind) === 0) {
    throw badFlagValue(field, bind, 'an IP address');
  }
  return bind;
}

async function run(argv: readonly string[]): Promise<void> {
  const { values, positionals } = parseFlags('wait', argv, {
    ports: { type: 'string' },
    host: { type: 'string' },
    timeout: { type: 'string' },
  });
  noArguments('wait', positionals);
  const portsText = flagOrEnv(values.ports, 'OSM_HEALTHCHECK_PORTS');
  const portsFrom = sourceName(values.ports, '--ports', 'OSM_HEALTHCHECK_PORTS');
  const port = (portsText === undefined ? DEFAULT_PORTS : parseListenPorts(portsText, portsFrom)).healthcheck;
  if (port === 0) throw badFlagValue(portsFrom, portsText, 'the real healthcheck port, not 0');
  const host = dialHost(
    flagOrEnv(values.host, 'OSM_HEALTHCHECK_HOST'),
    sourceName(values.host, '--host', 'OSM_HEALTHCHECK_HOST'),
  );
  const plan: WaitPlan = {
    ...DEFAULT_PLAN,
    ...(values.timeout === undefined ? {} : { timeoutMs: parseTimeout(values.timeout) }),
  };
  const url = healthzUrl(host, port);

  const began = performance.now();
  let attempts = 0;
  let lastStart: number | undefined;
  let last: Attempt | undefined;
  for (;;) {
    const elapsed = performance.now() - began;
    const step = nextStep(plan, elapsed, lastStart);
    if (step.action === 'give-up') {
      throw new HealthcheckError('OSM_HC_WAIT', giveUpMessage(url, plan, attempts, last));
    }
    if (step.action === 'sleep') {
      await sleep(step.ms);
      continue;
    }
    lastStart = elapsed;
    attempts += 1;
    const attempt = await getHealthz(host, port, step.timeoutMs);
    last = lastToSay(plan, last, attempt, step.timeoutMs);
    if (attempt.ok) {
      const ms = Math.round(performance.now() - began);
      process.stdout.write(
        `osm-healthcheck wait: ${url} answered 200 after ${ms} ms (attempt ${attempts})\n`,
      );
      return;
    }
    // Once, so a slow start is visible in kubelet's FailedPostStartHook event without flooding it.
    if (attempts === 1 && !attempt.ok) {
      process.stderr.write(`osm-healthcheck wait: waiting for ${url}: ${attempt.reason}\n`);
    }
  }
}

export const waitCommand: Command = {
  name: 'wait',
  usage,
  run,
};
