// Our two containers where the pod has them already: the container inject wants, laid over the copy that is there.
// Between the webhook's first call and its second (reinvocationPolicy: IfNeeded) the API server changes what we
// wrote: defaulting fills fields we leave unset (imagePullPolicy, terminationMessagePath/Policy, ports[].protocol,
// env fieldRef.apiVersion, probe timeoutSeconds/periodSeconds/successThreshold/failureThreshold, resizePolicy:
// k8s.io/kubernetes pkg/apis/core/v1/defaults.go), and the in-tree plugins run again: ServiceAccount mounts its
// token into every container (plugin/pkg/admission/serviceaccount/admission.go, mountServiceAccountToken),
// LimitRanger fills in resources. Rebuilt from scratch, our containers would lose all of that, the second call
// would patch it away, and nothing would put it back (the in-tree plugins run at most twice). So every field we
// set gets our value and every field someone else added stays: our own output comes back unchanged, and a real
// change (a new image, another probe table) is still a difference, patched field by field.

import { isObject, type Json } from '../json.js';
import type { Container } from './types.js';

/**
 * Top-level fields inject writes for one placement and not the other (companion.ts: a native sidecar has
 * `restartPolicy: Always`, a first container the postStart hook). Where the wanted container lacks one, the
 * existing copy's goes too: it is ours, not something the API server added.
 */
export const PLACEMENT_FIELDS: readonly string[] = ['restartPolicy', 'lifecycle'];

/** `wanted`, laid over `existing` (an earlier inject's copy, as the API server returned it), if there is one. */
export function ownedContainer(existing: Container | undefined, wanted: Container): Container {
  if (existing === undefined) return wanted;
  const laid = layOver(existing, wanted) as Container;
  for (const field of PLACEMENT_FIELDS) {
    if (!Object.hasOwn(wanted, field)) delete laid[field];
  }
  return laid;
}

/**
 * Objects: `wanted`'s fields over `existing`'s, `wanted`'s first. Lists of uniquely named objects (env, ports,
 * the lists Kubernetes merges by name): items matched by name, someone else's items kept. A probe's or a hook's
 * handler is ours whole (below). Any other list or value: `wanted`'s as it is (`args`, `capabilities.drop`).
 */
function layOver(existing: unknown, wanted: unknown): unknown {
  if (isObject(existing) && isObject(wanted)) {
    const laid: Json = {};
    for (const [key, value] of Object.entries(wanted)) {
      laid[key] = isHandler(key) ? handler(key, existing[key], value) : layOver(existing[key], value);
    }
    const ownHandler = Object.keys(wanted).some(isHandler);
    for (const [key, value] of Object.entries(existing)) {
      if (Object.hasOwn(laid, key) || (ownHandler && isHandler(key))) continue;
      laid[key] = value;
    }
    return laid;
  }
  if (Array.isArray(existing) && Array.isArray(wanted)) {
    const have = names(existing);
    const want = names(wanted);
    if (have !== undefined && want !== undefined) {
      const kept = existing.map((item, i) => {
        const at = want.indexOf(have[i] as string);
        return at < 0 ? item : layOver(item, wanted[at]);
      });
      return [...kept, ...wanted.filter((_, i) => !have.includes(want[i] as string))];
    }
  }
  return wanted;
}

/** The one-of handlers of a probe (and of a lifecycle hook): exactly one, and ours, is kubelet's target. */
const HANDLERS = ['httpGet', 'tcpSocket', 'grpc', 'exec'] as const;
type Handler = (typeof HANDLERS)[number];

function isHandler(key: string): key is Handler {
  return (HANDLERS as readonly string[]).includes(key);
}

/** What defaulting writes into a handler we left unset (defaults.go SetDefaults_HTTPGetAction). */
const HANDLER_DEFAULTS: Partial<Record<Handler, Json>> = { httpGet: { path: '/', scheme: 'HTTP' } };

/**
 * Another value anywhere in a handler is a different probe (osm-edge's injector, for one, wraps every probe in
 * headers), so only defaulting's own values for fields we left unset survive; everything else is ours.
 */
function handler(key: Handler, existing: unknown, wanted: unknown): unknown {
  if (!isObject(existing) || !isObject(wanted)) return wanted;
  const defaulted = Object.entries(HANDLER_DEFAULTS[key] ?? {}).filter(
    ([field, value]) => !Object.hasOwn(wanted, field) && existing[field] === value,
  );
  return { ...wanted, ...Object.fromEntries(defaulted) };
}

/** The items' names when every item is an object with a name of its own, else undefined. */
function names(items: unknown[]): string[] | undefined {
  const found = items.map((item) =>
    isObject(item) && typeof item.name === 'string' ? item.name : undefined,
  );
  if (found.some((name) => name === undefined)) return undefined;
  const list = found as string[];
  return new Set(list).size === list.length ? list : undefined;
}
