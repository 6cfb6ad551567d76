# shellcheck shell=bash disable=SC2034 # `trust` is read by the script that sources this one
# Sourced by the buildah scripts (image-measure.sh, image-index.sh). This machine's npm may trust a CA of its own
# (a TLS-inspecting proxy): the build's RUN steps get it through a global npmrc, in a directory mounted over
# /usr/local/etc (there, empty, in both bases) for the build only, so no layer holds it: a file mounted where none
# was would leave an empty one behind.
# build_trust DIR: sets the array `trust` to buildah's --volume arguments for that (empty when npm has no cafile).
build_trust() {
  trust=()
  local cafile
  cafile=$(npm config get cafile 2>/dev/null || true)
  if [ -f "$cafile" ]; then
    mkdir -p "$1/trust"
    cp "$cafile" "$1/trust/build-ca.crt"
    printf 'cafile=/usr/local/etc/build-ca.crt\n' >"$1/trust/npmrc"
    trust=(--volume "$1/trust:/usr/local/etc:ro")
  fi
}
