// The seal's fixed addresses: the source the node agent SNATs the host's own TCP to 15901-15904 to, per
// family, and the port its proof endpoint listens on. init/rules.sh has the same sources
// (test/init/node-rules.test.ts keeps them equal); docs/security.md#sealed-pods-only-kubelet-gets-in.

/**
 * Istio ambient's host-probe SNAT addresses (istio/istio cni/pkg/config HOST_PROBE_SNAT_ADDRESS and
 * HOST_PROBE_V6_SNAT_ADDRESS): one NetworkPolicy rule admits kubelet's probes under both.
 */
export const SEAL_SOURCES = {
  v4: '169.254.7.127',
  v6: 'fd16:9254:7127:1337:ffff:ffff:ffff:ffff',
} as const;

/** Where the node agent answers init's proof request, on the node's address (hostNetwork). */
export const AGENT_PORT = 15910;

/** The companion port init listens on for the agent's proof connection, before the companion starts. */
export const PROOF_PORT = 15904;
