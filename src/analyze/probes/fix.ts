// Changes of a workload's containers as the command that makes them: a strategic-merge `kubectl patch` of the
// workload's pod template (containers merge by name, a probe's fields one by one; null removes a handler replaced
// by another), or, where the template cannot be patched (a bare pod, a Job: both immutable), the YAML to put in
// the manifest. One finding's change, or a workload's merged one (merged-change.ts).

import type { Workload } from '../workloads.js';
import type { ContainerChange } from './merged-change.js';

/** Where each patchable kind holds its pod template. */
const TEMPLATE_PATH: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

/** The strategic-merge patch body, or undefined for a kind whose template cannot be patched. */
export function patchBody(
  workload: Workload,
  changes: readonly ContainerChange[],
): Record<string, unknown> | undefined {
  const path = TEMPLATE_PATH[workload.kind];
  if (path === undefined) return undefined;
  const spec: Record<string, unknown[]> = {};
  for (const list of ['initContainers', 'containers'] as const) {
    const named = changes.filter((c) => c.list === list).map((c) => ({ name: c.container, ...c.change }));
    if (named.length > 0) spec[list] = named;
  }
  let body: Record<string, unknown> = { spec };
  for (const key of [...path].reverse()) body = { [key]: body };
  return body;
}

/** `kubectl -n NS patch deployment/web --type=strategic -p '{...}'`, or a YAML snippet for the manifest. */
export function fixText(workload: Workload, changes: readonly ContainerChange[]): string {
  const body = patchBody(workload, changes);
  if (body !== undefined) {
    // JSON has no single quote of its own; one in a value (an HTTP header) is closed, escaped and reopened.
    const json = JSON.stringify(body).replaceAll("'", `'\\''`);
    return `kubectl -n ${workload.namespace} patch ${workload.kind.toLowerCase()}/${workload.name} --type=strategic -p '${json}'`;
  }
  return changes
    .map(
      ({ list, container, change }) =>
        `in the manifest of ${workload.kind}/${workload.name}, ${list}[name=${container}]:\n${yaml(change, '  ')}`,
    )
    .join('\n');
}

function yaml(value: Record<string, unknown>, indent: string): string {
  return Object.entries(value)
    .map(([key, v]) =>
      typeof v === 'object' && v !== null && !Array.isArray(v)
        ? `${indent}${key}:\n${yaml(v as Record<string, unknown>, `${indent}  `)}`
        : `${indent}${key}: ${JSON.stringify(v)}`,
    )
    .join('\n');
}
