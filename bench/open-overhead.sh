#!/bin/sh
# `make bench`: what sbx-bpf's lsm/file_open costs an open(2), outside and
# inside a sandbox, against a kernel with no sbx-bpf programs at all. Runs as
# root in the VM (init's child, like tests/vm/demo.sh); output goes to the
# console and back to the host. See bench/README.md.
#
# Conditions, interleaved round by round (the starting condition rotates, so
# drift over the run does not favour one of them); each round runs openbench
# for SBX_BENCH_SECONDS in every condition, and the table shows the medians:
#   baseline     no sbx-bpf programs loaded
#   outside      programs loaded for a holder sandbox; openbench in no sandbox
#   rules-N      openbench inside a sandbox whose policy has N denyRead rules
# shellcheck disable=SC2086 # $FILES and $CONDS are word lists on purpose
export PATH="/sbx/bin:$PATH"
ROUNDS=${SBX_BENCH_ROUNDS:-5}
SECS=${SBX_BENCH_SECONDS:-1.5}
B=/tmp/bench
RULES="10 1000 10000"
CONDS="baseline outside"
for n in $RULES; do CONDS="$CONDS rules-$n"; done
# Allowed files at realistic depths, each walked to its end by the matcher.
FILES="/usr/lib/x86_64-linux-gnu/libc.so.6 /etc/passwd $B/a/b/c/d/f"

fail() { echo "FAIL bench/open-overhead: $*"; exit 1; }

# $B/policy-N.json: N denyRead rules on paths that are never opened.
gen_policy() {
	awk -v n="$1" -v w="$B" 'BEGIN {
		printf "{\n  \"filesystem\": {\n    \"allowWrite\": [\"%s\"],\n    \"denyRead\": [\n", w
		for (i = 0; i < n; i++)
			printf "      \"/bench/deny/r%05d\"%s\n", i, i < n - 1 ? "," : ""
		printf "    ]\n  }\n}\n"
	}' >"$B/policy-$1.json"
}

# Programs loaded, sandbox listed, this shell outside it: a holder sandbox
# that sleeps. Its READY file is written from inside, so setup is complete.
holder_start() {
	rm -f "$B/READY"
	sbx-bpf run --name bench-holder --policy "$B/policy-10.json" -- \
		sh -c "touch $B/READY && exec sleep 3600" >"$B/holder.log" 2>&1 &
	HOLDER=$!
	i=0
	while [ ! -e "$B/READY" ]; do
		if ! kill -0 "$HOLDER" 2>/dev/null || [ $i -ge 600 ]; then
			echo "holder sandbox not ready: $(cat "$B/holder.log")" >&2
			return 1
		fi
		i=$((i + 1))
		sleep 0.1
	done
}

# run forwards SIGTERM to the sleep, then removes the sandbox and its programs.
holder_stop() {
	kill "$HOLDER"
	wait "$HOLDER"
	[ ! -e /sys/fs/cgroup/sbx-bpf/bench-holder ] || { echo "holder sandbox still there" >&2; return 1; }
}

# Run openbench once in condition $1; sets OPS to its ops/s.
measure() {
	case $1 in
	baseline)
		if pgrep -x sbx-bpf >/dev/null; then
			echo "an sbx-bpf is running during the baseline" >&2
			return 1
		fi
		openbench --seconds "$SECS" $FILES ;;
	outside)
		holder_start && openbench --seconds "$SECS" $FILES && holder_stop ;;
	rules-*)
		sbx-bpf run --name bench --policy "$B/policy-${1#rules-}.json" -- \
			openbench --seconds "$SECS" $FILES ;;
	esac >"$B/out" 2>"$B/err" || fail "$1: $(cat "$B/out" "$B/err")"
	OPS=$(sed -n 's/^ops_per_sec=\([0-9.]*\) .*/\1/p' "$B/out")
	[ -n "$OPS" ] || fail "$1: no result in '$(cat "$B/out")'"
}

