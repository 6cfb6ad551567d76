#!/bin/sh
# The image's entrypoint under tini (Dockerfile): `supervise.sh NODE CLI SUBCOMMAND [ARG...]`. Every subcommand
# but `serve` is exec'd as is. `serve` (the companion, docs/companion-failures.md) runs as this shell's child and
# is restarted at once when it dies, so a crash or an OOM kill of the server costs kubelet's probes a few hundred
# milliseconds, not kubelet's crash-loop back-off (10 s, 20 s, 40 s ...) during which the app's liveness probes
# fail against nobody and kubelet restarts a healthy app. A dash process costs 0.2 MiB PSS per pod; a Node
# supervisor would cost a second Node process (BENCHMARKS.md, "Supervision").
# - SIGTERM and SIGINT go to serve, which keeps the stop order (docs/architecture.md#start-and-stop-order); whatever serve does after one is
#   final: its exit status is this script's, never restarted.
# - More than RESTART_LIMIT exits within RESTART_WINDOW seconds: this script exits with serve's last status, so
#   kubelet restarts the container and a companion that cannot run is reported as CrashLoopBackOff.
# - serve is told its restart count (OSM_HEALTHCHECK_RESTARTS), which /metrics exposes; each restart logs one
#   NDJSON line in pino's shape on stdout.
# - In a memory cgroup with a limit, V8's heap is capped at half of it (--max-heap-size): V8 collects before the
#   cgroup fills, and a heap that still outgrows it kills only serve (V8's fatal heap error), which is restarted
#   here, rather than the kernel's OOM killer, which on cgroup v2 kills the whole container (memory.oom.group).
set -u

RESTART_LIMIT=10
RESTART_WINDOW=60
MIB=1048576

[ $# -ge 3 ] || {
  echo 'usage: supervise.sh NODE CLI SUBCOMMAND [ARG...]' >&2
  exit 2
}
[ "$3" = serve ] || exec "$@"
node=$1
shift

# One line as pino writes it (src/log.ts): level, time, name, fields, msg. FIELDS is JSON members or nothing.
log() {
  printf '{"level":"%s","time":"%s","name":"osm-healthcheck"%s,"msg":"%s"}\n' \
    "$1" "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "${3:+,$3}" "$2"
}

# The memory limit of this process's cgroup in bytes, or nothing: v1's memory controller when there is one, else
# v2's; the cgroup's own directory, else the mount's root (a container's cgroup namespace or bind mount).
memory_limit() {
  v1='' v2=''
  while IFS=: read -r _ controllers path; do
    case ,$controllers, in
      ,,) v2=$path ;;
      *,memory,*) v1=$path ;;
    esac
  done </proc/self/cgroup
  if [ -n "$v1" ]; then
    set -- "/sys/fs/cgroup/memory$v1/memory.limit_in_bytes" /sys/fs/cgroup/memory/memory.limit_in_bytes
  elif [ -n "$v2" ]; then
    set -- "/sys/fs/cgroup$v2/memory.max" /sys/fs/cgroup/memory.max
  else
    return 0
  fi
  for file in "$@"; do
    if [ -r "$file" ]; then
      read -r limit <"$file"
      # v2 says max, v1 a number near 2^63: no limit either way.
      case $limit in '' | *[!0-9]*) return 0 ;; esac
      [ "${#limit}" -ge 16 ] || echo "$limit"
      return 0
    fi
  done
}

heap=
limit=$(memory_limit)
[ -z "$limit" ] || heap=--max-heap-size=$((limit / 2 / MIB))

child=
stopping=
signals=0
forward() {
  stopping=$1
  signals=$((signals + 1))
  [ -z "$child" ] || kill -s "$1" "$child" 2>/dev/null
}
trap 'forward TERM' TERM
trap 'forward INT' INT

seconds_up() {
  read -r up _ </proc/uptime
  echo "${up%.*}"
}

restarts=0
recent=
while :; do
  # shellcheck disable=SC2086 # $heap is one flag or nothing.
  OSM_HEALTHCHECK_RESTARTS=$restarts "$node" $heap "$@" &
  child=$!
  # A signal between the fork and $child: forward it now.
  [ -z "$stopping" ] || kill -s "$stopping" "$child" 2>/dev/null
  # wait returns early (above 128) when a trapped signal arrives while serve still runs: then wait again.
  while :; do
    seen=$signals
    wait "$child" 2>/dev/null
    status=$?
    [ "$status" -gt 128 ] && [ "$signals" != "$seen" ] && kill -0 "$child" 2>/dev/null && continue
    break
  done
  child=
  [ -z "$stopping" ] || exit "$status"

  if [ "$status" -gt 128 ]; then
    how="\"signal\":\"$(kill -l "$((status - 128))")\""
  else
    how="\"code\":$status"
  fi
  now=$(seconds_up)
  kept=
  for at in $recent; do
    [ $((now - at)) -ge "$RESTART_WINDOW" ] || kept="$kept $at"
  done
  recent="$kept $now"
  # shellcheck disable=SC2086 # the count of words.
  count=$(set -- $recent && echo $#)
  if [ "$count" -gt "$RESTART_LIMIT" ]; then
    log error "serve keeps exiting: giving up, kubelet restarts the container" \
      "$how,\"restarts\":$restarts,\"exits\":$count,\"windowSeconds\":$RESTART_WINDOW"
    exit "$status"
  fi
  restarts=$((restarts + 1))
  log warn "serve exited: restarting it" "$how,\"restarts\":$restarts"
done
