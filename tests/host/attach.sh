#!/usr/bin/env bash
# `attach`'s limit flags and domain rules with the real binary: flags, devices,
# the policy's limits, and a daemon to run the resolver of its domain rules,
# are checked before the cgroup, the pinned programs or any file is touched,
# so a bad value exits 2 naming the flag and the value, and domain rules
# without a daemon exit 1, on any host (this one's kernel refuses LSM
# programs: attach cannot get further).
# Prints one "PASS name" / "FAIL name: why" line per check.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${BUILD:-$ROOT/build}/sbx-bpf
T=attach
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
has() { if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1" "no '$3' in: $(head -c 400 "$2")"; fi; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
STATE=/run/sbx-bpf/sandboxes
records() { ls "$STATE" 2>/dev/null | grep -c '^[0-9]*\.json$'; }	# not builtin-HASH.json
V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CG=${V2:-/sys/fs/cgroup}/sbx-host-attach-$$	# never created: nothing gets that far
echo '{ "filesystem": { "denyRead": [ "/nonexistent-sbx/secret" ] } }' >p.json
before=$(records)

# bad NAME MESSAGE ARGS…: exit 2 with the message, and no record written.
bad() {
	local name=$1 msg=$2; shift 2
	"$B" attach "$CG" --policy p.json --pin-dir "$W/pins" "$@" >out 2>err; check "$name-exit-2" "$?" 2
	has "$name-message" err "sbx-bpf: error: $msg"
}
bad memory-2X "attach: --memory 2X: not a size; use a number with an optional K, M, G or T suffix (base 1024), or 'max'" \
	--pids 20 --memory 2X
bad cpu-0 "attach: --cpu 0%: must be at least 1%" --cpu 0%
bad pids-0 "attach: --pids 0: not a number of tasks" --pids 0
bad no-device "attach: --io-write-bps /nonexistent-sbx-disk=1M: /nonexistent-sbx-disk: No such file or directory" \
	--io-write-bps /nonexistent-sbx-disk=1M
bad timeout "attach: --timeout is for 'run' only: an attached cgroup has no command to time" --timeout 5m
echo '{ "limits": { "memory": "lots" } }' >badlim.json
"$B" attach "$CG" --policy badlim.json --pin-dir "$W/pins" >out 2>err; check policy-limit-exit-2 "$?" 2
has policy-limit-position err "badlim.json:1:"
has policy-limit-message err "limits.memory lots: not a size"

"$B" --json attach "$CG" --policy p.json --memory 2X >out 2>/dev/null; check json-exit-2 "$?" 2
jq -e '.error | startswith("attach: --memory 2X: not a size")' out >/dev/null && pass json-error ||
	fail json-error "$(cat out)"

# Limit flags belong to attach alone.
"$B" detach "$CG" --memory 1G >/dev/null 2>&1; check detach-refuses-limits "$?" 2
"$B" list --pids 5 >/dev/null 2>&1; check list-refuses-limits "$?" 2

# Good values get past the checks: the cgroup is then looked up (it does not exist: exit 1).
"$B" attach "$CG" --policy p.json --pin-dir "$W/pins" --cpu 150% --cpu-weight 50 --memory 64M \
	--memory-high 48M --swap-max 0 --pids 20 --io-write-bps .=5M >out 2>err
rc=$?
if grep -q "is not on a block device" err; then	# . on tmpfs or overlayfs: only the io flag differs
	"$B" attach "$CG" --policy p.json --pin-dir "$W/pins" --cpu 150% --memory 64M --pids 20 >out 2>err
	rc=$?
fi
check good-values-exit-1 "$rc" 1
has good-values-reach-the-cgroup err "cannot find cgroup '$CG'"

# The cgroup2 root cannot be a sandbox (the programs look below it), with or
# without limits: refused before the pinned programs are looked for.
if [ -n "$V2" ]; then
	"$B" attach "$V2" --policy p.json --pin-dir "$W/pins" --pids 20 >out 2>err; check root-exit-2 "$?" 2
	has root-message err "is the cgroup2 root, which cannot be a sandbox"
	"$B" attach "$V2" --policy p.json --pin-dir "$W/pins" >out 2>err; check root-without-limits-exit-2 "$?" 2
	has root-without-limits-message err "attach a cgroup below it"
fi
# The programs look for sandboxes at most 31 levels below the root: a cgroup
# at level 32 is refused before the pinned programs are looked for; one at
# level 31 gets past (to the missing pins).
if [ -n "$V2" ] && [ "$(id -u)" = 0 ]; then
	DEEP=$V2/sbx-host-deep-$$ p=$V2/sbx-host-deep-$$
	for i in $(seq 2 32); do p=$p/l$i; done
	if mkdir -p "$p" 2>/dev/null; then
		"$B" attach "$p" --policy p.json --pin-dir "$W/pins" >out 2>err; check level-32-exit-2 "$?" 2
		has level-32-message err "lies 32 levels below the cgroup2 root; the programs look for sandboxes at most 31 levels down"
		"$B" attach "${p%/l32}" --policy p.json --pin-dir "$W/pins" >out 2>err; check level-31-exit-1 "$?" 1
		has level-31-needs-pins err "no usable programs pinned at $W/pins"
		find "$DEEP" -depth -type d -exec rmdir {} + 2>/dev/null
		[ ! -e "$DEEP" ] && pass level-cgroups-removed || fail level-cgroups-removed "$DEEP is left"
	else	# a read-only cgroup2 (a container), as lifecycle.sh
		echo "# attach: no writable cgroup2 here; level checks skipped"
		find "$DEEP" -depth -type d -exec rmdir {} + 2>/dev/null
	fi
fi
# Domain rules need the daemon's resolver: without a daemon, refused before the
# cgroup or the pinned programs are looked at (fail closed, nothing changed).
if [ ! -e /run/sbx-bpf/events.sock ]; then
	echo '{ "network": { "allowedDomains": [ "one.test" ] } }' >dom.json
	"$B" attach "$CG" --policy dom.json --pin-dir "$W/pins" >out 2>err; check domains-no-daemon-exit-1 "$?" 1
	check domains-no-daemon-message "$(cat err)" \
		"sbx-bpf: error: allowedDomains on an attached cgroup need the daemon's resolver: start 'sbx-bpf daemon'"
	"$B" --json attach "$CG" --policy dom.json --pin-dir "$W/pins" >out 2>/dev/null
	jq -e '.error | test("need the daemon.s resolver")' out >/dev/null && pass domains-no-daemon-json ||
		fail domains-no-daemon-json "$(cat out)"
	# deniedDomains under allowAllDomains still have names to refuse.
	echo '{ "network": { "allowAllDomains": true, "deniedDomains": [ "two.test" ] } }' >deny.json
	"$B" attach "$CG" --policy deny.json --pin-dir "$W/pins" >out 2>err; check denied-no-daemon-exit-1 "$?" 1
	has denied-no-daemon-message err "need the daemon's resolver"
	# No names to judge (allowAllDomains alone, IP literals, no network section): no resolver needed.
	nodns() {
		echo "$2" >nodns.json
		"$B" attach "$CG" --policy nodns.json --pin-dir "$W/pins" >out 2>err
		has "no-daemon-needed-$1" err "cannot find cgroup '$CG'"
	}
	nodns allow-all-domains '{ "network": { "allowAllDomains": true } }'
	nodns ip-literal '{ "network": { "allowedDomains": [ "10.1.2.3" ] } }'
	nodns no-names '{ "filesystem": { "denyRead": [ "/nonexistent-sbx/secret" ] } }'
fi
check no-record-written "$(records)" "$before"
[ ! -e "$CG" ] && pass no-cgroup-created || fail no-cgroup-created "$CG exists"

"$B" attach --help >out; check help-exit-0 "$?" 0
has help-limits out "LIMITS: the flags of 'run' but --timeout"
has help-detach-restores out "detach writes back what the files held before"
exit 0
