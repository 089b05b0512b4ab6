# libbpf relocates the programs against a cut of the kernel's BTF
# (userspace/corebtf.h): the kernel's types named like ours, what they hold
# by value, and named shells behind pointers. It must relocate every
# program exactly as the whole BTF does. The cut is the loader's digest of
# the kernel's BTF (userspace/kbtf.h), built from the whole BTF on a
# kernel's first load and read from its cache (/run/sbx-bpf/kernel.btf)
# after. The loader reads the whole BTF through bpf(2) (the kernel's own
# object, in one copy), not through its file, both to build the digest and
# with SBX_TEST_FULL_BTF=1 (where libbpf still reads the file for CO-RE).
# Three daemon-less runs: the digest built (no cache yet), read from the
# cache, and the whole BTF (SBX_TEST_FULL_BTF=1). Every program of ours
# has the same instructions in all three (the kernel's tag of them, map
# references aside) and is attached to the same kernel function (its
# attach BTF ID, which the loader maps from the digest's IDs back to the
# kernel's); the runs with the digest did relocate against it (libbpf's
# candidates carry the cut's type IDs, not the kernel's); no program was
# refused on the way. The kernel type IDs the walk casts to with plain
# loads (6.2+) are not in the instructions but in .rodata: the loader's
# (its trace) must be the IDs libbpf found in the whole BTF. Then a cache
# file spoilt, or writable by others, is not read but replaced, and a run
# after it still enforces (EACCES and its event).
# e2e: programs=own
. /sbx/tests/e2e/lib.sh

echo "{ \"filesystem\": { \"allowWrite\": [ \"$W\" ] } }" >"$W/p.json"

# load NAME [VAR=VALUE…]: one run's programs, "name tag attach" sorted, to $W/NAME.tags, and its libbpf
# trace to $W/NAME.err. The run holds its programs until the test has listed them.
load() {
	n=$1
	shift
	wait_unloads 1200 || fail "$n/unloaded" "an earlier run's programs are still there"
	progstats >"$W/$n.before" || fail "$n/progstats" "progstats failed"
	env "$@" SBX_TRACE_LIBBPF=1 SBX_TRACE_PHASES=1 sbx-bpf run --policy "$W/p.json" -- \
		sh -c 'touch "$1.up"; while [ ! -e "$1.go" ]; do sleep 0.1; done' sh "$W/$n" 2>"$W/$n.err" &
	pid=$!
	wait_for "$W/$n.up" 1200 || fail "$n/started" "$(tail -c 600 "$W/$n.err")"
	progstats >"$W/$n.all" || fail "$n/progstats" "progstats failed"
	touch "$W/$n.go"
	wait "$pid"
	check "$n/exit" "$?" 0
	# Ours: the programs that were not there before the run.
	awk 'FILENAME == ARGV[1] { split($1, a, "="); old[a[2]] = 1; next }
	     { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	       if (!(v["id"] in old)) print v["name"], v["tag"], v["attach"] }' "$W/$n.before" "$W/$n.all" | sort >"$W/$n.tags"
}

CACHE=/run/sbx-bpf/kernel.btf
rm -f "$CACHE"
load built SBX_TEST_FULL_BTF=0
load cut SBX_TEST_FULL_BTF=0
load full SBX_TEST_FULL_BTF=1

# digest NAME: what run NAME's trace says of the kernel's BTF
digest() { sed -n 's/.*sbx-bpf: note kernel-btf: //p' "$W/$1.err" | head -1; }
case $(digest built) in
*"(the whole BTF read through bpf(2)) built ($CACHE: none yet), written") pass digest-built ;;
*) fail digest-built "$(digest built)" ;;
esac
case $(digest cut) in
*"read from $CACHE"*) pass digest-read ;;
*) fail digest-read "$(digest cut)" ;;
esac
case $(digest full) in
"the whole BTF, "*", read through bpf(2)") pass whole-btf ;;
*) fail whole-btf "$(digest full)" ;;
esac
mode=$(stat -c '%a %U' "$CACHE" 2>&1)
[ "$mode" = "600 root" ] && pass cache-private || fail cache-private "$CACHE: $mode"

nr=$(wc -l <"$W/cut.tags")
[ "$nr" -ge 50 ] && pass loaded || fail loaded "$nr programs of ours in the run with the cut, want 50 or more"
# Every LSM program this kernel takes (`sbx-bpf hooks`: those that fit) was loaded for a kernel function.
sbx-bpf hooks | awk '$3 == "fits" { print substr($2, 1, 15) }' >"$W/lsm.progs"	# the kernel keeps 15 characters of a name
bad=$(awk 'FILENAME == ARGV[1] { lsm[$1] = 1; next } ($1 in lsm) && $3 == 0 { print $1 }' "$W/lsm.progs" "$W/cut.tags")
nr=$(awk 'FILENAME == ARGV[1] { lsm[$1] = 1; next } ($1 in lsm) { n++ } END { print n + 0 }' "$W/lsm.progs" "$W/cut.tags")
[ "$nr" -ge 30 ] && [ -z "$bad" ] && pass attached-to-hooks ||
	fail attached-to-hooks "$nr LSM programs loaded (want 30 or more); with no attach ID: $bad"
