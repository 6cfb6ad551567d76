#!/usr/bin/env bash
# The multi-architecture image from the one Dockerfile, with buildah: builds it for linux/amd64 and, under qemu
# (scripts/emulation.sh), linux/arm64 against local stand-ins for the public bases (scripts/standin-root.sh
# --image: its roots, imported into buildah's storage once), puts both images in one OCI image index (buildah
# manifest create, manifest add), checks that `buildah manifest inspect` lists both platforms, pushes the index with both images to
# an OCI archive in a temp dir (what `buildah manifest push --all ... docker://REGISTRY/...` sends a registry) and
# reads the platforms back from it, and runs every subcommand from each image's root (scripts/image-build.sh
# --rootfs; arm64's under qemu). docs/image.md says how to push it to a registry, with buildah or docker buildx.
# Not part of `npm test`: it needs root, buildah, debootstrap, qemu-user-static and binfmt-support, Debian's mirror
# and the npm registry; here about 8 minutes cold (the stand-ins, their import, both builds), 2 to 5 warm.
# Usage: scripts/image-index.sh [--keep]   (--keep leaves the images, the index and the archive, and says where)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
keep=0
case ${1:-} in
  --keep) keep=1 ;;
  '') ;;
  *) echo "usage: $0 [--keep]" >&2 && exit 2 ;;
esac
fail() {
  printf 'image-index: FAILED: %s\n' "$*" >&2
  exit 1
}
step() { printf '== %s\n' "$*"; }
[ "$(id -u)" = 0 ] || fail "run it as root (buildah with --isolation chroot, debootstrap, chroot)"
for tool in buildah debootstrap node npm unshare; do
  command -v "$tool" >/dev/null 2>&1 || fail "it needs $tool"
done
# shellcheck source=scripts/emulation.sh
. "$root/scripts/emulation.sh"
arches=(amd64 arm64)
for arch in "${arches[@]}"; do emulate "$arch" || fail "cannot run $arch binaries here"; done

# chroot isolation: RUN steps need no user namespaces and no OCI runtime, which a sandbox may not allow.
export BUILDAH_ISOLATION=chroot
INDEX=localhost/osm-healthcheck:index
work=$(mktemp -d /var/tmp/osm-hc-index.XXXXXX)
containers=()
cleanup() {
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  if [ "$keep" = 1 ]; then
    echo "image-index: kept $INDEX, localhost/osm-healthcheck:{amd64,arm64} and $work"
  else
    buildah manifest rm "$INDEX" >/dev/null 2>&1 || true
    buildah rmi localhost/osm-healthcheck:amd64 localhost/osm-healthcheck:arm64 >/dev/null 2>&1 || true
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# npm's own CA, if it has one, for the build's RUN steps only (scripts/build-trust.sh).
# shellcheck source=scripts/build-trust.sh
. "$root/scripts/build-trust.sh"
build_trust "$work"

buildah manifest rm "$INDEX" >/dev/null 2>&1 || true
step "buildah manifest create $INDEX"
buildah manifest create "$INDEX" >/dev/null
for arch in "${arches[@]}"; do
  step "stand-in bases for $arch (scripts/standin-root.sh, imported into buildah's storage)"
  debian=$("$root/scripts/standin-root.sh" --image "$arch" debian) || fail "no $arch debian stand-in"
  node_base=$("$root/scripts/standin-root.sh" --image "$arch" node) || fail "no $arch node stand-in"
  echo "DEBIAN_IMAGE=$debian NODE_IMAGE=$node_base"
  step "buildah build --platform linux/$arch -t localhost/osm-healthcheck:$arch"
  start=$SECONDS
  buildah build --quiet --pull-never --platform "linux/$arch" "${trust[@]}" --build-arg NODE_IMAGE="$node_base" \
    --build-arg DEBIAN_IMAGE="$debian" -t "localhost/osm-healthcheck:$arch" "$root" >"$work/build-$arch.log" 2>&1 ||
    fail "build linux/$arch: $(tail -20 "$work/build-$arch.log")"
  echo "built in $((SECONDS - start)) s"
  step "buildah manifest add $INDEX localhost/osm-healthcheck:$arch"
  buildah manifest add "$INDEX" "localhost/osm-healthcheck:$arch" >/dev/null
done

step "buildah manifest inspect $INDEX: one image per platform"
buildah manifest inspect "$INDEX" >"$work/index.json"
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
platforms() {
  node -e 'const index = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    console.log(index.manifests.map((m) => `${m.platform.os}/${m.platform.architecture}`).sort().join(" "));' "$1"
}
got=$(platforms "$work/index.json")
echo "$got"
[ "$got" = "linux/amd64 linux/arm64" ] || fail "the index lists '$got', expected linux/amd64 linux/arm64"

step "buildah manifest push --all $INDEX oci-archive:$work/osm-healthcheck.tar (as to a registry, here a file)"
buildah manifest push --quiet --all "$INDEX" "oci-archive:$work/osm-healthcheck.tar" >/dev/null
mkdir -p "$work/pushed"
tar -xf "$work/osm-healthcheck.tar" -C "$work/pushed"
# The archive's index.json points at the image index; each of its manifests at a config naming the architecture.
# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions.
pushed=$(node -e 'const fs = require("node:fs"); const dir = process.argv[1];
  const blob = (d) => JSON.parse(fs.readFileSync(`${dir}/blobs/${d.replace(":", "/")}`, "utf8"));
  const top = JSON.parse(fs.readFileSync(`${dir}/index.json`, "utf8")).manifests[0];
  const index = top.mediaType.endsWith("index.v1+json") || top.mediaType.endsWith("list.v2+json") ? blob(top.digest) : null;
  if (!index) { console.error(`the archive holds ${top.mediaType}, not an image index`); process.exit(1); }
  console.log(index.manifests.map((m) => { const config = blob(blob(m.digest).config.digest);
    return `${m.platform.os}/${m.platform.architecture}=${config.os}/${config.architecture}`; }).sort().join(" "));' \
  "$work/pushed") || fail "the pushed archive: $pushed"
echo "$pushed ($(du -h "$work/osm-healthcheck.tar" | cut -f1))"
[ "$pushed" = "linux/amd64=linux/amd64 linux/arm64=linux/arm64" ] ||
  fail "the pushed index lists '$pushed', expected each platform's image"

for arch in "${arches[@]}"; do
  step "every subcommand from the linux/$arch image (scripts/image-build.sh --rootfs)"
  ctr=$(buildah from --pull-never --arch "$arch" "localhost/osm-healthcheck:$arch")
  containers+=("$ctr")
  bash "$root/scripts/image-build.sh" --rootfs "$(buildah mount "$ctr")" >"$work/smoke-$arch.log" 2>&1 ||
    fail "linux/$arch: $(tail -20 "$work/smoke-$arch.log")"
  grep -E '^architecture|process.arch|NOT RUN|image-build: ok' "$work/smoke-$arch.log"
done
echo "image-index: ok"
