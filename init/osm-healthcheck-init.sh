#!/bin/sh
# osm-healthcheck init: ACCEPT TCP to the companion's ports at the top of nat PREROUTING, so kubelet's probes
# stop before the mesh's REDIRECT whichever init container ran first (docs/architecture.md#the-init-step), and the companion's own
# TCP to the pod's addresses at the top of nat OUTPUT, so its probes reach the app, not the mesh's outbound
# listener. Run by `osm-healthcheck init` (src/init/script.ts); usable on its own. Needs only sh and iptables.
# shellcheck source-path=SCRIPTDIR
set -eu

case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
# What note, die and usage_error (iptables-tools.sh) put before each message.
OSM_HC_SCRIPT=osm-healthcheck-init
# shellcheck source=rules.sh
. "$here/rules.sh"
# shellcheck source=iptables-tools.sh
. "$here/iptables-tools.sh"

usage() {
  printf '%s\n' "Usage: osm-healthcheck-init.sh [--ports LIST] [--uid N] [--dry-run] [--cleanup]
                               [--ipv6 auto|on|off] [--backend auto|nft|legacy]
                               [--sealed] [--agent ADDRESS --agent-port PORT]
  --ports LIST    inbound TCP ports that bypass the mesh, e.g. 15901-15904,16000 (default 15901-15904)
  --uid N         the companion's user: its TCP to the pod's own addresses (pod IP, loopback) bypasses the
                  mesh's outbound redirect, so its probes reach the app (default $OSM_HC_DEFAULT_UID)
  --dry-run       print the iptables-restore input per family instead of applying it
  --cleanup       remove our chains and their jumps instead of installing them
  --ipv6 MODE     auto (default): also IPv6 when the pod has a global IPv6 address; on; off
  --backend NAME  auto (default): the backend holding more rules, nft on a tie; nft; legacy
  --sealed        the ports bypass the mesh only from the node agent's source ($OSM_HC_SEAL_SOURCE_V4,
                  $OSM_HC_SEAL_SOURCE_V6); every other caller goes where the mesh sends it
  --agent ADDRESS, --agent-port PORT
                  also let root's TCP to the node agent at ADDRESS:PORT past the mesh (while init proves
                  the seal; the next run without them takes it away)
Exit status: 0 done, 1 failed (no rule of the failing family changed), 2 bad usage."
}


ports=15901-15904 uid=$OSM_HC_DEFAULT_UID ipv6=auto backend=auto dry_run=0 cleanup=0 sealed=0 agent='' agent_port=
while [ $# -gt 0 ]; do
  case $1 in
    --ports | --uid | --ipv6 | --backend | --agent | --agent-port)
      [ $# -ge 2 ] || usage_error "$1 needs a value"
      case $1 in
        --ports) ports=$2 ;; --uid) uid=$2 ;; --ipv6) ipv6=$2 ;; --backend) backend=$2 ;;
        --agent) agent=$2 ;; --agent-port) agent_port=$2 ;;
      esac
      shift
      ;;
    --ports=*) ports=${1#*=} ;;
    --uid=*) uid=${1#*=} ;;
    --ipv6=*) ipv6=${1#*=} ;;
    --backend=*) backend=${1#*=} ;;
    --dry-run) dry_run=1 ;;
    --sealed) sealed=1 ;;
    --cleanup) cleanup=1 ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) usage_error "unknown argument \"$1\"" ;;
  esac
  shift
done
specs=$(port_specs "$ports") || usage_error "--ports: \"$specs\" is not a port 1-65535 or a range like 15901-15904"
is_uid "$uid" ||
  usage_error "--uid must be a non-root user id 1-4294967294 (the companion's runAsUser), got \"$uid\""
case $ipv6 in auto | on | off) ;; *) usage_error "--ipv6 must be auto, on or off, got \"$ipv6\"" ;; esac
case $backend in auto | nft | legacy) ;; *) usage_error "--backend must be auto, nft or legacy, got \"$backend\"" ;; esac
if [ -n "$agent$agent_port" ]; then
  is_address "$agent" || usage_error "--agent must be the node's IPv4 or IPv6 address, got \"$agent\""
  is_port "$agent_port" || usage_error "--agent-port must be a port 1-65535, got \"$agent_port\""
fi

check_privileges "give the init container securityContext.runAsUser: 0" \
  "add NET_ADMIN and NET_RAW to the init container's securityContext.capabilities"

nft_prefix=$(tool_prefix nft) || nft_prefix=
legacy_prefix=$(tool_prefix legacy) || legacy_prefix=
no_binary="no iptables binary found (looked for iptables-nft-restore, iptables-legacy-restore, iptables-restore): install iptables in the init image"
case $backend in
  auto)
    if [ "$cleanup" = 1 ]; then
      # Remove our chain wherever it is, even from a backend that lost the rule-count vote since.
      prefixes="$nft_prefix $legacy_prefix"
      [ -n "${prefixes# }" ] || die "$no_binary"
    else
      nft_rules=0 legacy_rules=0
      [ -z "$nft_prefix" ] || nft_rules=$(rules_in "$nft_prefix")
      [ -z "$legacy_prefix" ] || legacy_rules=$(rules_in "$legacy_prefix")
      chosen=$(choose_backend "$legacy_rules" "$nft_rules" "$([ -n "$legacy_prefix" ] && echo 1)" "$([ -n "$nft_prefix" ] && echo 1)") || die "$no_binary"
      note "backend $chosen (auto: nft holds $nft_rules rules, legacy $legacy_rules)"
      if [ "$chosen" = nft ]; then prefixes=$nft_prefix; else prefixes=$legacy_prefix; fi
    fi
    ;;
  nft) prefixes=${nft_prefix:-} ;;
  legacy) prefixes=${legacy_prefix:-} ;;
