#!/bin/sh
# The image's runtime root (BENCHMARKS.md "Image size and start-up"): from this Debian system's installed packages, a
# directory holding exactly the files of PKG... and their dependency closure (Pre-Depends + Depends), and what
# running them needs besides: the update-alternatives links to those files (iptables, ip6tables), the usrmerge
# links, /etc/ld.so.cache, /etc/passwd and /etc/group (root, the companion's uid 65532), /etc/nsswitch.conf,
# /tmp, the CA bundle, /etc/os-release, and /var/lib/dpkg/status listing exactly the packages copied, so image
# scanners still see each one and its version. The Dockerfile's runtime stage runs it; the final stage is that
# directory on an empty base. test/image/runtime-root.test.ts runs it on the test machine's packages.
# Left out: packages that only maintainer scripts and package management need (dpkg, apt, debconf, perl-base;
# debianutils, which dash depends on for add-shell), and docs (but copyrights), man pages, info, locales and
# glibc's gconv modules (see below).
# Usage: scripts/runtime-root.sh DEST PKG...   (DEST must not exist yet)
set -eu

usage() {
  echo "usage: $0 DEST PKG..." >&2
  exit 2
}
fail() {
  echo "runtime-root: $*" >&2
  exit 1
}
[ $# -ge 2 ] || usage
dest=$1
shift
[ ! -e "$dest" ] || fail "$dest exists: give a new directory"
umask 022

# Never copied, nor followed into: what only runs when packages are installed or removed. dash depends on dpkg
# (dpkg-divert) and debianutils (add-shell) for its maintainer scripts only.
without=" dpkg apt debconf perl-base debianutils "

# installed NAME: the installed package of that name (arch-qualified as dpkg knows it), else its first
# installed provider (a virtual package), else nothing.
installed() {
  found=$(dpkg-query -W -f='${db:Status-Status} ${binary:Package}\n' "$1" 2>/dev/null |
    sed -n 's/^installed //p' | head -1)
  if [ -z "$found" ]; then
    found=$(dpkg-query -W -f='${db:Status-Status} ${binary:Package} ${Provides}\n' |
      awk -v want="$1" '$1 == "installed" { for (i = 3; i <= NF; i++) { p = $i; sub(/,$/, "", p); if (p == want) { print $2; exit } } }')
  fi
  echo "$found"
}

# The closure: a breadth-first walk over Pre-Depends and Depends; of alternatives (a | b) the first installed.
packages=
queue=$*
while [ -n "$queue" ]; do
  # shellcheck disable=SC2086 # a list of package names, split on purpose.
  set -- $queue
  name=${1%%:*}
  shift
  queue=$*
  case $without in *" $name "*) continue ;; esac
  pkg=$(installed "$name")
  [ -n "$pkg" ] || fail "$name is not installed (nor provided by an installed package)"
  case " $packages " in *" $pkg "*) continue ;; esac
  packages="$packages $pkg"
  deps=$(dpkg-query -W -f='${Pre-Depends}, ${Depends}\n' "$pkg" | tr ',' '\n')
  while IFS= read -r dep; do
    # Versions and arch qualifiers dropped: what is installed satisfied them when it was installed.
    choices=$(printf '%s\n' "$dep" | sed -e 's/([^)]*)//g' -e 's/:[a-z0-9]*//g' | tr '|' ' ')
    case $choices in *[!\ ]*) ;; *) continue ;; esac
    chosen=
    for choice in $choices; do
      case $without in *" $choice "*) chosen=$choice && break ;; esac
      if [ -n "$(installed "$choice")" ]; then chosen=$choice && break; fi
    done
    [ -n "$chosen" ] || fail "$pkg depends on '$dep': none of it is installed"
    queue="$queue $chosen"
  done <<EOF
$deps
EOF
done

# The usrmerge links (/bin -> usr/bin ...) as here, so that packages' /lib and /bin paths land under /usr.
mkdir -p "$dest/usr"
for alias in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$alias" ]; then
    mkdir -p "$dest/$(readlink "/$alias")"
    ln -s "$(readlink "/$alias")" "$dest/$alias"
  fi
done

