#!/usr/bin/env bash
# The Dockerfile's build without a Docker engine: its build stage runs here, step for step, in a temp dir; as root
# its runtime stage too (scripts/runtime-root.sh on this machine's Debian packages), and the final stage is laid
# out as the image's root (that, /usr/local/bin/node, /app/dist, /app/init); without root only the final stage's
# own files. It is checked for what must not be in it (npm, node_modules, sources; as root dpkg, apt, perl, and
# that sh, sleep, tini, both iptables backends run in it), and every subcommand runs from it as the image runs
# them (as root chrooted into it): --version, `serve` (as uid 65532, /healthz and a gRPC probe), `wait` and
# `check` against that serve, `inject` (stdin), `webhook` (HTTPS, a throwaway certificate), `/osm-healthcheck
# --verbosity info` as osm-edge's healthcheck container runs it (as root: tini PID 1 in a PID namespace, 15904
# alone in a throwaway netns beside a sidecar stand-in on 15901-15903) and `init --dry-run` (as root, in a
# throwaway netns, with the nft and the legacy backend).
# With --arch ARCH (root only) it builds for that architecture (arm64 on this amd64 machine) under emulation
# (scripts/emulation.sh: qemu-user-static through binfmt_misc): each stage runs chrooted into a stand-in base of
# that architecture (scripts/standin-root.sh: debootstrap, Node's official build), as a builder under emulation
# runs the Dockerfile: the build stage with that Node (serve's V8 code cache is that Node's), the runtime stage's
# apt-get and runtime-root.sh on that architecture's packages; then the same checks, chrooted, under qemu. Under
# qemu user mode nft's netlink sockets are not available, so `init --dry-run` runs the legacy backend only there.
# Cold (the stand-ins made) it takes about 4 minutes on this 2-core machine, warm 40 s; test/image/image.test.ts
# runs it when OSM_HC_IMAGE_ARCHES=arm64, as .ci/run sets it.
# With --rootfs DIR (root only) nothing is built: the same checks run in the root filesystem of a real image
# (scripts/image-measure.sh and scripts/image-index.sh pass their buildah builds'), each command chrooted into it
# as the image runs it, under emulation if its node is of another architecture.
# A build (as root: the runtime root is what makes it the image) ends with the image's SBOM (scripts/sbom.mjs,
# CycloneDX 1.6) written into it at /app/sbom.cdx.json, and the image packed into an OCI image layout
# (scripts/image-pack.mjs: one layer, dated SOURCE_DATE_EPOCH, by default the commit's time), whose digest it prints:
# the same commit and bases give the same digest (test/image/reproducible.test.ts builds twice). --out DIR keeps
# the layout (DIR/oci), the SBOM (DIR/sbom.cdx.json) and the digest (DIR/digest) there.
# --no-checks stops there: a build for its digest and SBOM only (the test's second build of one commit).
# Usage: scripts/image-build.sh [--keep] [--arch ARCH] [--rootfs DIR] [--out DIR] [--no-checks]
#   (--keep leaves the temp dir and says where)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
keep=0
rootfs=
out=
checks=yes
host_arch=$(dpkg --print-architecture 2>/dev/null || uname -m | sed 's/x86_64/amd64/; s/aarch64/arm64/')
arch=$host_arch
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1 && shift ;;
    --arch) arch=$2 && shift 2 ;;
    --rootfs) rootfs=$(cd "$2" && pwd) && shift 2 ;;
    --out) out=$(mkdir -p "$2" && cd "$2" && pwd) && shift 2 ;;
    --no-checks) checks= && shift ;;
    *) echo "usage: $0 [--keep] [--arch ARCH] [--rootfs DIR] [--out DIR] [--no-checks]" >&2 && exit 2 ;;
  esac
done
case $arch in amd64 | arm64) ;; *) echo "image-build: --arch must be amd64 or arm64, got '$arch'" >&2 && exit 2 ;; esac
if [ -n "$out" ] && { [ -n "$rootfs" ] || [ "$(id -u)" != 0 ]; }; then
  echo "image-build: --out needs a build (not --rootfs), as root: without root there is no runtime root to pack" >&2
  exit 2
fi
# The image's time: the commit's, unless the builder gives one (reproducible-builds.org's SOURCE_DATE_EPOCH).
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || true)}
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
# The image's runtime packages: the Dockerfile's runtime stage lays out these (test/image/image.test.ts checks).
runtime_packages=(iptables nftables tini dash coreutils libc6 libstdc++6 libgcc-s1 netbase)

