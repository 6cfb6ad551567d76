# shellcheck shell=sh
# Pure helpers of osm-healthcheck-init.sh: port specs, backend choice, reading a ruleset, rendering the
# iptables-restore input. Output on stdout only, no iptables calls, so test/init calls each one directly.

# Inbound: kubelet -> the companion's ports, jumped from nat PREROUTING.
OSM_HC_CHAIN=OSM_HEALTHCHECK
# Outbound: the companion -> the app at the pod's own addresses, jumped from nat OUTPUT. Locally generated
# connections never pass PREROUTING, and every mesh REDIRECTs them to its outbound listener from OUTPUT.
OSM_HC_OUTPUT_CHAIN=OSM_HEALTHCHECK_OUTPUT
# Only TCP needs the bypass: kubelet's and the companion's probes are TCP, and meshes intercept TCP only.
OSM_HC_JUMP="-p tcp -j $OSM_HC_CHAIN"
OSM_HC_OUTPUT_JUMP="-p tcp -j $OSM_HC_OUTPUT_CHAIN"
# The companion's runAsUser: COMPANION_UID in src/scheme.ts (test/init/rules.test.ts keeps the two equal).
# shellcheck disable=SC2034 # used by osm-healthcheck-init.sh
OSM_HC_DEFAULT_UID=65532
# The source the node agent SNATs the host's own TCP to 15901-15904 to (init/node-rules.sh), per family: the
# addresses Istio's ambient node agent uses for the same purpose (istio/istio cni/pkg/config
# HOST_PROBE_SNAT_ADDRESS, HOST_PROBE_V6_SNAT_ADDRESS), so a NetworkPolicy written for one admits the other.
# SEAL_SOURCES in src/seal/sources.ts (test/init/node-rules.test.ts keeps them equal).
# shellcheck disable=SC2034 # used by osm-healthcheck-init.sh and osm-healthcheck-node.sh
OSM_HC_SEAL_SOURCE_V4=169.254.7.127
# shellcheck disable=SC2034 # used by osm-healthcheck-init.sh and osm-healthcheck-node.sh
OSM_HC_SEAL_SOURCE_V6=fd16:9254:7127:1337:ffff:ffff:ffff:ffff

# is_port TEXT: a decimal port 1-65535 without sign or leading zero (sh arithmetic reads 010 as octal).
is_port() {
  case $1 in '' | 0* | *[!0-9]*) return 1 ;; esac
  [ "${#1}" -le 5 ] && [ "$1" -le 65535 ]
}

# is_uid TEXT: a decimal user id 1-4294967294 without sign or leading zero. Not root: exempting uid 0 would
# exempt every root process in the pod. Not 4294967295, which is (uid_t)-1.
is_uid() {
  case $1 in '' | 0* | *[!0-9]*) return 1 ;; esac
  [ "${#1}" -le 10 ] && [ "$1" -le 4294967294 ]
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

# our_jumps < SAVE_OUTPUT: the nat rules that jump to our chains (PREROUTING to OSM_HEALTHCHECK, OUTPUT to
# OSM_HEALTHCHECK_OUTPUT), as iptables-save prints them.
our_jumps() (
  table=
  while IFS= read -r line; do
    case $line in
      \**) table=${line#\*} ;;
      "-A PREROUTING "*"-j $OSM_HC_CHAIN" | "-A OUTPUT "*"-j $OSM_HC_OUTPUT_CHAIN")
        if [ "$table" = nat ]; then printf '%s\n' "$line"; fi
        ;;
    esac
  done
)

# our_chains < SAVE_OUTPUT: which of our chains the nat table has, one name a line.
our_chains() (
  table=
  while IFS= read -r line; do
    case $line in
      \**) table=${line#\*} ;;
      ":$OSM_HC_CHAIN "* | ":$OSM_HC_OUTPUT_CHAIN "*)
        if [ "$table" = nat ]; then
          chain=${line%% *}
          printf '%s\n' "${chain#:}"
        fi
        ;;
    esac
  done
)

# render_apply "SPECS" UID "JUMPS" [SOURCE [AGENT]]: iptables-restore --noflush input that (re)installs our two
# chains and moves their jumps to the top of PREROUTING and OUTPUT, whatever the mesh put there:
# - inbound, one ACCEPT per port spec: from any source, or, sealed, only from SOURCE (the node agent's SNAT
#   source, through which kubelet's probes arrive; every other caller falls through to the mesh's redirect);
# - outbound, one ACCEPT for TCP that UID sends through lo, the route of every connection to the pod's own
#   addresses (pod IP, 127.0.0.1, ::1), which is all the companion dials. Its TCP to anywhere else still goes
#   to the proxy, and an app sharing the UID gains no more than Istio and osm-edge already give every
#   non-proxy user ("-o lo -m owner ! --uid-owner <proxy> -j RETURN", istio-iptables capture/run.go);
# - while init proves the seal, AGENT ("ADDRESS PORT"): root's TCP to the node agent, past a mesh whose
#   outbound redirect is already there (a CNI wrote it) and whose proxy does not run yet. The final
#   transaction leaves it out again.
# Declaring an existing chain flushes it (both backends), and the old jumps are deleted in the same
# transaction, so a re-run replaces rather than duplicates.
render_apply() (
  echo '*nat'
  echo ":$OSM_HC_CHAIN - [0:0]"
  echo ":$OSM_HC_OUTPUT_CHAIN - [0:0]"
  for spec in $1; do
    echo "-A $OSM_HC_CHAIN ${4:+-s $4 }-p tcp -m tcp --dport $spec -j ACCEPT"
  done
  echo "-A $OSM_HC_OUTPUT_CHAIN -o lo -p tcp -m owner --uid-owner $2 -j ACCEPT"
  if [ -n "${5:-}" ]; then
    echo "-A $OSM_HC_OUTPUT_CHAIN -d $(host_prefix "${5% *}") -p tcp -m tcp --dport ${5#* } -m owner --uid-owner 0 -j ACCEPT"
  fi
  render_deletes "$3"
  echo "-I PREROUTING 1 $OSM_HC_JUMP"
  echo "-I OUTPUT 1 $OSM_HC_OUTPUT_JUMP"
  echo 'COMMIT'
)

# host_prefix ADDRESS: the address as iptables-save prints a one-host match, /32 or /128.
host_prefix() {
  case $1 in *:*) echo "$1/128" ;; *) echo "$1/32" ;; esac
}

# is_address TEXT: loosely an IPv4 or IPv6 address (digits, hex, dots, colons); iptables-restore judges the rest.
is_address() {
  case $1 in '' | *[!0-9a-fA-F.:]*) return 1 ;; esac
}

# address_family ADDRESS: IPv6 when it has a colon, else IPv4 (as the script names the families).
address_family() {
  case $1 in *:*) echo IPv6 ;; *) echo IPv4 ;; esac
}

# render_cleanup "CHAINS" "JUMPS": input that removes our jumps, then our chains; nothing when there are none.
render_cleanup() (
  if [ -z "$1" ] && [ -z "$2" ]; then return 0; fi
  echo '*nat'
  render_deletes "$2"
  for chain in $1; do
    echo "-F $chain"
    echo "-X $chain"
  done
  echo 'COMMIT'
)

# render_deletes "JUMPS": each saved "-A CHAIN ..." line as the "-D CHAIN ..." that removes it.
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
