// serve --osm-edge-compat answers as osm-edge's and OSM's own healthcheck binary does, where kubelet can tell.

import type { Prober } from '../probe/run.js';

/**
 * Theirs answers a TCP check it cannot connect with 404 (osm-edge and OSM cmd/osm-healthcheck healthcheckHandler:
 * `setHealthcheckResponse(w, http.StatusNotFound, …)`), and kubelet's event names that status: in their container
 * ours answers the same status, with our reason as the body.
 */
export function osmEdgeProber(prober: Prober): Prober {
  return async (handler, target, userAgent) => {
    const result = await prober(handler, target, userAgent);
    return handler.type === 'tcpSocket' && result.verdict === 'failure' ? { ...result, status: 404 } : result;
  };
}