umask 022
work=$(mktemp -d "${TMPDIR:-/tmp}/osm-hc-image.XXXXXX")
# Readable by the image's non-root user, as the image's layers are.
chmod 755 "$work"
netns="ohc-image-$$"
cleanup() {
  # This shell's background jobs still running (the app, a serve or webhook that failed its checks).
  for pid in $(jobs -p); do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$(id -u)" = 0 ]; then ip netns del "$netns" 2>/dev/null || true; fi
  if [ "$keep" = 1 ]; then echo "image-build: kept $work"; else rm -rf "$work" "${files_in_image:-}"; fi
}
trap cleanup EXIT

step() { printf '== %s\n' "$*"; }
fail() {
  printf 'image-build: FAILED: %s\n' "$*" >&2
  exit 1
}
# Waits (up to 10 s) for a JSON log line holding "msg":"$3" in file $1 written by process $2.
await_line() {
  for _ in $(seq 100); do
    grep -q "\"msg\":\"$3\"" "$1" && return 0
    kill -0 "$2" 2>/dev/null || fail "process $2 exited before '$3': $(cat "$1")"
    sleep 0.1
  done
  fail "no '$3' within 10 s: $(cat "$1")"
}
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
# A field of the first line of file $1 holding "msg":"$2", as JSON ($3 is a JavaScript expression on `line`).
field() {
  node -e 'const [file, msg, expr] = process.argv.slice(1);
    const line = JSON.parse(require("node:fs").readFileSync(file, "utf8").split("\n").find((l) => l.includes(`"msg":"${msg}"`)));
    console.log(new Function("line", `return ${expr}`)(line));' "$1" "$2" "$3"
}
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
# "STATUS BODY" of a GET to URL $1; HTTPS trusts the CA file $2.
get() {
  node -e 'const [url, ca] = process.argv.slice(1);
    const mod = require(url.startsWith("https:") ? "node:https" : "node:http");
    const ca_ = ca ? require("node:fs").readFileSync(ca) : undefined;
    mod.get(url, { ca: ca_ }, (res) => { let body = ""; res.on("data", (c) => (body += c));
      res.on("end", () => console.log(`${res.statusCode} ${body.trim()}`)); })
      .on("error", (err) => { console.error(err.message); process.exit(1); });' "$1" "${2:-}"
}
# Sends SIGTERM to $1 and expects exit status 0 (a drained shutdown); $2 is its log.
stop() {
  kill -TERM "$1"
  local status=0
  wait "$1" || status=$?
  [ "$status" = 0 ] || fail "process $1 exited $status on SIGTERM: $(cat "$2")"
}

# The registry is reachable, but a warm cache is faster; the Dockerfile's commands stay word for word the same.
export npm_config_prefer_offline=true npm_config_update_notifier=false

# The build stage's two RUN steps, in its /src: in this shell, or (another architecture) in the stand-in's bash.
build_stage() {
  cd "$1"
  esbuild="$(npm pkg get devDependencies.esbuild)" &&
    npm pkg delete devDependencies &&
    npm pkg set "devDependencies.esbuild=${esbuild}" --json &&
    npm ci --ignore-scripts --no-audit --no-fund
  node scripts/build.mjs
}
# The build stage's COPY steps into $1/src.
copy_sources() {
  mkdir -p "$1/src/scripts"
  cp "$root/package.json" "$root/package-lock.json" "$1/src/"
  cp "$root/tsconfig.json" "$1/src/"
  cp "$root/scripts/build.mjs" "$root/scripts/bundle-options.mjs" "$root/scripts/code-cache.mjs" \
    "$root/scripts/third-party.mjs" "$1/src/scripts/"
  cp -R "$root/licenses" "$1/src/licenses"
  cp -R "$root/src" "$1/src/src"
}

if [ -z "$rootfs" ] && [ "$arch" != "$host_arch" ]; then
  [ "$(id -u)" = 0 ] || fail "--arch $arch needs root: its stand-in bases (debootstrap) and each stage run chrooted, under qemu"
  # shellcheck source=scripts/arch-build.sh
  . "$root/scripts/arch-build.sh"
  arch_build "$arch"
  rootfs=$image built=yes