esac
[ -n "$prefixes" ] || die "the $backend backend is not installed (no iptables-$backend-restore or matching iptables-restore)"

# want_ipv6 PREFIX: whether this run covers IPv6 with that backend.
want_ipv6() {
  v6_tools=$(v6_prefix "$1")
  [ "$ipv6" != off ] || return 1
  if ! command -v "$v6_tools-restore" >/dev/null 2>&1 || ! command -v "$v6_tools-save" >/dev/null 2>&1; then
    [ "$ipv6" != on ] || die "--ipv6 on: $v6_tools-restore or $v6_tools-save not found"
    note "IPv6 skipped: $v6_tools-restore not found"
    return 1
  fi
  # on; auto when cleaning up (remove wherever we may have written); else auto follows the pod's addresses,
  # as Istio enables ip6tables only for pods with an IPv6 address.
  if [ "$ipv6" = auto ] && [ "$cleanup" = 0 ]; then
    if ! [ -r /proc/net/if_inet6 ] || ! has_global_ipv6 </proc/net/if_inet6; then
      note "IPv6 skipped: the pod has no global IPv6 address (--ipv6 on forces it)"
      return 1
    fi
  fi
}

# add_target FAMILY PREFIX: queue one ruleset ("FAMILY PREFIX" line) after checking it can be read, so an
# unreadable family fails before any family changes. Cleanup with --backend auto looks in every backend and
# passes over one it cannot read (e.g. legacy on a host without the ip_tables module): nothing of ours is there.
targets=
add_target() {
  if ! err=$("$2-save" 2>&1 >/dev/null); then
    if [ "$cleanup" = 1 ] && [ "$backend" = auto ]; then
      note "$1: $2 skipped, its ruleset is unreadable: $(first_line "$err")"
      return 0
    fi
    die "$1: cannot read the ruleset with $2-save: $(first_line "$err")"
  fi
  targets="$targets$1 $2$nl"
}
for prefix in $prefixes; do
  add_target IPv4 "$prefix"
  if want_ipv6 "$prefix"; then add_target IPv6 "$(v6_prefix "$prefix")"; fi
done

# plan_and_apply FAMILY PREFIX: render the transaction from the current ruleset, then print or apply it.
plan_and_apply() {
  saved=$("$2-save" 2>/dev/null) || die "$1: cannot read the ruleset with $2-save"
  jumps=$(printf '%s\n' "$saved" | our_jumps)
  chains=$(printf '%s\n' "$saved" | our_chains)
  if [ "$cleanup" = 1 ]; then
    input=$(render_cleanup "$chains" "$jumps")
  else
    source='' to_agent=''
    if [ "$sealed" = 1 ]; then
      if [ "$1" = IPv4 ]; then source=$OSM_HC_SEAL_SOURCE_V4/32; else source=$OSM_HC_SEAL_SOURCE_V6/128; fi
    fi
    if [ -n "$agent" ] && [ "$(address_family "$agent")" = "$1" ]; then to_agent="$agent $agent_port"; fi
    input=$(render_apply "$specs" "$uid" "$jumps" "$source" "$to_agent")
  fi
  if [ "$dry_run" = 1 ]; then
    if [ -z "$input" ]; then echo "# $1: nothing to remove ($2)"; else printf '# %s: %s\n%s\n' "$1" "$2-restore --noflush" "$input"; fi
    return 0
  fi
  if [ -z "$input" ]; then
    echo "$1: nothing to remove ($2)"
    return 0
  fi
  if ! err=$(printf '%s\n' "$input" | "$2-restore" --noflush --wait=10 2>&1 >/dev/null); then
    case $err in
      *"table \`nat'"* | *"Table does not exist"*) hint="the kernel offers no $1 nat table (iptable_nat/ip6table_nat or nft nat missing?): " ;;
      *) hint= ;;
    esac
    die "$1: $2-restore refused the transaction, no $1 rule changed: $hint$(first_line "$err")"
  fi
  if [ "$cleanup" = 1 ]; then
    names=
    for chain in $chains; do names="${names:+$names, }$chain"; done
    echo "$1: removed ${names:+nat chains $names and }our jumps ($2)"
  else
    if [ -n "$source" ]; then
      echo "$1: TCP to $ports bypasses the mesh only from ${source%/*}, the node agent's source: sealed (nat chain $OSM_HC_CHAIN, PREROUTING rule 1, $2)"
    else
      echo "$1: TCP to $ports bypasses the mesh (nat chain $OSM_HC_CHAIN, PREROUTING rule 1, $2)"
    fi
    echo "$1: TCP from uid $uid to the pod's own addresses bypasses the mesh" \
      "(nat chain $OSM_HC_OUTPUT_CHAIN, OUTPUT rule 1, $2)"
    if [ -n "$to_agent" ]; then echo "$1: root's TCP to the node agent at $agent port $agent_port bypasses the mesh"; fi
  fi
}

while read -r family prefix; do
  [ -n "$family" ] || continue
  plan_and_apply "$family" "$prefix"
done <<EOF
$targets
EOF
