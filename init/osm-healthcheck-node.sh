#!/bin/sh
# osm-healthcheck node: on the node (hostNetwork), SNAT the host's own TCP to a local pod's companion ports to
# the seal source, so a sealed pod can tell kubelet's probes from every other caller
# (docs/security.md#sealed-pods-only-kubelet-gets-in). Run by `osm-healthcheck node` (src/node/), which runs it
# again with --ensure on a period, putting back what another process flushed. Needs only sh and iptables, or
# nft for the native nftables backend.
# shellcheck source-path=SCRIPTDIR
set -eu

case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
# What note, die and usage_error (iptables-tools.sh) put before each message.
OSM_HC_SCRIPT=osm-healthcheck-node
# shellcheck source=rules.sh
. "$here/rules.sh"
# shellcheck source=node-rules.sh
. "$here/node-rules.sh"
# shellcheck source=nft-rules.sh
. "$here/nft-rules.sh"
# shellcheck source=iptables-tools.sh
. "$here/iptables-tools.sh"

usage() {
  printf '%s\n' "Usage: osm-healthcheck-node.sh --pod-cidr LIST [--ports LIST] [--backend auto|nft|legacy|nftables]
                               [--dry-run | --ensure | --cleanup]
  --pod-cidr LIST  this node's pod networks, IPv4 and IPv6, e.g. 10.88.0.0/16,fd00:88::/64
  --ports LIST     the companion's ports (default 15901-15904)
  --backend NAME   auto (default): nftables where kube-proxy runs in nftables mode (or no iptables is
                   installed), else the iptables backend holding more rules, nft on a tie; nft (iptables-nft);
                   legacy (iptables-legacy); nftables (native, with nft: table ip/ip6 osm_healthcheck_node)
  --dry-run        print the iptables-restore or nft -f input per family instead of applying it
  --ensure         change nothing when the rules are in place, else put them back
  --cleanup        remove our chain and its jump, or our nftables tables (all backends with auto)
Exit status: 0 done, 1 failed (no rule of the failing family changed), 2 bad usage."
}


ports=15901-15904 cidrs='' backend=auto mode=apply
while [ $# -gt 0 ]; do
  case $1 in
    --ports | --pod-cidr | --backend)
      [ $# -ge 2 ] || usage_error "$1 needs a value"
      case $1 in --ports) ports=$2 ;; --pod-cidr) cidrs=$2 ;; --backend) backend=$2 ;; esac
      shift
      ;;
    --ports=*) ports=${1#*=} ;;
    --pod-cidr=*) cidrs=${1#*=} ;;
    --backend=*) backend=${1#*=} ;;
    --dry-run) mode=dry-run ;;
    --ensure) mode=ensure ;;
    --cleanup) mode=cleanup ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) usage_error "unknown argument \"$1\"" ;;
  esac
  shift
done
specs=$(port_specs "$ports") || usage_error "--ports: \"$specs\" is not a port 1-65535 or a range like 15901-15904"
case $backend in auto | nft | legacy | nftables) ;; *) usage_error "--backend must be auto, nft, legacy or nftables, got \"$backend\"" ;; esac
if [ "$mode" != cleanup ]; then
  [ -n "$cidrs" ] || usage_error "--pod-cidr is required: this node's pod networks, e.g. 10.88.0.0/16"
  old_ifs=$IFS
  IFS=,
  set -f
  for cidr in $cidrs; do
    is_cidr "$cidr" || usage_error "--pod-cidr: \"$cidr\" is not a network like 10.88.0.0/16 or fd00:88::/64"
  done
  set +f
  IFS=$old_ifs
fi

check_privileges "the node agent's container needs securityContext.runAsUser: 0" \
  "add NET_ADMIN to the node agent's securityContext.capabilities"