# Print $2..$# rotated left by $1.
rotate() {
	n=$1; shift
	while [ "$n" -gt 0 ]; do x=$1; shift; set -- "$@" "$x"; n=$((n - 1)); done
	echo "$@"
}

# Where a user's shell sits on a systemd host (level 3), not in the root
# cgroup: outside a sandbox the hook looks up each ancestor level.
CG=/sys/fs/cgroup/user.slice/user-0.slice/session-1.scope
{ mkdir -p "$CG" && echo $$ >"$CG/cgroup.procs"; } || fail "cannot move into $CG"

mkdir -p "$B/a/b/c/d" /bench/deny
echo data >"$B/a/b/c/d/f"
for f in $FILES; do [ -r "$f" ] || fail "$f missing"; done

# Every policy really denies its first and last rule, and allows the files.
for n in $RULES; do
	gen_policy "$n"
	for r in r00000 "r$(printf %05d $((n - 1)))"; do
		echo secret >"/bench/deny/$r"
		out=$(sbx-bpf run --name bench --policy "$B/policy-$n.json" -- sbx-probe open "/bench/deny/$r" 2>"$B/err")
		[ "$out" = EACCES ] || fail "policy-$n: open /bench/deny/$r gave '$out', not EACCES: $(cat "$B/err")"
	done
	sbx-bpf run --name bench --policy "$B/policy-$n.json" -- openbench --iterations 10 $FILES \
		>/dev/null 2>"$B/err" || fail "policy-$n: openbench failed inside the sandbox: $(cat "$B/err")"
done

echo "checked: each policy denies its first and last rule and allows the files"
echo "open+close of: $FILES"
echo "from cgroup $(sed -n 's/^0:://p' /proc/self/cgroup) (sandboxes: /sbx-bpf/NAME)"
echo "$ROUNDS rounds x ${SECS}s per condition; conditions: $CONDS"
for c in $CONDS; do : >"$B/ops-$c"; done
r=0
while [ $r -lt "$ROUNDS" ]; do
	line="round $((r + 1))/$ROUNDS:"
	for c in $(rotate "$r" $CONDS); do
		measure "$c"
		echo "$OPS" >>"$B/ops-$c"
		line="$line $c=$OPS"
	done
	echo "$line"
	r=$((r + 1))
done

# condition label, median, min, max
for c in $CONDS; do
	case $c in
	baseline) label="baseline (no sbx-bpf)"; target="-" ;;
	outside) label="outside any sandbox"; target="<= 1%" ;;
	rules-*) label="inside, $(echo "${c#rules-}" | sed ':a; s/\B[0-9]\{3\}\>/,&/; ta') rules"; target="<= 10%" ;;
	esac
	sort -n "$B/ops-$c" | awk -v l="$label" -v t="$target" '{ a[NR] = $1 } END {
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%s\t%s\t%s\t%s\t%s\n", l, m, a[1], a[NR], t }'
done >"$B/medians"

echo
echo "## open(O_RDONLY)+close() throughput, kernel $(uname -r)"
awk -F '\t' '
	NR == 1 { base = $2 }
	{ med[NR] = $2; lo[NR] = $3; hi[NR] = $4; lab[NR] = $1; tgt[NR] = $5 }
	END {
		printf "%-24s %12s %10s %7s %9s %7s  %s\n", "condition", "median ops/s", "ns/op", "ratio",
			"overhead", "spread", "target"
		for (i = 1; i <= NR; i++)
			printf "%-24s %12.1f %10.1f %7.3f %8.1f%% %6.1f%%  %s\n", lab[i], med[i], 1e9 / med[i],
				med[i] / base, (base / med[i] - 1) * 100, (hi[i] - lo[i]) / med[i] * 100, tgt[i]
	}' "$B/medians"
echo
echo "ratio = ops/s relative to baseline; overhead = extra time per open+close;"
echo "spread = (max - min) / median over the $ROUNDS rounds: overheads below it are noise."
echo "Figures are from QEMU TCG (emulated CPU): only the ratios mean anything."
echo "Reproduce: make bench KERNEL=$(uname -r | cut -d. -f1,2)"
