# shellcheck shell=sh
# Pure helpers of osm-healthcheck-init.sh: port specs, backend choice, reading a ruleset, rendering the
# iptables-restore input. Output on stdout only, no iptables calls, so test/init calls each one directly.

OSM_HC_CHAIN=OSM_HEALTHCHECK
# Only TCP needs the bypass: kubelet's probes are TCP, and meshes intercept TCP only.
OSM_HC_JUMP="-p tcp -j $OSM_HC_CHAIN"

# is_port TEXT: a decimal port 1-65535 without sign or leading zero (sh arithmetic reads 010 as octal).
is_port() {
  case $1 in '' | 0* | *[!0-9]*) return 1 ;; esac
  [ "${#1}" -le 5 ] && [ "$1" -le 65535 ]
}

# port_specs LIST: "15901-15904,16000" -> "15901:15904 16000" (iptables --dport values). On a bad item,
# prints that item and fails.
port_specs() (
  case $1 in '' | ,* | *, | *,,*)
    printf '%s' "$1"
    return 1
    ;;
  esac
  specs=
  set -f
  IFS=,
  for item in $1; do
    case $item in
      *-*) first=${item%%-*} last=${item#*-} ;;
      *) first=$item last=$item ;;
    esac
    if ! is_port "$first" || ! is_port "$last" || [ "$first" -gt "$last" ]; then
      printf '%s' "$item"
      return 1
    fi
    if [ "$first" = "$last" ]; then spec=$first; else spec=$first:$last; fi
    specs=${specs:+$specs }$spec
  done
  printf '%s' "$specs"
)

# choose_backend LEGACY_RULES NFT_RULES HAVE_LEGACY HAVE_NFT: the backend whose tables hold more rules, nft
# on a tie, as kubernetes-sigs/iptables-wrappers (iptables-wrapper-installer.sh) and Istio's
# tools/istio-iptables/pkg/dependencies (detectIptablesVersion) pick it: the mesh's init ran before us (or
# will use the same node default after us), and rules written with the other backend would never be seen.
choose_backend() {
  if [ "$4" = 1 ] && { [ "$3" != 1 ] || [ "$2" -ge "$1" ]; }; then
    echo nft
  elif [ "$3" = 1 ]; then
    echo legacy
  else
    return 1
  fi
}

# count_rules < SAVE_OUTPUT: how many rules (-A lines) an iptables-save dump holds, over all tables.
count_rules() (
  n=0
  while IFS= read -r line; do
    case $line in -A\ *) n=$((n + 1)) ;; esac
  done
  echo "$n"
)

# our_jumps < SAVE_OUTPUT: the nat PREROUTING rules that jump to our chain, as iptables-save prints them.
our_jumps() (
  table=
  while IFS= read -r line; do
    case $line in
      \**) table=${line#\*} ;;
      "-A PREROUTING "*"-j $OSM_HC_CHAIN") if [ "$table" = nat ]; then printf '%s\n' "$line"; fi ;;
    esac
  done
)

# has_our_chain < SAVE_OUTPUT: whether the nat table has our chain.
has_our_chain() (
  table=
  while IFS= read -r line; do
    case $line in
      \**) table=${line#\*} ;;
      ":$OSM_HC_CHAIN "*) if [ "$table" = nat ]; then return 0; fi ;;
    esac
  done
  return 1
)

# render_apply "SPECS" "JUMPS": iptables-restore --noflush input that (re)installs our chain with one ACCEPT
# per port spec and moves its jump to the top of PREROUTING, whatever the mesh put there. Declaring an existing
# chain flushes it (both backends), and the old jumps are deleted in the same transaction, so a re-run
# replaces rather than duplicates.
render_apply() (
  echo '*nat'
  echo ":$OSM_HC_CHAIN - [0:0]"
  for spec in $1; do
    echo "-A $OSM_HC_CHAIN -p tcp -m tcp --dport $spec -j ACCEPT"
  done
  render_deletes "$2"
  echo "-I PREROUTING 1 $OSM_HC_JUMP"
  echo 'COMMIT'
)

# render_cleanup HAS_CHAIN "JUMPS": input that removes our jumps and chain, or nothing when neither exists.
render_cleanup() (
  if [ "$1" != 1 ] && [ -z "$2" ]; then return 0; fi
  echo '*nat'
  render_deletes "$2"
  if [ "$1" = 1 ]; then
    echo "-F $OSM_HC_CHAIN"
    echo "-X $OSM_HC_CHAIN"
  fi
  echo 'COMMIT'
)

# render_deletes "JUMPS": each saved "-A PREROUTING ..." line as the "-D PREROUTING ..." that removes it.
render_deletes() {
  printf '%s\n' "$1" | while IFS= read -r jump; do
    if [ -n "$jump" ]; then printf '%s\n' "-D${jump#-A}"; fi
  done
}

# has_global_ipv6 < /proc/net/if_inet6: whether any address has global scope (00; ULAs included).
has_global_ipv6() (
  while read -r _address _index _prefix scope _rest; do
    if [ "$scope" = 00 ]; then return 0; fi
  done
  return 1
)
