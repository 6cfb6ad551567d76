# shellcheck shell=sh
# What the pod's init script and the node agent's script both do with the machine's iptables: say what went wrong
# (each caller names itself in OSM_HC_SCRIPT first), check the rights, find each backend's tools, count a backend's
# rules.

# note MESSAGE, die MESSAGE (exit 1), usage_error MESSAGE (exit 2): on stderr, after the script's name.
note() { printf '%s: %s\n' "${OSM_HC_SCRIPT:?}" "$*" >&2; }
die() {
  note "$*"
  exit 1
}
usage_error() {
  note "$* (see --help)"
  exit 2
}
# first_line TEXT: TEXT up to its first newline.
first_line() { printf '%s' "${1%%"$nl"*}"; }
nl='
'

# check_privileges ROOT_HINT CAP_HINT: root and CAP_NET_ADMIN, else die with the hint for where this runs.
# Reading the ruleset needs the same rights as changing it, so --dry-run checks them too.
check_privileges() {
  euid='' cap_eff=''
  while read -r key first second _rest; do
    case $key in
      Uid:) euid=$second ;;
      CapEff:) cap_eff=$first ;;
    esac
  done </proc/self/status
  [ "$euid" = 0 ] || die "must run as root (uid 0), running as uid ${euid:-unknown}: $1"
  # CAP_NET_ADMIN is bit 12 of the effective set (linux/capability.h); the low 8 hex digits hold it.
  low=${cap_eff#"${cap_eff%????????}"}
  [ $(((0x${low:-0} >> 12) & 1)) = 1 ] || die "the NET_ADMIN capability is missing: $2"
}

# tool_prefix BACKEND: iptables-nft / iptables-legacy, else a plain iptables of that flavour (Alpine, older
# distros); fails when the backend is not installed.
tool_prefix() {
  if command -v "iptables-$1-restore" >/dev/null 2>&1 && command -v "iptables-$1-save" >/dev/null 2>&1; then
    echo "iptables-$1"
    return 0
  fi
  if ! command -v iptables-restore >/dev/null 2>&1 || ! command -v iptables-save >/dev/null 2>&1; then
    return 1
  fi
  case $(iptables --version 2>/dev/null) in
    *nf_tables*) flavour=nft ;;
    *) flavour=legacy ;;
  esac
  [ "$flavour" = "$1" ] && echo iptables
}

v6_prefix() { echo "ip6${1#ip}"; }

# rules_in PREFIX [COUNTER]: how many rules the IPv4 and IPv6 tables of that backend hold (COUNTER, a filter
# of iptables-save's output printing a number: count_rules by default).
rules_in() {
  counter=${2:-count_rules}
  v4=$("$1-save" 2>/dev/null | "$counter") || v4=0
  v6=0
  if command -v "$(v6_prefix "$1")-save" >/dev/null 2>&1; then
    v6=$("$(v6_prefix "$1")-save" 2>/dev/null | "$counter") || v6=0
  fi
  echo $((v4 + v6))
}
