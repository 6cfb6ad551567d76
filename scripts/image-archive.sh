#!/usr/bin/env bash
# The image as an archive a container runtime imports (`ctr -n k8s.io images import`, `docker load`), for the tests
# on a real node (test/helpers/node-cluster.ts), with no Docker engine and no registry: scripts/image-build.sh lays
# out the image's root and checks it (as root: the runtime stage on this machine's packages, every subcommand run
# from it), then buildah builds FROM scratch over that root with the Dockerfile's final stage's own settings (its
# ENV, WORKDIR, EXPOSE, USER, ENTRYPOINT and CMD lines, copied word for word) and writes a docker-archive naming
# the image NAME. Cached: the archive is named for a hash of everything the build reads (the files image-build.sh
# copies, the Dockerfile, scripts/, this node and this machine's package list), so a second run on the same tree
# prints the same path in a moment. Archives unused for two days are removed.
# Root, buildah. Usage: scripts/image-archive.sh [--name NAME] [--cache DIR]; prints the archive's path, alone, on
# stdout. NAME defaults to localhost/osm-healthcheck:test, DIR to $OSM_HC_IMAGE_ARCHIVES or
# /var/tmp/osm-hc-image-archives.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
name=localhost/osm-healthcheck:test
cache=${OSM_HC_IMAGE_ARCHIVES:-/var/tmp/osm-hc-image-archives}
while [ $# -gt 0 ]; do
  case $1 in
    --name) name=$2 && shift 2 ;;
    --cache) cache=$2 && shift 2 ;;
    *) echo "usage: $0 [--name NAME] [--cache DIR]" >&2 && exit 2 ;;
  esac
done
fail() {
  printf 'image-archive: FAILED: %s\n' "$*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || fail "it needs root: without root image-build.sh lays out only the final stage's own files, no runtime root"
command -v buildah >/dev/null 2>&1 || fail "it needs buildah (apt-get install buildah)"
case $name in *[!a-z0-9./:_-]* | '') fail "--name '$name' is not an image reference (lower case, [a-z0-9./:_-])" ;; esac

# What the build reads. The machine's package list stands for the runtime stage's Debian packages.
key=$(
  cd "$root"
  {
    printf '%s\n' "$name" "$(node --version)"
    find package.json package-lock.json tsconfig.json Dockerfile LICENSE licenses src init image scripts -type f -print0 |
      LC_ALL=C sort -z | xargs -0 sha256sum
    cat /var/lib/dpkg/status 2>/dev/null || true
  } | sha256sum | cut -c1-24
)
mkdir -p "$cache"
archive="$cache/osm-healthcheck-$key.tar"
find "$cache" -maxdepth 1 -name 'osm-healthcheck-*.tar' -mtime +2 -delete 2>/dev/null || true
if [ -s "$archive" ]; then
  touch "$archive"
  echo "image-archive: cached $archive" >&2
  echo "$archive"
  exit 0
fi

export BUILDAH_ISOLATION=chroot
work=$(mktemp -d /var/tmp/osm-hc-image-archive.XXXXXX)
kept=
cleanup() {
  if [ -s "$work/iid" ]; then buildah rmi "$(cat "$work/iid")" >/dev/null 2>&1 || true; fi
  rm -rf "$work" ${kept:+"$kept"}
}
trap cleanup EXIT

echo "image-archive: scripts/image-build.sh --keep (its log: $work/build.log)" >&2
status=0
bash "$root/scripts/image-build.sh" --keep >"$work/build.log" 2>&1 || status=$?
kept=$(sed -n 's/^image-build: kept //p' "$work/build.log" | tail -1)
if [ "$status" != 0 ]; then
  tail -40 "$work/build.log" >&2
  fail "scripts/image-build.sh exited $status"
fi
if [ -z "$kept" ] || [ ! -x "$kept/image/usr/local/bin/node" ]; then
  fail "scripts/image-build.sh left no image root: $(tail -5 "$work/build.log")"
fi

# The final stage's settings, as the Dockerfile writes them (its COPY lines are what image-build.sh laid out).
awk '/^FROM /{final=""} {final=final $0 "\n"} END{printf "%s", final}' "$root/Dockerfile" |
  grep -E '^(ENV|WORKDIR|EXPOSE|USER|ENTRYPOINT|CMD) ' >"$work/settings"
grep -q '\\$' "$work/settings" && fail "a final-stage setting of the Dockerfile continues on the next line; this script copies single lines"
grep -q '^ENTRYPOINT ' "$work/settings" || fail "no ENTRYPOINT in the Dockerfile's final stage"
{
  echo 'FROM scratch'
  echo 'COPY . /'
  cat "$work/settings"
} >"$work/Containerfile"

echo "image-archive: buildah build FROM scratch over the image root, then a docker-archive named $name" >&2
# Untagged in buildah's storage (removed on exit), so the archive names the image NAME alone.
buildah build --quiet --pull-never --layers=false --iidfile "$work/iid" -f "$work/Containerfile" "$kept/image" >/dev/null
buildah push --quiet "$(cat "$work/iid")" "docker-archive:$work/archive.tar:$name" >/dev/null
mv "$work/archive.tar" "$archive"
echo "image-archive: wrote $archive" >&2
echo "$archive"