# Each package's files that are here (the base's dpkg excludes may have dropped docs already), minus docs but
# copyrights, man pages, info and locales; tar keeps modes, owners and symlinks, and the usrmerge links above.
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for pkg in $packages; do
  dpkg-query -L "$pkg" | grep '^/' | while IFS= read -r path; do
    case $path in
      /. | /bin | /sbin | /lib | /lib32 | /lib64 | /libx32) continue ;;
      /usr/share/doc/*/copyright) ;;
      /usr/share/doc/* | /usr/share/doc-base/* | /usr/share/man/* | /usr/share/info/* | /usr/share/locale/* | \
        /usr/share/lintian/* | /usr/share/bug/*) continue ;;
      # glibc's gconv modules: iconv(3) and non-UTF-8 locales load them, and nothing here calls iconv (Node
      # converts with its own ICU; no locale is in the image). 8 MB, 2.9 MB compressed: what the size target
      # misses without. iconv's built-in charsets (UTF-8, ASCII, ISO-8859-1, UCS-2/4, UTF-16/32) still work.
      /usr/lib/*/gconv | /usr/lib/*/gconv/*) continue ;;
    esac
    if [ -e "$path" ] || [ -L "$path" ]; then printf '%s\n' "${path#/}"; fi
  done
done >"$list"
tar -C / --no-recursion -cf - -T "$list" | tar -C "$dest" --keep-directory-symlink -xpf -

# update-alternatives links (iptables -> iptables-nft ...) whose chosen file was copied: /etc/alternatives/NAME
# and the link to it. dpkg's record of each: mode, then the master link, then slave name/link pairs, then "".
for record in /var/lib/dpkg/alternatives/*; do
  [ -f "$record" ] || continue
  {
    read -r _mode
    read -r link
    printf '%s %s\n' "${record##*/}" "$link"
    while read -r slave && [ -n "$slave" ]; do
      read -r slave_link
      printf '%s %s\n' "$slave" "$slave_link"
    done
  } <"$record"
done | while read -r name link; do
  target=$(readlink "/etc/alternatives/$name" 2>/dev/null) || continue
  if [ -e "$dest$target" ] && [ -L "$link" ]; then
    mkdir -p "$dest/etc/alternatives" "$dest$(dirname "$link")"
    cp -P "/etc/alternatives/$name" "$dest/etc/alternatives/$name"
    cp -P "$link" "$dest$link"
  fi
done

# The shared-library cache for the libraries copied (links as the packages made them: -X).
ldconfig -X -r "$dest"

# Root, and the companion's non-root user (COMPANION_UID in src/scheme.ts; the image's USER).
printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nonroot:x:65532:65532:nonroot:/nonexistent:/bin/false' \
  >"$dest/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$dest/etc/group"
# glibc's lookups from files only (and DNS for hosts): no NSS module beyond glibc's own is in the image.
printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'hosts: files dns' 'networks: files' \
  'protocols: files' 'services: files' >"$dest/etc/nsswitch.conf"
# /proc, /sys and /dev: where a runtime (or image-build.sh --rootfs) mounts them.
mkdir -p "$dest/tmp" "$dest/proc" "$dest/sys" "$dest/dev"
chmod 1777 "$dest/tmp"

# The system trust store, for TLS clients told to use it (Node's bundled store is the default), without the
# ca-certificates package's openssl: only the bundle update-ca-certificates wrote.
[ -f /etc/ssl/certs/ca-certificates.crt ] || fail "no /etc/ssl/certs/ca-certificates.crt: install ca-certificates"
mkdir -p "$dest/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$dest/etc/ssl/certs/"

# Which distribution this is, for scanners matching the packages below against its advisories (base-files).
mkdir -p "$dest/usr/lib"
cp /usr/lib/os-release "$dest/usr/lib/os-release"
cp -P /etc/os-release /etc/debian_version "$dest/etc/"
packages="$packages $(installed base-files)"

# dpkg's status database holding exactly the packages copied, each record as dpkg has it here.
mkdir -p "$dest/var/lib/dpkg"
for pkg in $packages; do
  dpkg-query -s "$pkg"
  echo
done >"$dest/var/lib/dpkg/status"
echo "runtime-root: $dest:$packages"
