#!/usr/bin/env bash
# `grant`, `revoke` and `grants` with the real binary: every flag, the TTL,
# each path and address are checked before the cgroup, the pinned programs
# or any record is looked at, so a bad one exits 2 with a message on any
# host; then an unknown cgroup and a missing pinned set exit 1 (this
# host's kernel refuses LSM programs: nothing gets further here; the VM test
# tests/e2e/13-grants.sh does the rest).
# Prints one "PASS name" / "FAIL name: why" line per check.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-$ROOT/build}/sbx-bpf
T=grants
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
has() { if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1" "no '$3' in: $(head -c 400 "$2")"; fi; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
STATE=/run/sbx-bpf/sandboxes
records() { ls "$STATE" 2>/dev/null | grep -c '^[0-9]*\.json$'; }	# not builtin-HASH.json
V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CG=${V2:-/sys/fs/cgroup}/sbx-host-grants-$$	# never created: nothing gets that far
before=$(records)

# bad NAME MESSAGE ARGS…: `grant` exits 2 with the message.
bad() {
	local name=$1 msg=$2; shift 2
	"$B" grant "$CG" --pin-dir "$W/pins" "$@" >out 2>err; check "$name-exit-2" "$?" 2
	has "$name-message" err "sbx-bpf: error: grant: $msg"
	[ -s out ] && fail "$name-no-output" "$(cat out)" || pass "$name-no-output"
}
bad no-grant "give at least one of --read, --write, --connect and --domain" --ttl 1h
bad no-ttl "--ttl is required: how long the grant lasts ('90s', '30m', '2h', '1d')" --read /etc/hosts
bad ttl-unit "--ttl 2x: not a duration; use a number with a unit such as '90s', '30m', '2h' or '1d'" \
	--read /etc/hosts --ttl 2x
bad ttl-zero "--ttl 0s: must be more than 0" --read /etc/hosts --ttl 0s
bad ttl-negative "--ttl -5m: not a duration" --read /etc/hosts --ttl -5m
bad ttl-too-long "--ttl 400d: at most 365d (to allow it for good, change the policy)" --read /etc/hosts --ttl 400d
bad ttl-empty "--ttl : not a duration" --read /etc/hosts --ttl ''
bad all "--all is for 'revoke'" --read /etc/hosts --ttl 1h --all
bad pattern "--read '**/.env': a grant names one path, not a pattern" --read '**/.env' --ttl 1h
bad glob "--write: 'out/*.log': unsupported glob '*'" --write 'out/*.log' --ttl 1h
bad empty-path "--read: empty path" --read '' --ttl 1h
bad tilde-user "--read: '~root/x': '~USER' is not supported; write the path out" --read '~root/x' --ttl 1h
bad network "--connect '10.0.0.0/8': a grant names one address, not a network" --connect 10.0.0.0/8 --ttl 1h
bad bad-address "--connect: '10.0.0.300': '10.0.0.300' is not an IPv4 address" --connect 10.0.0.300 --ttl 1h
bad bad-port "--connect: '127.0.0.2:0': bad port '0' (1-65535, or LO-HI)" --connect 127.0.0.2:0 --ttl 1h
bad port-range "--connect: '127.0.0.2:90-80': bad port '90-80'" --connect 127.0.0.2:90-80 --ttl 1h
bad v4-brackets "--connect: '[127.0.0.1]:80': not CIDR[:PORT]" --connect '[127.0.0.1]:80' --ttl 1h
bad wildcard "--domain '*.example.com': a grant resolves one name when it is made" --domain '*.example.com' --ttl 1h
bad bad-name "--domain: 'exa mple.com' is not a domain pattern" --domain 'exa mple.com' --ttl 1h
# A bad flag anywhere refuses the whole set: nothing is granted in part.
bad one-bad-of-three "--connect: '10.0.0.300'" --read /etc/hosts --connect 10.0.0.300 --write out --ttl 1h
# A bad TTL is found before a bad target, and either before the cgroup.
bad ttl-first "--ttl 1y: not a duration" --read '**/x' --ttl 1y

"$B" --json grant "$CG" --read /etc/hosts --ttl 2x >out 2>/dev/null; check json-exit-2 "$?" 2
jq -e '.error | startswith("grant: --ttl 2x: not a duration")' out >/dev/null && pass json-error ||
	fail json-error "$(cat out)"

# Good flags get past the checks: relative paths (made absolute against the working
# directory, as policy paths are), ~, ports, IPv6, names. The cgroup comes next: exit 1.
mkdir -p data
"$B" grant "$CG" --read data/secret --read ./data/../data --write '~/out' --write "$W/new/**" \
	--connect 127.0.0.2:8081 --connect '[::1]:8000-8999' --connect 10.1.2.3 --domain example.com:443 \
	--domain localhost --domain 10.9.9.9 --ttl 90s --pin-dir "$W/pins" >out 2>err
check good-flags-exit-1 "$?" 1
has good-flags-reach-the-cgroup err "sbx-bpf: error: cannot find cgroup '$CG'"
for ttl in 90s 30m 2h 1d 1h30m 45 365d; do
	"$B" grant "$CG" --read /etc/hosts --ttl "$ttl" >/dev/null 2>err
	check "ttl-$ttl-accepted" "$?" 1
done
"$B" revoke "$CG" 3 4 --pin-dir "$W/pins" >/dev/null 2>err; check revoke-unknown-cgroup-exit-1 "$?" 1
has revoke-unknown-cgroup err "cannot find cgroup '$CG'"
"$B" grants "$CG" >/dev/null 2>err; check grants-unknown-cgroup-exit-1 "$?" 1
has grants-unknown-cgroup err "cannot find cgroup '$CG'"

# revoke's own arguments.
rbad() {
	local name=$1 msg=$2; shift 2
	"$B" revoke "$CG" --pin-dir "$W/pins" "$@" >out 2>err; check "revoke-$name-exit-2" "$?" 2
	has "revoke-$name-message" err "sbx-bpf: error: revoke: $msg"
}
rbad nothing "give the ids of the grants to revoke, or --all"
rbad ids-and-all "give the ids of the grants to revoke, or --all" 3 --all
rbad bad-id "'x3' is not a grant id (a number from 'sbx-bpf grants')" 2 x3
rbad zero-id "'0' is not a grant id" 0
rbad grant-flags "takes grant ids or --all, not the flags of 'grant'" --all --read /etc/hosts
rbad ttl "takes grant ids or --all, not the flags of 'grant'" 3 --ttl 1h
"$B" revoke >/dev/null 2>&1; check revoke-no-cgroup-exit-2 "$?" 2
"$B" grant --read /etc/hosts --ttl 1h >/dev/null 2>&1; check grant-no-cgroup-exit-2 "$?" 2
"$B" grant "$CG" extra --read /etc/hosts --ttl 1h >/dev/null 2>&1; check grant-two-cgroups-exit-2 "$?" 2
"$B" grants "$CG" --read /etc/hosts >/dev/null 2>&1; check grants-refuses-flags-exit-2 "$?" 2
"$B" grants >/dev/null 2>&1; check grants-no-cgroup-exit-2 "$?" 2

# An existing cgroup without the pinned programs: said as attach says it, exit 1.
if [ -n "$V2" ]; then
	"$B" grant "$V2" --read /etc/hosts --ttl 1h --pin-dir "$W/pins" >out 2>err; check no-pins-exit-1 "$?" 1
	has no-pins-message err "sbx-bpf: error: no usable programs pinned at $W/pins: No such file or directory (start 'sbx-bpf daemon')"
	"$B" revoke "$V2" --all --pin-dir "$W/pins" >out 2>err; check revoke-no-pins-exit-1 "$?" 1
	has revoke-no-pins-message err "no usable programs pinned at $W/pins"
	"$B" --json grant "$V2" --read /etc/hosts --ttl 1h --pin-dir "$W/pins" >out 2>/dev/null
	jq -e '.error | startswith("no usable programs pinned at")' out >/dev/null && pass no-pins-json ||
		fail no-pins-json "$(cat out)"
	# grants reads the record alone; a cgroup never attached has none.
	"$B" grants "$V2" >out 2>err; check grants-not-attached-exit-1 "$?" 1
	has grants-not-attached-message err "grants: $V2 is not attached (no record in $STATE)"
fi
check nothing-written "$(records)" "$before"

"$B" grant --help >out; check help-exit-0 "$?" 0
has help-grant out "Usage: sbx-bpf grant CGROUP (--read PATH | --write PATH | --connect ADDR[:PORT|:LO-HI] |"
has help-revoke out "sbx-bpf revoke CGROUP (ID... | --all)"
has help-expiry out "The kernel ends a grant by itself when its time is up"
"$B" --help >out; has main-help-lists-grant out "  grant     allow a path or an address to a cgroup for a while"
has main-help-lists-revoke out "  revoke    take grants back now"
has main-help-lists-grants out "  grants    list a cgroup's grants"
exit 0