elif [ -z "$rootfs" ]; then
step "build stage: production dependencies + esbuild (npm ci), then node scripts/build.mjs"
copy_sources "$work"
(build_stage "$work/src")

# The node stage is the Node base, whose binary built dist/ (and so serve's V8 code cache): here, this `node`,
# stripped as the node stage strips it (when binutils is here).
step "node stage: this node, stripped (strip --strip-all)"
image="$work/image"
mkdir -p "$work/node"
cp "$(command -v node)" "$work/node/node"
# Its license, beside it as the official build installs it (bin/../LICENSE), or where Debian's package puts it.
for license in "$(dirname "$(readlink -f "$(command -v node)")")/../LICENSE" /usr/share/doc/nodejs/LICENSE; do
  [ -f "$license" ] && cp "$license" "$work/node/LICENSE" && break
done
[ -f "$work/node/LICENSE" ] || fail "no LICENSE beside $(command -v node) nor in /usr/share/doc/nodejs"
if command -v strip >/dev/null 2>&1; then
  strip --strip-all "$work/node/node"
else
  echo "!!! node not stripped: no strip (binutils) here; the Dockerfile's node stage installs it" >&2
fi

if [ "$(id -u)" = 0 ]; then
  # The runtime stage on this machine's Debian packages (CI's is bookworm, as the image's base), then the final
  # stage on it; the checks below run each command chrooted into it, as they do in a real image's root.
  step "runtime stage: scripts/runtime-root.sh from this machine's packages"
  "$root/scripts/runtime-root.sh" "$image" "${runtime_packages[@]}"
  rootfs=$image built=yes
else
  echo "!!! SKIPPED the runtime stage (scripts/runtime-root.sh) and chroot: they need root (CI runs as root);" \
    "the final stage's files run from here instead" >&2
  mkdir -p "$image/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$image/etc/ssl/certs/" 2>/dev/null || echo "!!! no CA bundle here" >&2
fi
step "final stage: /usr/local/bin/node from the node stage, /app/dist from the build stage, /app/init, /app/supervise.sh, /osm-healthcheck"
mkdir -p "$image/usr/local/bin" "$image/usr/local/share/doc/node" "$image/app"
cp "$work/node/node" "$image/usr/local/bin/node"
cp "$work/node/LICENSE" "$image/usr/local/share/doc/node/LICENSE"
cp -R "$work/src/dist" "$image/app/dist"
cp "$root/LICENSE" "$image/app/LICENSE"
cp -R "$root/init" "$image/app/init"
cp "$root/image/supervise.sh" "$image/app/supervise.sh"
cp "$root/image/osm-healthcheck" "$image/osm-healthcheck"
fi

if [ "${built:-}" = yes ]; then
  # What is in the image, in it; then the image as an OCI layout, before any check runs a command in its root.
  step "SBOM: /app/sbom.cdx.json (CycloneDX 1.6: the bundled npm packages, node, the Debian packages, dist/'s files)"
  node_version=$(chroot "$image" /usr/local/bin/node --version) || fail "node --version in the image failed"
  [ -n "$SOURCE_DATE_EPOCH" ] || fail "no SOURCE_DATE_EPOCH and no git commit to take it from"
  export SOURCE_DATE_EPOCH
  node "$root/scripts/sbom.mjs" --rootfs "$image" --node-version "$node_version" >"$work/sbom.cdx.json" ||
    fail "scripts/sbom.mjs failed"
  cp "$work/sbom.cdx.json" "$image/app/sbom.cdx.json"
  echo "$(grep -c '"purl"' "$work/sbom.cdx.json") components with a purl; node $node_version"
  step "OCI image ($arch): scripts/image-pack.mjs, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH, revision $revision"
  layout=${out:-$work}/oci
  rm -rf "$layout"
  digest=$(node "$root/scripts/image-pack.mjs" "$image" "$layout" "$arch" "$revision") || fail "scripts/image-pack.mjs failed"
  echo "image digest ($arch): $digest"
  if [ -n "$out" ]; then
    cp "$work/sbom.cdx.json" "$out/sbom.cdx.json"
    echo "$digest" >"$out/digest"
    echo "kept: $out/oci (OCI image layout), $out/sbom.cdx.json, $out/digest"
  fi
fi
if [ -z "$checks" ]; then
  echo "image-build: built (--no-checks: no command ran in the image)"
  exit 0
fi

