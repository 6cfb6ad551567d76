# shellcheck shell=bash
# Sourced by the image scripts: `emulate ARCH` makes this kernel run ARCH's binaries, natively or through Debian's
# qemu-user-static registered with binfmt_misc, or fails saying what is missing. The registration must carry the F
# (fix-binary) flag, which Debian's has: the kernel opens qemu when it is registered, so binaries run under it in
# a chroot or a build container, where no qemu is on the path. Needs root to register.

# The qemu name of a Debian architecture.
qemu_arch() {
  case $1 in
    amd64) echo x86_64 ;;
    arm64) echo aarch64 ;;
    *) return 1 ;;
  esac
}

emulate() {
  local arch=$1 qemu entry=
  [ "$arch" = "$(dpkg --print-architecture)" ] && return 0
  qemu=$(qemu_arch "$arch") || { echo "emulation: no qemu for architecture '$arch'" >&2 && return 1; }
  local binfmt=/proc/sys/fs/binfmt_misc
  if [ ! -e "$binfmt/status" ]; then
    mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || {
      echo "emulation: binfmt_misc is not mounted at $binfmt and could not be (as root: mount -t binfmt_misc binfmt_misc $binfmt)" >&2
      return 1
    }
  fi
  entry=$binfmt/qemu-$qemu
  if ! grep -qx enabled "$entry" 2>/dev/null; then
    if ! command -v update-binfmts >/dev/null 2>&1 || ! command -v "qemu-$qemu-static" >/dev/null 2>&1; then
      echo "emulation: $arch binaries need qemu-user-static and binfmt-support (apt-get install qemu-user-static binfmt-support)" >&2
      return 1
    fi
    update-binfmts --enable "qemu-$qemu" >&2 || true
    # Registered but switched off (echo 0 > the entry): update-binfmts sees it registered and does nothing.
    if [ -e "$entry" ] && ! grep -qx enabled "$entry"; then echo 1 >"$entry" || true; fi
  fi
  grep -qx enabled "$entry" 2>/dev/null || {
    echo "emulation: qemu-$qemu is not enabled in binfmt_misc (as root: update-binfmts --enable qemu-$qemu)" >&2
    return 1
  }
  grep -q '^flags: .*F' "$entry" || {
    echo "emulation: qemu-$qemu is registered without the F flag, so it cannot run in a chroot: $(grep flags "$entry")" >&2
    return 1
  }
}