nft_prefix=$(tool_prefix nft) || nft_prefix=
legacy_prefix=$(tool_prefix legacy) || legacy_prefix=
native=
if command -v nft >/dev/null 2>&1; then native=nft; fi
no_binary="no iptables binary found (looked for iptables-nft-restore, iptables-legacy-restore, iptables-restore) and no nft: install iptables or nftables in the image"
case $backend in
  auto)
    if [ "$mode" = cleanup ]; then
      prefixes="$nft_prefix $legacy_prefix"
      [ -n "${prefixes# }$native" ] || die "$no_binary"
    else
      nft_rules=0 legacy_rules=0 kube_iptables=0 kube_nft=0
      [ -z "$nft_prefix" ] || nft_rules=$(rules_in "$nft_prefix")
      [ -z "$legacy_prefix" ] || legacy_rules=$(rules_in "$legacy_prefix")
      for prefix in $nft_prefix $legacy_prefix; do
        kube_iptables=$((kube_iptables + $(rules_in "$prefix" kube_proxy_rules)))
      done
      [ -z "$native" ] || kube_nft=$(nft list tables 2>/dev/null | kube_proxy_nft_tables)
      iptables_choice=$(choose_backend "$legacy_rules" "$nft_rules" "$([ -n "$legacy_prefix" ] && echo 1)" "$([ -n "$nft_prefix" ] && echo 1)") || iptables_choice=
      chosen=$(choose_node_backend "$iptables_choice" "$kube_nft" "$kube_iptables" "$([ -n "$native" ] && echo 1)") || die "$no_binary"
      [ "$mode" = ensure ] || note "backend $chosen (auto: nft holds $nft_rules rules, legacy $legacy_rules; kube-proxy has $kube_nft nftables tables, $kube_iptables iptables rules)"
      case $chosen in
        nft) prefixes=$nft_prefix native= ;;
        legacy) prefixes=$legacy_prefix native= ;;
        *) prefixes= ;;
      esac
    fi
    ;;
  nft) prefixes=${nft_prefix:-} native= ;;
  legacy) prefixes=${legacy_prefix:-} native= ;;
  nftables) prefixes= ;;
esac
if [ "$backend" = nftables ]; then
  [ -n "$native" ] || die "the nftables backend is not installed (no nft binary): install nftables, or choose --backend nft or legacy"
elif [ -z "$prefixes" ] && [ -z "$native" ]; then
  die "the $backend backend is not installed (no iptables-$backend-restore or matching iptables-restore)"
fi

# Each family with a pod network (any family when cleaning up), as "FAMILY PREFIX" lines; a family whose
# ruleset cannot be read fails before any family changes, except in cleanup, which passes over it.
targets=
for prefix in $prefixes; do
  for family in IPv4 IPv6; do
    if [ "$family" = IPv4 ]; then tools=$prefix; else tools=$(v6_prefix "$prefix"); fi
    if [ "$mode" != cleanup ] && [ -z "$(cidrs_of "$family" "$cidrs")" ]; then continue; fi
    if ! command -v "$tools-restore" >/dev/null 2>&1; then
      [ "$mode" = cleanup ] || die "$family: $tools-restore not found, and --pod-cidr has $family networks"
      continue
    fi
    if ! err=$("$tools-save" 2>&1 >/dev/null); then
      if [ "$mode" = cleanup ]; then
        note "$family: $tools skipped, its ruleset is unreadable: $(first_line "$err")"
        continue
      fi
      die "$family: cannot read the ruleset with $tools-save: $(first_line "$err")"
    fi
    targets="$targets$family $tools$nl"
  done
done
# The native nftables backend: the same families, each a target of its own ("nft").
if [ -n "$native" ]; then
  if ! err=$(nft list tables 2>&1 >/dev/null); then
    [ "$mode" = cleanup ] || die "cannot read the ruleset with nft: $(first_line "$err")"
    note "nftables skipped, its ruleset is unreadable: $(first_line "$err")"
  else
    for family in IPv4 IPv6; do
      if [ "$mode" != cleanup ] && [ -z "$(cidrs_of "$family" "$cidrs")" ]; then continue; fi
      targets="$targets$family nft$nl"
    done
  fi
fi