# The image's environment and nothing else; commands run through it as the image's entrypoint (minus tini):
# supervise.sh, which runs serve under its supervision and execs the rest.
# Arrays, not functions: a backgrounded function would be a subshell, and $! its pid rather than the command's.
if [ -z "$rootfs" ]; then
  cli=(sh "$image/app/supervise.sh" "$image/usr/local/bin/node" "$image/app/dist/cli.mjs")
  as_user=()
  files=$work files_host=$work
else
  [ "$(id -u)" = 0 ] || fail "--rootfs needs root (chroot)"
  image=$rootfs
  step "the image's root filesystem: $image"
  # Its architecture is its node's (the ELF header's machine field); another than this machine's runs under qemu.
  case $(od -An -tx1 -j18 -N2 "$image/usr/local/bin/node" | tr -d ' ') in
    3e00) arch=amd64 ;;
    b700) arch=arm64 ;;
    *) fail "$image/usr/local/bin/node is not an amd64 or arm64 ELF binary" ;;
  esac
  if [ "$arch" != "$host_arch" ]; then
    # shellcheck source=scripts/emulation.sh
    . "$root/scripts/emulation.sh"
    emulate "$arch" || fail "cannot run $arch binaries here"
    echo "architecture: $arch, under qemu-$(qemu_arch "$arch") (binfmt_misc)"
  else
    echo "architecture: $arch"
  fi
  # Each command in a private mount namespace with /proc and /dev, chrooted as OHC_USER (if set) into the image.
  # shellcheck disable=SC2016 # expanded by that sh.
  in_image='mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" &&
    exec env -u OHC_USER chroot ${OHC_USER:+--userspec=$OHC_USER} "$0" "$@"'
  run_in=(unshare --mount -- sh -c "$in_image" "$image")
  cli=("${run_in[@]}" /app/supervise.sh /usr/local/bin/node /app/dist/cli.mjs)
  # What runs in the image besides node, run there: a shell and sleep (the webhook's preStop), tini, iptables
  # with both backends and ip6tables (through the update-alternatives links too), nft (the node agent's native
  # nftables backend); and the CA bundle. Under qemu the nft tools (and the iptables links to them) cannot run
  # even --version: they open a netlink socket first, which qemu's user mode does not translate. There they must
  # be present; the legacy ones run.
  emulated=
  [ "$arch" = "$host_arch" ] || emulated=yes
  # shellcheck disable=SC2016 # expanded by the image's sh.
  tools=$(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${run_in[@]}" /bin/sh -c '
    sleep 0 && tini --version && for t in iptables-nft iptables-legacy ip6tables-nft ip6tables-legacy iptables ip6tables \
      iptables-nft-restore iptables-legacy-restore iptables-nft-save iptables-legacy-save nft; do
        case $1$t in
          yes*legacy*) "$t" --version || exit 1 ;;
          yes*) [ -x "$(command -v "$t")" ] && echo "$t: present (not run under qemu: no netlink)" || exit 1 ;;
          *) "$t" --version || exit 1 ;;
        esac
      done &&
    test -s /etc/ssl/certs/ca-certificates.crt && echo "the CA bundle: present"' sh "$emulated" 2>&1) ||
    fail "the image cannot run what it needs: $tools"
  echo "$tools"
  if [ -n "$emulated" ]; then
    echo "/bin/sh, sleep, tini, iptables-legacy, ip6tables-legacy, the CA bundle: run in the image; iptables-nft," \
      "ip6tables-nft, nft: present (under qemu, not run)"
  else
    echo "/bin/sh, sleep, tini, iptables-nft, iptables-legacy, ip6tables, nft, the CA bundle: run in the image"
  fi
  node_arch=$(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "${run_in[@]}" /usr/local/bin/node -p process.arch 2>&1) ||
    fail "node does not run in the image: $node_arch"
  [ "$node_arch" = "${arch/amd64/x64}" ] || fail "node in the image says process.arch $node_arch, expected ${arch/amd64/x64}"
  echo "node in the image: process.arch $node_arch"
  # Only what runs: no package manager, nor perl, which only its maintainer scripts need.
  managers=$(find "$image" -xdev ! -type d \( -name dpkg -o -name 'dpkg-*' -o -name apt -o -name 'apt-*' \
    -o -name perl -o -name 'perl5*' -o -name debconf \) -print)
  [ -z "$managers" ] || fail "the image holds package management: $managers"
  as_user=(OHC_USER=65532:65532)
  # Files the commands read (the webhook's certificate), inside the image, where a chrooted command finds them.
  files_in_image=$(mktemp -d "$image/tmp/osm-hc-smoke.XXXXXX")
  chmod 755 "$files_in_image"
  files=${files_in_image#"$image"} files_host=$files_in_image
fi
unwanted=$(find "$image/app" "$image/usr/local" \( -name npm -o -name npx -o -name corepack -o -name 'yarn*' -o -name node_modules \
  -o -name '@types' -o -name '*.map' -o -name '*.ts' \) -print)
[ -z "$unwanted" ] || fail "the final stage holds what never runs: $unwanted"
echo "size: /app $(du -sh "$image/app" | cut -f1), node $(du -sh "$image/usr/local/bin/node" | cut -f1)"

image_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_ENV=production MALLOC_ARENA_MAX=1)

