# shellcheck shell=bash
# shellcheck disable=SC2154 # $root, $work and runtime_packages are image-build.sh's.
# Sourced by scripts/image-build.sh for --arch ARCH other than this machine's: `arch_build ARCH` runs the
# Dockerfile's stages for ARCH as a builder under emulation does, each chrooted into a stand-in base of that
# architecture (scripts/standin-root.sh), every binary in it under qemu (scripts/emulation.sh), and leaves the
# final stage's root in $image. Uses image-build.sh's $root, $work, step, fail, build_stage, copy_sources and
# runtime_packages.

# Runs a command chrooted into $1, in a private mount namespace with /proc, /dev and this machine's npm cache
# (so a rerun downloads nothing it already has); the environment is the image's, plus npm's proxy and CA settings.
in_root() {
  local dir=$1
  shift
  mkdir -p "$dir/root/.npm" "$npm_cache"
  # shellcheck disable=SC2016 # expanded by that sh.
  unshare --mount -- sh -c 'mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" &&
    mount --bind "$1" "$0/root/.npm" && shift && exec chroot "$0" "$@"' "$dir" "$npm_cache" \
    env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    npm_config_prefer_offline=true npm_config_update_notifier=false "${root_env[@]}" "$@"
}

arch_build() {
  local arch=$1 debian node_base runtime_cache
  # shellcheck source=scripts/emulation.sh
  . "$root/scripts/emulation.sh"
  emulate "$arch" || fail "cannot run $arch binaries here"
  npm_cache=$(npm config get cache)
  # This machine's npm proxy and CA (a TLS-inspecting proxy's), which the stand-in's npm needs to reach the registry.
  root_env=()
  for var in HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
    [ -z "${!var:-}" ] || root_env+=("$var=${!var}")
  done
  root_env+=("npm_config_registry=$(npm config get registry)")
  local cafile
  cafile=$(npm config get cafile 2>/dev/null || true)

  step "stand-in bases for $arch: scripts/standin-root.sh (debootstrap under qemu, Node's $arch build; cached)"
  debian=$("$root/scripts/standin-root.sh" "$arch" debian) || fail "no $arch debian stand-in"
  node_base=$("$root/scripts/standin-root.sh" "$arch" node) || fail "no $arch node stand-in"
  echo "debian: $debian"
  echo "node: $node_base"

  step "build stage ($arch, under qemu): production dependencies + esbuild (npm ci), then node scripts/build.mjs"
  cp -a "$node_base" "$work/build"
  copy_sources "$work/build"
  cp -L /etc/resolv.conf "$work/build/etc/resolv.conf"
  if [ -f "$cafile" ]; then
    mkdir -p "$work/build/usr/local/etc"
    cp "$cafile" "$work/build/usr/local/etc/build-ca.crt"
    root_env+=(npm_config_cafile=/usr/local/etc/build-ca.crt)
  fi
  in_root "$work/build" bash -c "$(declare -f build_stage); build_stage /src" || fail "the $arch build stage failed"

  # The node stage as the Dockerfile has it, in the stand-in (this machine's binutils strips only its own
  # architecture's binaries), once per stand-in, as a builder caches a layer: its stripped node is kept beside it.
  local stripped=$node_base.stripped-node
  if [ ! -f "$stripped" ]; then
    step "node stage ($arch, under qemu): apt-get install binutils, then strip --strip-all /usr/local/bin/node"
    cp -a "$node_base" "$work/node-stage"
    cp -L /etc/resolv.conf "$work/node-stage/etc/resolv.conf"
    in_root "$work/node-stage" env DEBIAN_FRONTEND=noninteractive sh -c 'apt-get update \
      && apt-get install -y --no-install-recommends binutils \
      && strip --strip-all /usr/local/bin/node' >"$work/node-stage.log" 2>&1 ||
      fail "the $arch node stage failed: $(tail -5 "$work/node-stage.log")"
    cp "$work/node-stage/usr/local/bin/node" "$stripped.new"
    mv "$stripped.new" "$stripped"
    rm -rf "$work/node-stage"
  fi
  step "node stage ($arch): the stand-in's node, stripped in it (strip --strip-all; cached: $stripped)"
  mkdir -p "$work/node"
  cp "$stripped" "$work/node/node"

  # The runtime stage's apt-get step, as a builder caches a layer: once per stand-in (under qemu, a few minutes).
  runtime_cache=${debian/debian-bookworm-slim-/runtime-}-iptables-nftables-tini-ca-certificates
  if [ ! -d "$runtime_cache" ]; then
    step "runtime stage ($arch, under qemu): apt-get install -y --no-install-recommends iptables nftables tini ca-certificates"
    rm -rf "$runtime_cache.new"
    cp -a "$debian" "$runtime_cache.new"
    cp -L /etc/resolv.conf "$runtime_cache.new/etc/resolv.conf"
    in_root "$runtime_cache.new" env DEBIAN_FRONTEND=noninteractive sh -c 'apt-get update \
      && apt-get install -y --no-install-recommends iptables nftables tini ca-certificates' >"$work/runtime-stage.log" 2>&1 ||
      fail "the $arch runtime stage's apt-get failed: $(tail -5 "$work/runtime-stage.log")"
    mv "$runtime_cache.new" "$runtime_cache"
  fi
  step "runtime stage ($arch, under qemu): runtime-root.sh /rootfs ${runtime_packages[*]} (apt-get's step cached: $runtime_cache)"
  cp -a "$runtime_cache" "$work/runtime"
  cp "$root/scripts/runtime-root.sh" "$work/runtime/usr/local/bin/runtime-root.sh"
  in_root "$work/runtime" runtime-root.sh /rootfs "${runtime_packages[@]}" || fail "the $arch runtime-root.sh failed"
  image=$work/image
  mv "$work/runtime/rootfs" "$image"

  step "final stage: /usr/local/bin/node from the node stage, /app/dist from the build stage, /app/init, /app/supervise.sh, /osm-healthcheck"
  mkdir -p "$image/usr/local/bin" "$image/usr/local/share/doc/node" "$image/app"
  cp "$work/node/node" "$image/usr/local/bin/node"
  cp "$node_base/usr/local/LICENSE" "$image/usr/local/share/doc/node/LICENSE"
  cp -R "$work/build/src/dist" "$image/app/dist"
  cp "$root/LICENSE" "$image/app/LICENSE"
  cp -R "$root/init" "$image/app/init"
  cp "$root/image/supervise.sh" "$image/app/supervise.sh"
  cp "$root/image/osm-healthcheck" "$image/osm-healthcheck"
  rm -rf "$work/build" "$work/runtime"
}
