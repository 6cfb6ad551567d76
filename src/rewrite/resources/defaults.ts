// The companion's (and init container's) resources for one pod: COMPANION_RESOURCES, each value overridable by a
// pod-template annotation. Values are written in the form the API server stores (quantity.ts), so the webhook's
// second call finds them unchanged.

import { describeValue } from '../../errors.js';
import { formatQuantity, parseQuantity, type Quantity } from '../../kube/quantity.js';
import { AnnotationError } from '../manifest-error.js';

export const CPU_REQUEST_ANNOTATION = 'osm-healthcheck/cpu-request';
export const MEMORY_REQUEST_ANNOTATION = 'osm-healthcheck/memory-request';
export const MEMORY_LIMIT_ANNOTATION = 'osm-healthcheck/memory-limit';

/**
 * Measured by `npm run bench -- --fleet --contention` (BENCHMARKS.md, "Fleet memory and CPU contention"; docs/resources.md),
 * Node 24 as in the image, with the lean serve (gRPC on node:http2). Memory request: 1.25 x the companion's working
 * set as kubelet counts it across a fleet of 8 pods, the first pod on a node included (21.8 MiB), rounded up to
 * 8 Mi. Limit: 1.2 x the peak of the worst burst serve admits (256 slow probes in flight on each of its four
 * ports, no limit: 256 MiB), rounded up to 64 Mi. CPU: the smallest request whose probe p99 stayed below 250 ms,
 * with no probe failed, in both runs with every core busy in sibling cgroups weighted by their requests
 * (50m: p99 84 and 88 ms; 20m: 375 and 276 ms; 10m, the old default: 464 and 744 ms). The annotations
 * above override each value.
 */
export const COMPANION_RESOURCES = {
  requests: { cpu: '50m', memory: '32Mi' },
  limits: { memory: '320Mi' },
} as const;

export interface CompanionResources {
  requests: { cpu: string; memory: string };
  limits: { memory: string };
}

/** The `resources` of one of our containers; a CPU limit only where a rule or --companion-cpu-limit asks. */
export interface ContainerResources {
  requests: { cpu: string; memory: string };
  limits: { cpu?: string; memory: string };
}

/** What is wrong with one annotation. */
export interface InvalidAnnotation {
  annotation: string;
  problem: string;
}

type Read = { value: Quantity | undefined } | { invalid: InvalidAnnotation };

function readQuantity(annotations: Readonly<Record<string, string>> | undefined, name: string): Read {
  const raw = annotations?.[name];
  if (raw === undefined) return { value: undefined };
  const parsed = typeof raw === 'string' ? parseQuantity(raw.trim()) : { invalid: 'must be a string' };
  const invalid = (problem: string) => ({
    invalid: { annotation: name, problem: `${problem}, got ${describeValue(raw)}` },
  });
  if ('invalid' in parsed) return invalid(parsed.invalid);
  if (parsed.milli < 0n) return invalid('must not be negative');
  // A zero limit is no limit to the API server's validation but a container nothing can run in.
  if (name === MEMORY_LIMIT_ANNOTATION && parsed.milli === 0n) return invalid('must be more than 0');
  return { value: parsed };
}

function defaultQuantity(text: string): Quantity {
  const parsed = parseQuantity(text);
  if ('invalid' in parsed) throw new Error(`COMPANION_RESOURCES: ${text} ${parsed.invalid}`);
  return parsed;
}

/**
 * The resources, or what is wrong with the annotations (the first problem, naming the annotation). An explicit
 * memory request above an explicit limit is refused, as the API server would refuse the pod ("must be less than
 * or equal to memory limit"). Where only one side is given, the default on the other side moves to meet it, as
 * Kubernetes itself defaults a missing request to the limit: a request above the default limit raises the limit
 * to it, a limit below the default request lowers the request to it. So an accepted annotation never makes a pod
 * the API server refuses.
 */
export function decideResources(
  annotations: Readonly<Record<string, string>> | undefined,
): { resources: CompanionResources } | { invalid: InvalidAnnotation } {
  const cpu = readQuantity(annotations, CPU_REQUEST_ANNOTATION);
  const request = readQuantity(annotations, MEMORY_REQUEST_ANNOTATION);
  const limit = readQuantity(annotations, MEMORY_LIMIT_ANNOTATION);
  if ('invalid' in cpu) return cpu;
  if ('invalid' in request) return request;
  if ('invalid' in limit) return limit;
  const defaults = {
    cpu: defaultQuantity(COMPANION_RESOURCES.requests.cpu),
    request: defaultQuantity(COMPANION_RESOURCES.requests.memory),
    limit: defaultQuantity(COMPANION_RESOURCES.limits.memory),
  };
  let memoryRequest = request.value ?? defaults.request;
  let memoryLimit = limit.value ?? defaults.limit;
  if (memoryRequest.milli > memoryLimit.milli) {
    if (request.value !== undefined && limit.value !== undefined) {
      const asked = `${formatQuantity(request.value)} is above ${MEMORY_LIMIT_ANNOTATION} ${formatQuantity(limit.value)}`;
      const problem = `must be less than or equal to the memory limit: ${asked}`;
      return { invalid: { annotation: MEMORY_REQUEST_ANNOTATION, problem } };
    }
    if (request.value !== undefined) memoryLimit = request.value;
    else memoryRequest = memoryLimit;
  }
  return {
    resources: {
      requests: { cpu: formatQuantity(cpu.value ?? defaults.cpu), memory: formatQuantity(memoryRequest) },
      limits: { memory: formatQuantity(memoryLimit) },
    },
  };
}

/**
 * decideResources' verdict on the annotations alone, as an error naming the annotation, as for
 * `osm-healthcheck/run-to-completion`: checked whether or not the pod has probes for the companion.
 */
export function checkResourceAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
  resource: string,
): void {
  const decided = decideResources(annotations);
  if ('invalid' in decided)
    throw new AnnotationError(resource, decided.invalid.annotation, decided.invalid.problem);
}

/**
 * --companion-cpu-limit (inject; the webhook's flag and chart value the same): a quantity above 0, in the form
 * the API server stores, or what is wrong with it.
 */
export function readCompanionCpuLimit(text: string): { value: string } | { invalid: string } {
  const parsed = parseQuantity(text.trim());
  if ('invalid' in parsed) {
    // parseQuantity says `must be a Kubernetes quantity, e.g. ...` or `is too large ...`; the flag's error gives
    // the examples in its accepted part.
    const problem = parsed.invalid.startsWith('is ') ? parsed.invalid : 'is no Kubernetes quantity';
    return { invalid: `${describeValue(text)} ${problem}` };
  }
  if (parsed.milli <= 0n) return { invalid: `${describeValue(text)} is not more than 0` };
  return { value: formatQuantity(parsed) };
}