step "--version"
want=$(node -p "require('$root/package.json').version")
got=$("${image_env[@]}" "${cli[@]}" --version)
[ "$got" = "$want" ] || fail "--version printed '$got', expected '$want'"
echo "$got"

step "serve: as uid 65532, /healthz answers and a gRPC probe of a SERVING app passes"
# The app: bench/app.mjs from the checkout (a gRPC health server answering SERVING), on loopback.
node "$root/bench/app.mjs" >"$work/app.json" 2>&1 &
app_pid=$!
for _ in $(seq 100); do [ -s "$work/app.json" ] && break; sleep 0.1; done
grpc_port=$(node -p "JSON.parse(require('node:fs').readFileSync('$work/app.json', 'utf8')).grpc") ||
  fail "the gRPC app did not start: $(cat "$work/app.json")"
table="{\"startup\":{\"app\":{\"grpc\":{\"port\":$grpc_port}}}}"
log="$work/serve.log"
"${image_env[@]}" OSM_HEALTHCHECK_PORTS=0,0,0,0 OSM_HEALTHCHECK_HOST=127.0.0.1 OSM_HEALTHCHECK_PROBES="$table" \
  "${as_user[@]}" "${cli[@]}" serve >"$log" 2>&1 &
serve_pid=$!
await_line "$log" "$serve_pid" serving
ports=$(field "$log" serving '[line.ports.liveness, line.ports.readiness, line.ports.startup, line.ports.healthcheck].join()')
healthz=$(get "http://127.0.0.1:${ports##*,}/healthz")
startup=$(get "http://127.0.0.1:$(cut -d, -f3 <<<"$ports")/osm-startup-probe/app")
printf '/healthz: %s\n/osm-startup-probe/app: %s\n' "$healthz" "$startup"
[ "$healthz" = "200 ok" ] || fail "/healthz answered '$healthz'"
case $startup in "200 startup app: grpc 127.0.0.1:$grpc_port service \"\" -> SERVING "*) ;; *) fail "the gRPC probe answered '$startup'" ;; esac

step "wait: against that serve's ports"
"${image_env[@]}" OSM_HEALTHCHECK_PORTS="$ports" "${as_user[@]}" "${cli[@]}" wait --timeout 10 ||
  fail "wait did not see serve's /healthz"
echo "wait: ok"

step "check: that serve's table, through the companion"
checked=$("${image_env[@]}" OSM_HEALTHCHECK_PROBES="$table" "${as_user[@]}" "${cli[@]}" check --via-companion \
  --ports "$ports" 2>&1) || fail "check failed: $checked"
echo "$checked" | grep -E '^startup|passed'
# On SIGTERM serve answers probes until the app is gone: stop the app first, as a pod's shutdown does.
kill -TERM "$app_pid"
wait "$app_pid" 2>/dev/null || true
stop "$serve_pid" "$log"

step "inject: a pod through stdin"
injected=$("${image_env[@]}" "${as_user[@]}" "${cli[@]}" inject <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  containers:
    - name: app
      image: app:1
      livenessProbe: {httpGet: {path: /live, port: 8080}}
EOF
) || fail "inject failed: $injected"
grep -q 'path: /osm-liveness-probe/app' <<<"$injected" || fail "inject did not rewrite the probe: $injected"
echo "inject: liveness probe rewritten to /osm-liveness-probe/app"

