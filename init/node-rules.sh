# shellcheck shell=sh
# Pure helpers of osm-healthcheck-node.sh: reading our part of a saved ruleset and rendering the
# iptables-restore input of the node's SNAT, and which backend auto picks. Output on stdout only, no iptables
# calls, so test/init calls each one directly. Shares rules.sh's port specs, deletes and seal sources; the native
# nftables backend's are in nft-rules.sh.

# nat POSTROUTING of the node: the host's own TCP to a local pod's companion ports leaves from the seal source.
OSM_HC_NODE_CHAIN=OSM_HEALTHCHECK_NODE
OSM_HC_NODE_JUMP="-p tcp -j $OSM_HC_NODE_CHAIN"

# is_cidr TEXT: loosely an IPv4 or IPv6 network with a prefix length; the CLI gives it canonical, and
# iptables-restore judges the rest.
is_cidr() {
  case $1 in */*) ;; *) return 1 ;; esac
  is_address "${1%/*}" || return 1
  case ${1#*/} in '' | *[!0-9]*) return 1 ;; esac
  case $1 in
    *:*) [ "${1#*/}" -le 128 ] ;;
    *) [ "${1#*/}" -le 32 ] ;;
  esac
}

# cidrs_of FAMILY LIST: the comma list's networks of that family (IPv4, IPv6), space separated.
cidrs_of() (
  out=
  set -f
  IFS=,
  for cidr in $2; do
    if [ "$(address_family "${cidr%/*}")" = "$1" ]; then out=${out:+$out }$cidr; fi
  done
  printf '%s' "$out"
)

# our_node_jumps < SAVE_OUTPUT: the nat POSTROUTING rules that jump to our chain, as iptables-save prints them.
our_node_jumps() (
  table=
  while IFS= read -r line; do
    case $line in
      \**) table=${line#\*} ;;
      "-A POSTROUTING "*"-j $OSM_HC_NODE_CHAIN")
        if [ "$table" = nat ]; then printf '%s\n' "$line"; fi
        ;;
    esac
  done
)

# our_node_state < SAVE_OUTPUT: our chain's declaration, its rules and its jumps in the nat table, in order:
# what render_node_state says they must be when the rules are in place.
our_node_state() (
  table=
  while IFS= read -r line; do
    case $line in
      \**) table=${line#\*} ;;
      ":$OSM_HC_NODE_CHAIN "*) if [ "$table" = nat ]; then echo ":$OSM_HC_NODE_CHAIN"; fi ;;
      "-A $OSM_HC_NODE_CHAIN "* | "-A POSTROUTING "*"-j $OSM_HC_NODE_CHAIN")
        if [ "$table" = nat ]; then printf '%s\n' "$line"; fi
        ;;
    esac
  done
)

# render_node_rules "SPECS" "CIDRS" SOURCE: our chain's rules: TCP that a socket of this host sends (-m owner
# --socket-exists: kubelet, the agent, any host process; never a forwarded pod's packet) to a companion port
# of a local pod leaves from SOURCE, as Istio's ambient node agent writes it (cni/pkg/iptables
# CreateHostRulesForHealthChecks, testdata/hostprobe.golden). Only the local pod networks: SNAT to a
# link-local source cannot come back from another node.
render_node_rules() {
  for cidr in $2; do
    for spec in $1; do
      echo "-A $OSM_HC_NODE_CHAIN -d $cidr -p tcp -m tcp --dport $spec -m owner --socket-exists -j SNAT --to-source $3"
    done
  done
}

# render_node_state "SPECS" "CIDRS" SOURCE: what our_node_state reads once render_node_apply's input is in.
render_node_state() {
  echo ":$OSM_HC_NODE_CHAIN"
  render_node_rules "$1" "$2" "$3"
  echo "-A POSTROUTING $OSM_HC_NODE_JUMP"
}

# render_node_apply "SPECS" "CIDRS" SOURCE "JUMPS": iptables-restore --noflush input that (re)installs our
# chain and one jump to it at the top of nat POSTROUTING, ahead of the CNI's and kube-proxy's MASQUERADE.
# Declaring the chain flushes it, and the old jumps go in the same transaction: a re-run replaces.
render_node_apply() (
  echo '*nat'
  echo ":$OSM_HC_NODE_CHAIN - [0:0]"
  render_node_rules "$1" "$2" "$3"
  render_deletes "$4"
  echo "-I POSTROUTING 1 $OSM_HC_NODE_JUMP"
  echo 'COMMIT'
)

# render_node_cleanup HAS_CHAIN "JUMPS": input that removes our jumps, then our chain; nothing when neither is.
render_node_cleanup() (
  if [ "$1" != 1 ] && [ -z "$2" ]; then return 0; fi
  echo '*nat'
  render_deletes "$2"
  if [ "$1" = 1 ]; then
    echo "-F $OSM_HC_NODE_CHAIN"
    echo "-X $OSM_HC_NODE_CHAIN"
  fi
  echo 'COMMIT'
)

# kube_proxy_rules < SAVE_OUTPUT: how many rules of kube-proxy's iptables (and ipvs) mode an iptables-save dump
# holds: in KUBE-SERVICES, KUBE-NODEPORTS and the per-service chains, or jumping to KUBE-SERVICES. Chains only
# kubelet writes (KUBE-FIREWALL, its canaries) do not count: kubelet keeps them on nftables-mode nodes too.
kube_proxy_rules() (
  n=0
  while IFS= read -r line; do
    case $line in
      "-A KUBE-SERVICES "* | "-A KUBE-NODEPORTS "* | "-A KUBE-SVC-"* | "-A KUBE-SEP-"* | "-A KUBE-EXT-"* | \
        "-A "*" -j KUBE-SERVICES" | "-A "*" -j KUBE-SERVICES "*) n=$((n + 1)) ;;
    esac
  done
  echo "$n"
)

# choose_node_backend IPTABLES_CHOICE KUBE_NFT_TABLES KUBE_IPTABLES_RULES HAVE_NFTABLES: what --backend auto writes
# with. nftables (native, nft-rules.sh) when nft is there and the node shows it uses nftables natively:
# kube-proxy's nftables tables exist and no iptables backend holds a rule of kube-proxy's (its iptables mode
# left behind, or running beside), or there is no iptables at all. Otherwise IPTABLES_CHOICE, choose_backend's
# answer (empty: no iptables backend installed); fails when neither is there. Either way the SNAT works, each
# backend's chain runs before srcnat; the choice keeps our rules where the node's own are, so whoever reads
# the node's ruleset with its tool finds ours beside kube-proxy's.
choose_node_backend() {
  if [ "$4" = 1 ] && { [ -z "$1" ] || { [ "$2" -gt 0 ] && [ "$3" = 0 ]; }; }; then
    echo nftables
  elif [ -n "$1" ]; then
    echo "$1"
  else
    return 1
  fi
}
