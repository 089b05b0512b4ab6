# libbpf relocates the programs against a cut of the kernel's BTF
# (userspace/corebtf.h): the kernel's types named like ours, what they hold
# by value, and named shells behind pointers. It must relocate every
# program exactly as the whole BTF does. Two daemon-less runs, one with the
# cut and one with the whole BTF (SBX_TEST_FULL_BTF=1): every program of
# ours has the same instructions in both (the kernel's tag of them, map
# references aside), the run with the cut did relocate against it
# (libbpf's candidates carry the cut's type IDs, not the kernel's), and no
# program was refused on the way. The kernel type IDs the walk casts to
# with plain loads (6.2+) are not in the instructions but in .rodata: the
# loader's (its trace) must be the IDs libbpf found in the whole BTF.
# e2e: programs=own
. /sbx/tests/e2e/lib.sh

echo "{ \"filesystem\": { \"allowWrite\": [ \"$W\" ] } }" >"$W/p.json"

# load NAME [VAR=VALUE…]: one run's programs, "name tag" sorted, to $W/NAME.tags, and its libbpf
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
	       if (!(v["id"] in old)) print v["name"], v["tag"] }' "$W/$n.before" "$W/$n.all" | sort >"$W/$n.tags"
}

load cut SBX_TEST_FULL_BTF=0
load full SBX_TEST_FULL_BTF=1

nr=$(wc -l <"$W/cut.tags")
[ "$nr" -ge 50 ] && pass loaded || fail loaded "$nr programs of ours in the run with the cut, want 50 or more"
if cmp -s "$W/cut.tags" "$W/full.tags"; then
	pass same-instructions
else
	fail same-instructions "$(diff "$W/full.tags" "$W/cut.tags" | head -20 | tr '\n' ' ')"
fi

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
fi

for n in cut full; do
	if grep -q 'BPF program load failed\|failed to load' "$W/$n.err"; then
		fail "$n/nothing-refused" "$(grep -m3 'load failed\|failed to load' "$W/$n.err" | tr '\n' ' ')"
	else
		pass "$n/nothing-refused"
	fi
done
rm -rf "$W"
