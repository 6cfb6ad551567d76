// The User-Agent of kubelet's gRPC probe. kubelet's prober (pkg/probe/grpc/grpc.go) dials with
// grpc.WithUserAgent("kube-probe/<major>.<minor>"), and grpc-go appends its own token (clientconn.go:
// `UserAgent + " " + grpcUA`, grpcUA = "grpc-go/" + Version), so an app sees `kube-probe/1.36 grpc-go/1.79.3`.
// The companion learns kubelet's x.y from the probe it answers; the grpc-go version is the one that kubelet
// release was built with.

/**
 * google.golang.org/grpc in the go.mod of each Kubernetes release x.y.0. Read from the tags v0.<minor>.0 of
 * github.com/kubernetes/kubelet, the published copy of kubernetes/kubernetes' staging/src/k8s.io/kubelet, whose
 * go.mod carries the root go.mod's pins (hack/update-vendor.sh): kubernetes/kubernetes' own go.mod at 1.28 says
 * v1.54.0 as well, and a 1.36.3 kubelet was seen sending `kube-probe/1.36 grpc-go/1.79.3`. Some patch releases
 * moved on (1.26.11+, 1.27.8+ and 1.28.4+ carry v1.56.3); kubelet's User-Agent names no patch, so the .0 stands.
 */
const GRPC_GO_BY_MINOR: ReadonlyMap<number, string> = new Map([
  [23, '1.40.0'], // v0.23.0: gRPC probes arrive, alpha (GRPCContainerProbe)
  [24, '1.40.0'], // v0.24.0
  [25, '1.47.0'], // v0.25.0
  [26, '1.49.0'], // v0.26.0
  [27, '1.51.0'], // v0.27.0
  [28, '1.54.0'], // v0.28.0; kubernetes/kubernetes go.mod at 0004ce8 (1.28) agrees
  [29, '1.58.3'], // v0.29.0
  [30, '1.58.3'], // v0.30.0
  [31, '1.65.0'], // v0.31.0
  [32, '1.65.0'], // v0.32.0
  [33, '1.68.1'], // v0.33.0
  [34, '1.72.1'], // v0.34.0
  [35, '1.72.2'], // v0.35.0
  [36, '1.79.3'], // v0.36.0 (kubernetes/kubernetes#137906 pinned it in March 2026)
]);
// The table's two ends, for a kubelet outside it.
const OLDEST = { minor: 23, grpcGo: '1.40.0' };
const NEWEST_GRPC_GO = '1.79.3';

const KUBE_PROBE = /^kube-probe\/(\d+)\.(\d+)$/;

/**
 * `kube-probe/x.y` -> `kube-probe/x.y grpc-go/<the version kubelet x.y carries>`. A kubelet newer than the table
 * gets the newest known version (the closest guess until the table learns it); one older than 1.23 never sent a
 * gRPC probe itself (it only runs our rewritten HTTP one), so no version is its own and the oldest known stands.
 * Any other User-Agent is not kubelet's and is sent as it is.
 */
export function grpcUserAgent(kubeProbe: string): string {
  const match = KUBE_PROBE.exec(kubeProbe);
  if (match === null) return kubeProbe;
  // Minor versions of Kubernetes 1: a 2.x would be newer than every 1.x, a 0.x older.
  const major = Number(match[1]);
  const minor = major === 1 ? Number(match[2]) : major > 1 ? Number.POSITIVE_INFINITY : 0;
  const grpcGo = minor < OLDEST.minor ? OLDEST.grpcGo : (GRPC_GO_BY_MINOR.get(minor) ?? NEWEST_GRPC_GO);
  return `${kubeProbe} grpc-go/${grpcGo}`;
}