step "webhook: as uid 65532 with --tls-cert/--tls-key (a throwaway certificate), /healthz over HTTPS, /metrics"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$files_host/tls.key" -out "$files_host/tls.crt" 2>/dev/null ||
  fail "openssl could not make a certificate"
chmod 644 "$files_host/tls.key"
log="$work/webhook.log"
"${image_env[@]}" "${as_user[@]}" "${cli[@]}" webhook --port 0 --metrics-port 0 --host 127.0.0.1 \
  --tls-cert "$files/tls.crt" --tls-key "$files/tls.key" >"$log" 2>&1 &
webhook_pid=$!
await_line "$log" "$webhook_pid" 'webhook serving'
healthz=$(get "https://127.0.0.1:$(field "$log" 'webhook serving' line.port)/healthz" "$files_host/tls.crt")
echo "webhook /healthz: $healthz"
[ "$healthz" = "200 ok" ] || fail "the webhook's /healthz answered '$healthz'"
# prom-client is imported on the first scrape: the bundle in the image must carry it.
metrics=$(get "http://127.0.0.1:$(field "$log" 'webhook serving' line.metricsPort)/metrics" | grep -c '^osm_healthcheck_webhook_build_info{' || true)
echo "webhook /metrics build_info: $metrics"
[ "$metrics" = "1" ] || fail "the webhook's /metrics has no osm_healthcheck_webhook_build_info"
stop "$webhook_pid" "$log"

step "osm-edge's healthcheck container: /osm-healthcheck --verbosity info as uid 65532, tini PID 1, beside a sidecar on 15901-15903"
# What osm-edge's and OSM's injectors write when the healthcheck image is this one: `command: [/osm-healthcheck]`,
# `args: [--verbosity, info]`, port 15904. In a throwaway network namespace (15904 exactly, no clash with this
# machine) whose sidecar stand-in binds 15901-15903 first, as Pipy does, and a new PID namespace, as a container's.
if [ -z "$rootfs" ] || ! command -v ip >/dev/null 2>&1; then
  echo "!!! SKIPPED /osm-healthcheck: it needs root and iproute2 (chroot into the image, a network namespace; CI runs as root)" >&2
else
  ip netns add "$netns"
  ip -n "$netns" link set lo up
  # shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
  ip netns exec "$netns" node -e 'const net = require("node:net"); let up = 0;
    for (const [port, text] of [[15901, "SIDECAR"], [15902, "SIDECAR"], [15903, "SIDECAR"], [8080, "APP"]])
      net.createServer((s) => s.on("error", () => {}).end(`${text}\n`)).listen({ port, host: "::" }, () => ++up === 4 && console.log("ready"));' \
    >"$work/sidecar.log" 2>&1 &
  sidecar_pid=$!
  for _ in $(seq 100); do grep -q ready "$work/sidecar.log" && break; sleep 0.1; done
  grep -q ready "$work/sidecar.log" || fail "the sidecar stand-in did not listen: $(cat "$work/sidecar.log")"
  log="$work/osm-healthcheck.log"
  # shellcheck disable=SC2016 # expanded by that sh.
  in_container='mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" &&
    exec chroot --userspec=65532:65532 "$0" "$@"'
  "${image_env[@]}" ip netns exec "$netns" unshare --mount --pid --fork --kill-child -- \
    sh -c "$in_container" "$image" /osm-healthcheck --verbosity info >"$log" 2>&1 &
  container_pid=$!
  await_line "$log" "$container_pid" 'serving /osm-healthcheck only (osm-edge compat)'
  # shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
  answers=$(ip netns exec "$netns" node -e 'const http = require("node:http"), net = require("node:net");
    const get = (headers) => new Promise((ok) => http.get("http://127.0.0.1:15904/osm-healthcheck",
      { headers: { "user-agent": "kube-probe/1.30", ...headers } }, (res) => { let b = "";
        res.on("data", (c) => (b += c)); res.on("end", () => ok(`${res.statusCode} ${b.trim()}`)); })
      .on("error", (e) => ok(e.message)));
    const read = (port) => new Promise((ok) => { let b = ""; net.connect(port, "127.0.0.1")
      .on("data", (c) => (b += c)).on("end", () => ok(`${port}: ${b.trim()}`)).on("error", (e) => ok(e.message)); });
    (async () => { for (const a of [await get({ "Original-Tcp-Port": "8080" }), await get({ "Original-Tcp-Port": "8081" }),
      await get({}), ...(await Promise.all([15901, 15902, 15903].map(read)))]) console.log(a); })();' 2>&1)
  echo "$answers"
  expected="200 healthcheck: tcp 127.0.0.1:8080 connected in * ms
404 healthcheck: tcp 127.0.0.1:8081 failed: connect ECONNREFUSED 127.0.0.1:8081 *
400 healthcheck: no target port given; *
15901: SIDECAR
15902: SIDECAR
15903: SIDECAR"
  # shellcheck disable=SC2254 # $expected is a pattern.
  case $answers in $expected) ;; *) fail "/osm-healthcheck answered otherwise: $answers" ;; esac
  ports=$(field "$log" 'serving /osm-healthcheck only (osm-edge compat)' 'JSON.stringify(line.ports)')
  echo "listening: $ports"
  [ "$ports" = '{"healthcheck":15904}' ] || fail "/osm-healthcheck listens on $ports, not on 15904 alone"
  grep -q '"level":"debug"' "$log" && fail "--verbosity info logged at debug: $(cat "$log")"
  grep -qi 'tini' "$log" && fail "tini complained (not PID 1?): $(cat "$log")"
  # SIGTERM to the container's PID 1, tini (the one child of unshare), which passes it on. serve answers until the
  # ports it was asked about (8080) stop accepting: the app (in the sidecar stand-in) goes first, then serve
  # drains, exit 0.
  tini_pid=$(cat "/proc/$container_pid/task/$container_pid/children")
  pid1=$(cat "/proc/${tini_pid% }/comm")
  [ "$pid1" = tini ] || fail "the container's PID 1 is $pid1, not tini"
  kill -KILL "$sidecar_pid"
  wait "$sidecar_pid" 2>/dev/null || true
  kill -TERM "${tini_pid% }"
  stop_status=0
  wait "$container_pid" || stop_status=$?
  [ "$stop_status" = 0 ] || fail "/osm-healthcheck exited $stop_status on SIGTERM: $(cat "$log")"
  grep -q '"reason":"app gone"' "$log" || fail "/osm-healthcheck did not wait for the app's port: $(cat "$log")"
  echo "/osm-healthcheck: stopped on SIGTERM, exit 0"
  ip netns del "$netns"