for n in built cut; do
	if cmp -s "$W/$n.tags" "$W/full.tags"; then
		pass "$n/same-instructions-and-hooks"
	else
		fail "$n/same-instructions-and-hooks" "$(diff "$W/full.tags" "$W/$n.tags" | head -20 | tr '\n' ' ')"
	fi
done

# The candidate libbpf found for struct task_struct: the kernel's type ID with the whole BTF, another
# with the cut (its types are numbered afresh).
cand() {
	sed -n 's/.*struct task_struct: found target candidate \[\([0-9]*\)\] struct task_struct.*/\1/p' "$1" | sort -u
}
full_id=$(cand "$W/full.err")
cut_id=$(cand "$W/cut.err")
if [ -n "$full_id" ] && [ -n "$cut_id" ] && [ "$full_id" != "$cut_id" ]; then
	pass relocated-against-the-cut
else
	fail relocated-against-the-cut "task_struct's candidate: [$cut_id] with the cut, [$full_id] without"
fi

# The loader's kernel IDs against the whole BTF's candidates, where the walk casts (bpf_rdonly_cast).
if grep -q bpf_rdonly_cast /sys/kernel/btf/vmlinux; then
	ids=$(sed -n 's/.*sbx-bpf: note kernel-ids //p' "$W/cut.err" | head -1)
	bad=
	for s in dentry file mount path task_struct vfsmount; do
		want=$(sed -n "s/.*found target candidate \[\([0-9]*\)\] struct $s in .*/\1/p" "$W/full.err" | sort -u)
		got=$(echo "$ids" | tr ' ' '\n' | sed -n "s/^$s=//p")
		[ -n "$want" ] && [ "$got" = "$want" ] || bad="$bad $s: $got, want $want;"
	done
	[ -z "$bad" ] && pass kernel-ids || fail kernel-ids "${bad:-} (loader: '$ids')"
	# All ten, built and read, against the whole BTF's (its own IDs, found by name).
	whole=$(sed -n 's/.*sbx-bpf: note kernel-ids //p' "$W/full.err" | head -1)
	for n in built cut; do
		got=$(sed -n 's/.*sbx-bpf: note kernel-ids //p' "$W/$n.err" | head -1)
		[ -n "$whole" ] && [ "$got" = "$whole" ] && pass "$n/all-kernel-ids" ||
			fail "$n/all-kernel-ids" "'$got', with the whole BTF '$whole'"
	done
fi

for n in built cut full; do
	if grep -q 'BPF program load failed\|failed to load' "$W/$n.err"; then
		fail "$n/nothing-refused" "$(grep -m3 'load failed\|failed to load' "$W/$n.err" | tr '\n' ' ')"
	else
		pass "$n/nothing-refused"
	fi
done

# A cache file that is spoilt (a byte of its BTF), or that others could write, is not read: the
# digest is built again and the file replaced; the run enforces all the same (EACCES and its event).
mkdir -p "$W/deny"
echo secret >"$W/deny/f"
spoilt() {
	n=$1 why=$2
	wait_unloads 1200 || fail "$n/unloaded" "an earlier run's programs are still there"
	out=$(SBX_TRACE_PHASES=1 sbx-bpf run --events "$W/$n.json" --deny-read "$W/deny" -- \
		sbx-probe open "$W/deny/f" 2>"$W/$n.err")
	case $(digest "$n") in
	*"built ($CACHE: $why), written"*) pass "$n/rebuilt" ;;
	*) fail "$n/rebuilt" "$(digest "$n"), want '$why'" ;;
	esac
	check "$n/errno" "$out" EACCES
	check_json "$n/event" "$W/$n.json" \
		"length == 1 and .[0].verdict == \"denied\" and .[0].errno == 13 and .[0].path == \"$W/deny/f\""
	mode=$(stat -c '%a' "$CACHE")
	[ "$mode" = 600 ] && pass "$n/private-again" || fail "$n/private-again" "mode $mode"
}
printf '\377\377\377\377\377\377\377\377' |
	dd of="$CACHE" bs=1 seek=$(($(stat -c %s "$CACHE") - 100)) conv=notrunc 2>/dev/null
spoilt spoilt-bytes "its sum does not match"
chmod 0666 "$CACHE"
spoilt world-writable "others can write it"
rm -rf "$W"
