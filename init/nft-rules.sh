# shellcheck shell=sh
# Pure helpers of osm-healthcheck-node.sh's native nftables backend (--backend nftables): rendering the `nft -f`
# input of the node's SNAT, reading our part of `nft list` back. Output on stdout only, no nft calls, so
# test/init calls each one directly. Takes rules.sh's port specs and node-rules.sh's families.

# One table per family, `ip` and `ip6`, as kube-proxy's nftables mode keeps its own (table ip kube-proxy, table
# ip6 kube-proxy): each family is its own transaction, so one that fails leaves the other's as it was, and the
# table is ours alone, so replacing or removing it touches nothing of anyone else's.
OSM_HC_NFT_TABLE=osm_healthcheck_node
OSM_HC_NFT_CHAIN=postrouting
# Ahead of srcnat (100), where kube-proxy's nftables masquerade, the CNI's MASQUERADE and both iptables backends'
# nat POSTROUTING sit: the kernel runs the nat chains of a hook in priority order and stops at the first that
# binds a NAT mapping for the connection, so only a chain before theirs decides the source. The iptables
# backends get the same by our jump being rule 1 of POSTROUTING.
OSM_HC_NFT_PRIORITY='srcnat - 10'
OSM_HC_NFT_HOOK="type nat hook postrouting priority $OSM_HC_NFT_PRIORITY; policy accept;"

# nft_family FAMILY: the nftables family of IPv4 or IPv6.
nft_family() {
  if [ "$1" = IPv4 ]; then echo ip; else echo ip6; fi
}

# nft_address FAMILY CIDR: the network as `nft list` prints it: a host's full-length prefix dropped.
nft_address() {
  case $1/${2#*/} in
    IPv4/32 | IPv6/128) printf '%s' "${2%/*}" ;;
    *) printf '%s' "$2" ;;
  esac
}

# render_nft_rules FAMILY "SPECS" "CIDRS" SOURCE: our chain's rules, as `nft list` prints them. TCP that a socket
# of this host sends to a companion port of a local pod leaves from SOURCE. nftables has no --socket-exists:
# `meta skuid >= 0` is it, since the kernel's meta expression reads the uid off the packet's own socket, in
# this network namespace, and the rule does not match a packet without one (a forwarded pod's packet: its
# socket stayed in the pod's namespace). Any uid, as the iptables backends' --socket-exists: kubelet, the
# agent's proof connection, any host process. Istio's nftables backend matches kubelet's uid alone (cni/pkg/
# nftables CreateHostRulesForHealthChecks), which needs the host's /proc and would leave the agent's own proof
# connection unSNATed. Only the local pod networks: SNAT to a link-local source cannot come back from another
# node.
render_nft_rules() {
  family=$(nft_family "$1")
  for cidr in $3; do
    for spec in $2; do
      echo "$family daddr $(nft_address "$1" "$cidr") tcp dport $(printf '%s' "$spec" | tr : -) meta skuid >= 0 snat to $4"
    done
  done
}

# render_nft_state FAMILY "SPECS" "CIDRS" SOURCE: what our_nft_state reads once render_nft_apply's input is in.
render_nft_state() {
  echo "table $(nft_family "$1") $OSM_HC_NFT_TABLE {"
  echo "chain $OSM_HC_NFT_CHAIN {"
  echo "$OSM_HC_NFT_HOOK"
  render_nft_rules "$1" "$2" "$3" "$4"
  echo '}'
  echo '}'
}

# our_nft_state < LIST_OUTPUT: `nft list table FAMILY osm_healthcheck_node` without indentation, handles,
# counters' values and blank lines: what --ensure compares with render_nft_state.
our_nft_state() (
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%" # handle "*}
    while :; do
      case $line in
        [[:space:]]*) line=${line#?} ;;
        *) break ;;
      esac
    done
    if [ -n "$line" ]; then printf '%s\n' "$line"; fi
  done
)

# render_nft_apply FAMILY "SPECS" "CIDRS" SOURCE: `nft -f` input that (re)creates our table with its one chain.
# One transaction: the table is added (so the delete never fails), deleted with whatever another process left
# in it, and declared anew; packets see the old table or the new one, never none. A re-run replaces.
render_nft_apply() {
  family=$(nft_family "$1")
  echo "add table $family $OSM_HC_NFT_TABLE"
  echo "delete table $family $OSM_HC_NFT_TABLE"
  echo "table $family $OSM_HC_NFT_TABLE {"
  printf '\tchain %s {\n' "$OSM_HC_NFT_CHAIN"
  printf '\t\t%s\n' "$OSM_HC_NFT_HOOK"
  render_nft_rules "$1" "$2" "$3" "$4" | while IFS= read -r rule; do printf '\t\t%s\n' "$rule"; done
  printf '\t}\n'
  echo '}'
}

# has_nft_table FAMILY < LIST_TABLES_OUTPUT: whether `nft list tables` names our table of that family.
has_nft_table() (
  want="table $(nft_family "$1") $OSM_HC_NFT_TABLE"
  while IFS= read -r line; do
    if [ "$line" = "$want" ]; then return 0; fi
  done
  return 1
)

# render_nft_cleanup FAMILY HAS_TABLE: input that deletes our table, and only ours; nothing when it is not there.
render_nft_cleanup() {
  if [ "$2" = 1 ]; then echo "delete table $(nft_family "$1") $OSM_HC_NFT_TABLE"; fi
}

# kube_proxy_nft_tables < LIST_TABLES_OUTPUT: how many of kube-proxy's nftables-mode tables (table ip
# kube-proxy, table ip6 kube-proxy; pkg/proxy/nftables) the ruleset holds.
kube_proxy_nft_tables() (
  n=0
  while IFS= read -r line; do
    case $line in "table ip kube-proxy" | "table ip6 kube-proxy") n=$((n + 1)) ;; esac
  done
  echo "$n"
)