fi

step "init --dry-run (each iptables backend) and node --dry-run --backend nftables: as root with NET_ADMIN, in a throwaway network namespace"
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1; then
  echo "!!! SKIPPED init --dry-run: it needs root and iproute2 (CI runs as root)" >&2
else
  ip netns add "$netns"
  backends=(nft legacy)
  if [ "$arch" != "$host_arch" ]; then
    # qemu user mode does not translate netlink sockets, which the nft backend reads the ruleset through.
    echo "!!! init --dry-run --backend nft NOT RUN: under qemu user mode ($arch on $host_arch) nft's netlink" \
      "sockets are not available; the legacy backend runs instead (on a real $arch node both do)" >&2
    backends=(legacy)
  fi
  for backend in "${backends[@]}"; do
    rules=$("${image_env[@]}" ip netns exec "$netns" "${cli[@]}" init --dry-run --backend "$backend" 2>&1) ||
      fail "init --dry-run --backend $backend failed: $rules"
    echo "$rules"
    case $rules in
      *"# IPv4: iptables-$backend-restore --noflush"*'-A OSM_HEALTHCHECK -p tcp -m tcp --dport 15901:15904 -j ACCEPT'*) ;;
      *) fail "init --dry-run --backend $backend did not print the bypass rule for iptables-$backend-restore" ;;
    esac
  done
  if [ "$arch" = "$host_arch" ]; then
    # The node agent's native nftables backend: nft and its libraries read the namespace's ruleset in the image.
    rules=$("${image_env[@]}" ip netns exec "$netns" "${cli[@]}" node --dry-run --backend nftables \
      --pod-cidr 10.88.0.0/16,fd00:88::/64 2>&1) || fail "node --dry-run --backend nftables failed: $rules"
    echo "$rules"
    case $rules in
      *'# IPv6: nft -f -'*'ip6 daddr fd00:88::/64 tcp dport 15901-15904 meta skuid >= 0 snat to '*) ;;
      *) fail "node --dry-run --backend nftables did not print the IPv6 table's SNAT for nft -f" ;;
    esac
  fi
  ip netns del "$netns"
fi

echo "image-build: ok"
