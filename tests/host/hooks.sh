#!/usr/bin/env bash
# The hook check that needs no boot: for every kernel of the matrix (each the
# newest of its suite, as the VM rig resolves them), its BTF out of Debian's
# packaged vmlinuz, and `sbx-bpf hooks --btf` on it. Every hook the object
# attaches to must exist there (or be one the kernel does not need) and have a
# variant whose arguments match. The verdict is checked against bpftool's
# own reading of both BTFs: the kernel's bpf_lsm_<hook> and the program's
# recorded prototype (sbx_hook__<program>) have the same number of arguments.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
B=$BUILD/sbx-bpf
OBJ=$BUILD/sbx.bpf.o
T=hooks-btf
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

# "NAME VLEN" for every FUNC_PROTO reached from FUNCs named $2* or VARs named $2*, in raw dump $1.
protos() {
	awk -v pfx="$2" '
	match($0, /^\[[0-9]+\] [A-Z_]+ /) {
		id = substr($1, 2, length($1) - 2); kind[id] = $2
		if (match($0, /(type_id|ret_type_id)=[0-9]+/)) { s = substr($0, RSTART, RLENGTH); sub(/.*=/, "", s); to[id] = s }
		if (match($0, /vlen=[0-9]+/)) vlen[id] = substr($0, RSTART + 5, RLENGTH - 5)
		name = $3; gsub("\047", "", name)
		if (($2 == "FUNC" || $2 == "VAR") && index(name, pfx) == 1) want[substr(name, length(pfx) + 1)] = id
	}
	END {
		for (n in want) {
			id = to[want[n]]
			for (i = 0; i < 8 && kind[id] != "FUNC_PROTO"; i++) id = to[id]
			if (kind[id] == "FUNC_PROTO") print n, vlen[id]
		}
	}' "$1"
}

bpftool btf dump file "$OBJ" format raw >"$W/obj.txt" || { fail object-btf "bpftool cannot read $OBJ"; exit 0; }
protos "$W/obj.txt" sbx_hook__ | sort >"$W/records"
[ "$(wc -l <"$W/records")" -gt 40 ] && pass object-records || fail object-records "$(wc -l <"$W/records") records"

# Expected variants: the hooks whose prototypes differ across the matrix (docs/design.md).
declare -A WANT=(
	[6.1]="perf_event_open=task_perf_event_open_attr bpf=task_bpf inode_setattr=fs_inode_setattr"
	[6.12]="perf_event_open=task_perf_event_open bpf=task_bpf inode_setattr=fs_inode_setattr_idmap"
	[7.x]="perf_event_open=task_perf_event_open bpf=task_bpf_kernel inode_setattr=fs_inode_setattr_idmap"
)

for k in $("$ROOT/scripts/vm.sh" list); do
	btf=$("$ROOT/scripts/vm.sh" btf "$k" 2>"$W/fetch.err") ||
		{ fail "$k/btf" "cannot get the kernel's BTF: $(tail -3 "$W/fetch.err")"; continue; }
	echo "# $k: $(basename "$(dirname "$btf")")"
	"$B" --json hooks --btf "$btf" >"$W/$k.json"
	rc=$?
	[ $rc -eq 0 ] && pass "$k/every-hook-fits" ||
		fail "$k/every-hook-fits" "exit $rc; missing: $(jq -c '.missing' "$W/$k.json" 2>&1 | head -c 600)"
	bpftool btf dump file "$btf" format raw >"$W/$k.txt" || { fail "$k/bpftool" "cannot read $btf"; continue; }
	protos "$W/$k.txt" bpf_lsm_ | sort >"$W/$k.kernel"

	# bpftool's count of the kernel's arguments = the chosen program's.
	bad=$(jq -r '.hooks[] | select(.fit == "fits") | "\(.hook) \(.program)"' "$W/$k.json" | while read -r h p; do
		kv=$(awk -v h="$h" '$1 == h { print $2 }' "$W/$k.kernel")
		pv=$(awk -v p="$p" '$1 == p { print $2 }' "$W/records")
		[ -n "$kv" ] && [ "$kv" = "$pv" ] || echo "$h: kernel ${kv:-none}, $p ${pv:-none}"
	done)
	[ -z "$bad" ] && pass "$k/argument-counts" || fail "$k/argument-counts" "$bad"
	# What doctor calls absent-but-not-needed is really absent.
	bad=$(jq -r '.hooks[] | select(.fit == "absent (not needed)") | .hook' "$W/$k.json" | while read -r h; do
		awk -v h="$h" '$1 == h { found = 1 } END { exit !found }' "$W/$k.kernel" && echo "$h"
	done)
	[ -z "$bad" ] && pass "$k/absent-really-absent" || fail "$k/absent-really-absent" "$bad"
	for w in ${WANT[$k]}; do
		got=$(jq -r --arg h "${w%%=*}" '.hooks[] | select(.hook == $h) | .program' "$W/$k.json")
		[ "$got" = "${w#*=}" ] && pass "$k/variant-${w%%=*}" || fail "$k/variant-${w%%=*}" "got '$got', want '${w#*=}'"
	done
	generic=$(jq -r '.hooks[] | select(.protection == "part of the enforcement would be missing") | .hook' "$W/$k.json")
	[ -z "$generic" ] && pass "$k/every-hook-says-what-it-protects" || fail "$k/every-hook-says-what-it-protects" "$generic"
done

# Prototypes no variant covers are tests/unit/test_hooks.c's (kernels made up with libbpf's
# BTF writer). Here: a file that is no BTF is a usage error, not a pass.
printf 'not btf' >"$W/junk"
"$B" hooks --btf "$W/junk" >/dev/null 2>"$W/junk.err"
rc=$?
[ $rc -eq 2 ] && grep -q "cannot read the BTF of $W/junk" "$W/junk.err" && pass junk-btf-refused ||
	fail junk-btf-refused "exit $rc: $(cat "$W/junk.err")"
