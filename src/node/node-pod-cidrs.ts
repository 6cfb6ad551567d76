// The agent's pod networks read from its own Node object, when --pod-cidr is not given: spec.podCIDRs (IPv4 and
// IPv6), else the older single spec.podCIDR, as kube-controller-manager's node IPAM (or a cloud's) assigns them.
// A CNI with its own IPAM (Calico's, the AWS VPC CNI) assigns none: then --pod-cidr must say it.

import { HealthcheckError } from '../errors.js';
import { isObject } from '../json.js';
import type { ApiClient } from '../kube/api/client.js';
import { type Cidr, parseCidrs } from './cidr.js';

/** The node's pod networks, or what is missing. Pure. */
export function podCidrsOfNode(node: unknown, name: string): { cidrs: Cidr[] } | { missing: string } {
  const spec = isObject(node) && isObject(node.spec) ? node.spec : {};
  const listed = Array.isArray(spec.podCIDRs) ? spec.podCIDRs.filter((c) => typeof c === 'string') : [];
  const texts = listed.length > 0 ? listed : typeof spec.podCIDR === 'string' ? [spec.podCIDR] : [];
  if (texts.length === 0) {
    return {
      missing:
        `node ${name} has no spec.podCIDRs: its CNI assigns pod addresses itself; ` +
        'give its pod networks with --pod-cidr (env OSM_HEALTHCHECK_POD_CIDR)',
    };
  }
  try {
    return { cidrs: parseCidrs(texts.join(','), `node ${name}'s spec.podCIDRs`) };
  } catch (err) {
    return { missing: (err as Error).message };
  }
}

/** GET the node and read its networks; an OSM_HC_NODE error names the node and what the API server said. */
export async function fetchPodCidrs(client: ApiClient, name: string): Promise<Cidr[]> {
  const reply = await client.get(`/api/v1/nodes/${encodeURIComponent(name)}`).catch((err: Error) => {
    throw new HealthcheckError(
      'OSM_HC_NODE',
      `cannot read node ${name} from ${client.server}: ${err.message}`,
      {
        cause: err,
      },
    );
  });
  if (!reply.ok) {
    throw new HealthcheckError(
      'OSM_HC_NODE',
      `cannot read node ${name}'s pod networks: ${reply.reason}: ${reply.message}` +
        (reply.status === 403 ? ' (the agent needs get on nodes: deploy/node/rbac.yaml)' : ''),
    );
  }
  const read = podCidrsOfNode(reply.body, name);
  if ('missing' in read) throw new HealthcheckError('OSM_HC_NODE', read.missing);
  return read.cidrs;
}
