#!/usr/bin/env bash
# The Dockerfile's build without a Docker engine: its build and deps stages run here, step for step, in a temp
# dir; the result is laid out as the image's /app and run as the image would run it: --version, `serve` (as
# uid 65532, /healthz and a gRPC probe answered) and `init --dry-run` (as root, in a throwaway netns).
# Usage: scripts/image-build.sh [--keep]   (--keep leaves the temp dir and prints where it is)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
keep=0
[ "${1:-}" = --keep ] && keep=1

umask 022
work=$(mktemp -d "${TMPDIR:-/tmp}/osm-hc-image.XXXXXX")
# Readable by the image's non-root user, as the image's layers are.
chmod 755 "$work"
netns="ohc-image-$$"
serve_pid=
cleanup() {
  if [ -n "$serve_pid" ]; then kill -KILL "$serve_pid" 2>/dev/null || true; fi
  if [ "$(id -u)" = 0 ]; then ip netns del "$netns" 2>/dev/null || true; fi
  if [ "$keep" = 1 ]; then echo "image-build: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

step() { printf '== %s\n' "$*"; }
fail() {
  printf 'image-build: FAILED: %s\n' "$*" >&2
  exit 1
}

# The registry is reachable, but a warm cache is faster; the Dockerfile's commands stay word for word the same.
export npm_config_prefer_offline=true npm_config_update_notifier=false

step "build stage: production dependencies + esbuild (npm ci), then node scripts/build.mjs"
mkdir -p "$work/src/scripts"
cp "$root/package.json" "$root/package-lock.json" "$work/src/"
(
  cd "$work/src"
  esbuild="$(npm pkg get devDependencies.esbuild)" &&
    npm pkg delete devDependencies &&
    npm pkg set "devDependencies.esbuild=${esbuild}" --json &&
    npm ci --ignore-scripts --no-audit --no-fund
)
cp "$root/tsconfig.json" "$work/src/"
cp "$root/scripts/build.mjs" "$root/scripts/bundle-options.mjs" "$work/src/scripts/"
cp -R "$root/src" "$work/src/src"
(cd "$work/src" && node scripts/build.mjs)

step "deps stage: production dependencies only (npm ci --omit=dev)"
mkdir -p "$work/deps"
cp "$root/package.json" "$root/package-lock.json" "$work/deps/"
(
  cd "$work/deps"
  npm pkg delete devDependencies &&
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund
)

step "final stage: /app = package.json, node_modules, dist, init"
app="$work/app"
mkdir -p "$app"
cp "$work/deps/package.json" "$app/package.json"
cp -R "$work/deps/node_modules" "$app/node_modules"
cp -R "$work/src/dist" "$app/dist"
cp -R "$root/init" "$app/init"
for dev in esbuild vitest typescript @biomejs; do
  [ ! -e "$app/node_modules/$dev" ] || fail "dev dependency $dev is in the runtime node_modules"
done
for runtime in @grpc/grpc-js grpc-health-check; do
  [ -e "$app/node_modules/$runtime" ] || fail "$runtime (loaded at run time, outside the bundle) is missing"
done
echo "size: $(du -sh "$app" | cut -f1) (node_modules $(du -sh "$app/node_modules" | cut -f1))"

# The image's environment and nothing else; commands run through it as the image's entrypoint (minus tini).
# An array, not a function: a backgrounded function would be a subshell, and $! its pid rather than serve's.
image_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_ENV=production)
cli=("$(command -v node)" "$app/dist/cli.mjs")

step "--version"
want=$(node -p "require('$root/package.json').version")
got=$("${image_env[@]}" "${cli[@]}" --version)
[ "$got" = "$want" ] || fail "--version printed '$got', expected '$want'"
echo "$got"

step "serve: as uid 65532, /healthz answers and a gRPC probe runs (gRPC loads from node_modules)"
as_user=()
if [ "$(id -u)" = 0 ]; then as_user=(setpriv --reuid=65532 --regid=65532 --clear-groups); fi
log="$work/serve.log"
# Port 9 (discard) has no gRPC server: the probe must fail with 503, which takes gRPC loaded and running.
table='{"startup":{"app":{"grpc":{"port":9}}}}'
"${image_env[@]}" OSM_HEALTHCHECK_PORTS=0,0,0,0 OSM_HEALTHCHECK_HOST=127.0.0.1 OSM_HEALTHCHECK_PROBES="$table" \
  "${as_user[@]}" "${cli[@]}" serve >"$log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do
  grep -q '"msg":"serving"' "$log" && break
  kill -0 "$serve_pid" 2>/dev/null || fail "serve exited: $(cat "$log")"
  sleep 0.1
done
grep -q '"msg":"serving"' "$log" || fail "serve did not log its start-up line within 10 s: $(cat "$log")"
# The start-up line names the ports it bound; /healthz is on the healthcheck (4th) port.
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
node -e '
  const line = require("node:fs").readFileSync(process.argv[1], "utf8").split("\n").find((l) => l.includes("\"msg\":\"serving\""));
  const { ports } = JSON.parse(line);
  const get = async (port, path) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return `${res.status} ${(await res.text()).trim()}`;
  };
  (async () => {
    const healthz = await get(ports.healthcheck, "/healthz");
    const startup = await get(ports.startup, "/osm-startup-probe/app");
    console.log(`/healthz: ${healthz}\n/osm-startup-probe/app: ${startup}`);
    if (!healthz.startsWith("200 ")) throw new Error(`/healthz answered ${healthz}`);
    if (!/^503 startup app: grpc /.test(startup)) throw new Error(`the gRPC probe answered ${startup}`);
  })().catch((err) => { console.error(err.message); process.exit(1); });
' "$log" || fail "serve answered wrongly; its log: $(cat "$log")"
kill -TERM "$serve_pid"
status=0
wait "$serve_pid" || status=$?
serve_pid=
[ "$status" = 0 ] || fail "serve exited $status on SIGTERM: $(cat "$log")"

step "init --dry-run: as root with NET_ADMIN, in a throwaway network namespace"
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
  echo "!!! SKIPPED init --dry-run: it needs root and iproute2 (CI runs as root)" >&2
else
  ip netns add "$netns"
  rules=$("${image_env[@]}" ip netns exec "$netns" "${cli[@]}" init --dry-run 2>&1) || fail "init --dry-run failed: $rules"
  ip netns del "$netns"
  echo "$rules"
  case $rules in
    *'-A OSM_HEALTHCHECK -p tcp -m tcp --dport 15901:15904 -j ACCEPT'*) ;;
    *) fail "init --dry-run did not print the bypass rule" ;;
  esac
fi

echo "image-build: ok"