# nft_plan_and_apply FAMILY: plan_and_apply for the native nftables backend: our table of that family.
nft_plan_and_apply() {
  if [ "$1" = IPv4 ]; then source=$OSM_HC_SEAL_SOURCE_V4; else source=$OSM_HC_SEAL_SOURCE_V6; fi
  family_cidrs=$(cidrs_of "$1" "$cidrs")
  table="table $(nft_family "$1") $OSM_HC_NFT_TABLE"
  if [ "$mode" = cleanup ]; then
    tables=$(nft list tables 2>/dev/null) || die "$1: cannot read the ruleset with nft"
    has_table=0
    if printf '%s\n' "$tables" | has_nft_table "$1"; then has_table=1; fi
    input=$(render_nft_cleanup "$1" "$has_table")
  else
    if [ "$mode" = ensure ]; then
      # No table yet reads as nothing, which differs from what must be there.
      have=$(nft list "$table" 2>/dev/null | our_nft_state) || have=
      if [ "$have" = "$(render_nft_state "$1" "$specs" "$family_cidrs" "$source")" ]; then
        echo "$1: in place (nftables $table)"
        return 0
      fi
    fi
    input=$(render_nft_apply "$1" "$specs" "$family_cidrs" "$source")
  fi
  if [ "$mode" = dry-run ]; then
    printf '# %s: %s\n%s\n' "$1" "nft -f -" "$input"
    return 0
  fi
  if [ -z "$input" ]; then
    echo "$1: nothing to remove (nftables)"
    return 0
  fi
  if ! err=$(printf '%s\n' "$input" | nft -f - 2>&1 >/dev/null); then
    die "$1: nft refused the transaction, no $1 rule changed: $(first_line "$err")"
  fi
  where="nftables $table, chain $OSM_HC_NFT_CHAIN at priority $OSM_HC_NFT_PRIORITY"
  case $mode in
    cleanup) echo "$1: removed nftables $table" ;;
    ensure) echo "$1: restored: the host's TCP to $ports of pods in $family_cidrs leaves from $source ($where)" ;;
    *) echo "$1: the host's TCP to $ports of pods in $family_cidrs leaves from $source ($where)" ;;
  esac
}

# plan_and_apply FAMILY TOOLS: render the transaction from the current ruleset, then print, skip or apply it.
plan_and_apply() {
  if [ "$2" = nft ]; then
    nft_plan_and_apply "$1"
    return
  fi
  saved=$("$2-save" 2>/dev/null) || die "$1: cannot read the ruleset with $2-save"
  jumps=$(printf '%s\n' "$saved" | our_node_jumps)
  if [ "$1" = IPv4 ]; then source=$OSM_HC_SEAL_SOURCE_V4; else source=$OSM_HC_SEAL_SOURCE_V6; fi
  family_cidrs=$(cidrs_of "$1" "$cidrs")
  if [ "$mode" = cleanup ]; then
    has_chain=0
    case $(printf '%s\n' "$saved" | our_node_state) in *":$OSM_HC_NODE_CHAIN"*) has_chain=1 ;; esac
    input=$(render_node_cleanup "$has_chain" "$jumps")
  else
    if [ "$mode" = ensure ]; then
      have=$(printf '%s\n' "$saved" | our_node_state | sort)
      want=$(render_node_state "$specs" "$family_cidrs" "$source" | sort)
      if [ "$have" = "$want" ]; then
        echo "$1: in place ($2)"
        return 0
      fi
    fi
    input=$(render_node_apply "$specs" "$family_cidrs" "$source" "$jumps")
  fi
  if [ "$mode" = dry-run ]; then
    printf '# %s: %s\n%s\n' "$1" "$2-restore --noflush" "$input"
    return 0
  fi
  if [ -z "$input" ]; then
    echo "$1: nothing to remove ($2)"
    return 0
  fi
  if ! err=$(printf '%s\n' "$input" | "$2-restore" --noflush --wait=10 2>&1 >/dev/null); then
    die "$1: $2-restore refused the transaction, no $1 rule changed: $(first_line "$err")"
  fi
  case $mode in
    cleanup) echo "$1: removed nat chain $OSM_HC_NODE_CHAIN and its jump ($2)" ;;
    ensure) echo "$1: restored: the host's TCP to $ports of pods in $family_cidrs leaves from $source (nat chain $OSM_HC_NODE_CHAIN, POSTROUTING rule 1, $2)" ;;
    *) echo "$1: the host's TCP to $ports of pods in $family_cidrs leaves from $source (nat chain $OSM_HC_NODE_CHAIN, POSTROUTING rule 1, $2)" ;;
  esac
}

while read -r family tools; do
  [ -n "$family" ] || continue
  plan_and_apply "$family" "$tools"
done <<EOF
$targets
EOF
