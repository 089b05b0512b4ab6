#!/bin/sh
# `make bench` (SBX_BENCH_ONLY=cost): what sbx-bpf adds to a file or network
# call, in guest instructions per operation, next to the no-op floor (a
# `return 0` program on every hook sbx-bpf uses) and Landlock. Runs as root
# in the VM (tests/vm/init.sh); see bench/README.md.
#
# Under `make bench` the VM runs with QEMU's -icount shift=0,sleep=off on
# one vCPU: the guest clock advances by exactly 1 ns per instruction, so the
# ns_per_op openbench and connectbench print is instructions per operation,
# and a repeated run agrees to well under 1 %. (SBX_BENCH_CLOCK=wall boots
# without it: then the figures are emulated nanoseconds, and only their
# ratios mean anything.)
#
# Conditions (SBX_BENCH_COST_CONDS), each a fresh launch of every loop:
#   baseline        no BPF-LSM program at all
#   floor           noop-lsm: the trampolines of every hook, nothing else
#   limits          no BPF-LSM program; the loops in a cgroup made as `run`
#                   makes one with no limit given (sbx-bpf/NAME, the memory
#                   controller on for memory.oom.group): what the sandbox's
#                   cgroup costs by itself, as systemd-run's would; the
#                   inside-N columns add what they cost over it ("lim +N")
#   landlock        landlock-run --read / --write /tmp --write /dev (the file
#                   loops; TCP connect with --connect-tcp on 6.7+)
#   outside-run     a `run` sandbox exists (its own programs); the loops run
#                   outside it, in a systemd-like session cgroup
#   outside-daemon  the daemon's programs and one sandbox attached with --fresh
#                   (a container at createRuntime); the loops outside it, as
#                   every other process of such a host
#   outside-judging the same attached without --fresh: reads and writes
#                   through descriptors are judged (file_permission on)
#   inside-10       the loops in `run` under 10 denyRead rules (on the
#                   daemon's programs: each launch loads nothing)
#   inside-10000    the same under 10,000
#   nested-10       (not in the default set) the loops in a cgroup attached
#                   with --fresh below another so attached, both under the
#                   10 rules: every judged call walks the cgroup levels for
#                   its chain of two sandboxes (sbx_current_chain)
#   inside-N-without-HOOK  (not in the default set) inside-N on programs
#                   `run` loads itself with HOOK's left out
#                   (SBX_TEST_DROP_HOOKS, accepted by name): inside-N minus
#                   this is what HOOK's program adds, a per-hook breakdown
# SBX_BENCH_COST_PROFILE=1 adds a per-program profile of every inside-N
# condition, of outside-run and of the floor: each loop launched once more with kernel.bpf_stats_enabled on,
# progstats before and after, minus a launch that runs no loop (what `run`
# and the shell cost), divided by the operations: each program's runs per
# operation and instructions per run (the program alone, not its trampoline).
# The floor's no-op programs, read the same way, give what a program that
# does nothing costs a run with the statistics on: an outside program's
# instructions per run less the no-op's on the same hook is what it adds
# over the floor on each call, to a few instructions, where the launches'
# own totals differ by dozens to hundreds.
# Loops (SBX_BENCH_COST_LOOPS): open (open+close of three files), stat
# (stat+open+close), create (create+close+unlink in an allowWrite
# directory), write (open(O_WRONLY|O_CREAT|O_TRUNC)+close of three files
# there, as a program writes a file out), read (1-byte pread through open descriptors), tcp
# (socket+connect+close to a loopback listener), udp (socket+connect+close).
# shellcheck disable=SC2086 # word lists on purpose
BENCH=cost
B=/tmp/bench-cost
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${SBX_BENCH_ROUNDS:-2}
ITER=${SBX_BENCH_ITERATIONS:-20000}
CONDS=${SBX_BENCH_COST_CONDS:-baseline floor landlock limits outside-run outside-daemon outside-judging inside-10 inside-10000}
LOOPS=${SBX_BENCH_COST_LOOPS:-open stat create write read tcp udp}
FILES="/usr/lib/x86_64-linux-gnu/libc.so.6 /etc/passwd $B/a/b/c/d/f"
ADDR=127.0.0.1
PORT=5000
SERVER=
ATTACHED=/sys/fs/cgroup/bench-attached
NESTED=/sys/fs/cgroup/bench-nested
LIMITS_CG=/sys/fs/cgroup/sbx-bpf/bench-limits

cleanup() {
	[ -z "$SERVER" ] || { kill "$SERVER"; wait "$SERVER"; } 2>/dev/null
	holder_stop 2>/dev/null
	sbx-bpf detach "$ATTACHED" >/dev/null 2>&1
	sbx-bpf detach "$NESTED/inner" >/dev/null 2>&1
	sbx-bpf detach "$NESTED" >/dev/null 2>&1
	rmdir "$ATTACHED" "$NESTED/inner" "$NESTED" "$LIMITS_CG" 2>/dev/null
	unload_all
}
trap cleanup EXIT

# $B/policy-N.json: N denyRead rules never opened, allowWrite $B, the listener allowed.
gen_policy() {
	awk -v n="$1" -v w="$B" -v dst="$ADDR:$PORT" 'BEGIN {
		printf "{\n  \"filesystem\": {\n    \"allowWrite\": [\"%s\"],\n    \"denyRead\": [\n", w
		for (i = 0; i < n; i++)
			printf "      \"/bench/deny/r%05d\"%s\n", i, i < n - 1 ? "," : ""
		printf "    ]\n  },\n  \"network\": { \"allow\": [\"%s\"] }\n}\n", dst
	}' >"$B/policy-$1.json"
}

# The command of loop $1 (a fixed number of operations: the clock is the instruction count).
loop_cmd() {
	case $1 in
	open) echo "openbench --iterations $ITER $FILES" ;;
	stat) echo "openbench --iterations $ITER --stat $FILES" ;;
	create) echo "openbench --iterations $ITER --create $B/w" ;;
	write) echo "openbench --iterations $ITER --write $B/w/out.a $B/w/out.b $B/w/out.c" ;;
	read) echo "openbench --iterations $((ITER * 5)) --read $FILES" ;;
	tcp) echo "connectbench --iterations $ITER --addr $ADDR --port $PORT" ;;
	udp) echo "connectbench --iterations $ITER --udp --addr $ADDR --port $PORT" ;;
	esac
}

# CMD… in condition $1.
in_cond() {
	cond=$1; shift
	case $cond in
	baseline | outside-*) "$@" ;;
	floor) noop-lsm -- "$@" ;;
	limits) sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$LIMITS_CG" "$@" ;;
	nested-*) sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$NESTED/inner" "$@" ;;
	landlock) landlock-run --read / --write /tmp --write /dev ${LANDLOCK_TCP:+--connect-tcp $PORT} -- "$@" ;;
	inside-*-without-*)
		h=${cond##*-without-} n=${cond#inside-}
		SBX_TEST_DROP_HOOKS=$h sbx-bpf run --accept-missing "$h" --name bench-cost \
			--policy "$B/policy-${n%%-without-*}.json" -- "$@" ;;
	inside-*) sbx-bpf run --name bench-cost --policy "$B/policy-${cond#inside-}.json" -- "$@" ;;
	esac
}

# Programs and sandboxes as condition $1 needs them, around the loops, on a quiet guest.
cond_setup() {
	case $1 in
	outside-run) holder_start "$B/policy-10.json" || fail "outside-run: no holder sandbox" ;;
	limits)
		{ echo +memory >/sys/fs/cgroup/cgroup.subtree_control && mkdir -p "${LIMITS_CG%/*}" &&
			echo +memory >"${LIMITS_CG%/*}/cgroup.subtree_control" && mkdir -p "$LIMITS_CG" &&
			echo 1 >"$LIMITS_CG/memory.oom.group"; } 2>"$B/err" || fail "limits: $(cat "$B/err")" ;;
	inside-*-without-*) ;;	# run loads its own, without the hook
	inside-*) daemon_start ;;
	nested-*)
		daemon_start
		mkdir -p "$NESTED/inner"
		for cg in "$NESTED" "$NESTED/inner"; do
			sbx-bpf attach "$cg" --fresh --policy "$B/policy-${1#nested-}.json" \
				>/dev/null 2>"$B/err" || fail "$1: attach $cg: $(cat "$B/err")"
		done ;;
	outside-daemon | outside-judging)
		daemon_start
		mkdir -p "$ATTACHED"
		sbx-bpf attach "$ATTACHED" $( [ "$1" = outside-daemon ] && echo --fresh) --policy "$B/policy-10.json" \
			>/dev/null 2>"$B/err" || fail "$1: attach: $(cat "$B/err")"
		[ "$(sbx-bpf status --json | jq -r .descriptor_judging)" = "$( [ "$1" = outside-daemon ] &&
			echo false || echo true)" ] || fail "$1: descriptor judging is not as the condition says" ;;
	esac
	settle	# what setting up (or the condition before) left the kernel to do, done before a launch
}
cond_teardown() {
	case $1 in
	outside-run) holder_stop || fail "outside-run: the holder did not go" ;;
	limits) rmdir "$LIMITS_CG" || fail "limits: $LIMITS_CG stayed" ;;
	inside-*) unload_all ;;
	nested-*)
		sbx-bpf detach "$NESTED/inner" >/dev/null 2>&1
		sbx-bpf detach "$NESTED" >/dev/null 2>&1
		rmdir "$NESTED/inner" "$NESTED" 2>/dev/null
		unload_all ;;
	outside-daemon | outside-judging)
		sbx-bpf detach "$ATTACHED" >/dev/null 2>&1
		rmdir "$ATTACHED" 2>/dev/null
		unload_all ;;
	esac
}

# The mode= that the command of loop $1 prints.
loop_mode() {
	case $1 in open) echo open ;; stat) echo stat+open ;; create) echo create+unlink ;; *) echo "$1" ;; esac
}

# The loops condition $1 runs: Landlock has no UDP rules, and TCP ones only from ABI 4.
cond_loops() {
	for l in $LOOPS; do
		case "$l:$1" in
		udp:landlock) continue ;;
		tcp:landlock) [ -n "${LANDLOCK_TCP:-}" ] || continue ;;
		esac
		echo "$l"
	done
}

# Every loop once in condition $1, each its own process, in one sandbox; the instructions per
# operation of loop L go to $B/ipo-L-COND.
measure() {
	if [ "$1" = baseline ] && [ -e "$PIN" ]; then
		fail "baseline: sbx-bpf programs are pinned"
	fi
	# The first seconds of a sandbox are the daemon's (it reads the new record once): none of the loops'.
	script="sleep 2"
	for l in $(cond_loops "$1"); do script="$script && $(loop_cmd "$l")"; done
	cond_setup "$1"
	in_cond "$1" sh -c "$script" >"$B/out" 2>"$B/err" || fail "$1: $(cat "$B/out" "$B/err")"
	cond_teardown "$1"
	for l in $(cond_loops "$1"); do
		v=$(sed -n "s/.*ns_per_op=\([0-9.]*\) .* mode=$(loop_mode "$l")\( .*\)*\$/\1/p" "$B/out")
		[ -n "$v" ] || fail "$1: no $l result in '$(cat "$B/out")'"
		echo "$v" >>"$B/ipo-$l-$1"
	done
}

into_session
mkdir -p "$B/a/b/c/d" "$B/w" /bench/deny
echo data >"$B/a/b/c/d/f"
for n in 10 10000; do gen_policy "$n"; done
unload_all
connectbench --serve --addr "$ADDR" --port "$PORT" >/dev/null 2>&1 &
SERVER=$!
sleep 1
# Landlock restricts TCP connect from ABI 4 (6.7) on.
landlock-run --abi 2>/dev/null | awk '{ exit !($NF >= 4) }' && LANDLOCK_TCP=1
# The policies deny what they say (the first and the last rule) before anything is measured.
for n in 10 10000; do
	for r in r00000 "r$(printf %05d $((n - 1)))"; do
		echo secret >"/bench/deny/$r"
		out=$(sbx-bpf run --policy "$B/policy-$n.json" -- sbx-probe open "/bench/deny/$r" 2>"$B/err")
		[ "$out" = EACCES ] || fail "policy-$n: /bench/deny/$r gave '$out', not EACCES: $(cat "$B/err")"
	done
done

clock=${SBX_BENCH_CLOCK:-icount}
echo "kernel $(uname -r), clock: $clock ($( [ $clock = icount ] && echo '1 ns = 1 guest instruction' ||
	echo 'emulated ns: ratios only')), $ITER operations per launch ($((ITER * 5)) for read), $ROUNDS rounds"
for c in $CONDS; do for l in $LOOPS; do : >"$B/ipo-$l-$c"; done; done
r=0
while [ $r -lt "$ROUNDS" ]; do
	for c in $CONDS; do measure "$c"; done
	r=$((r + 1))
	echo "round $r/$ROUNDS done"
done

# "median spread%" of file $1 (spread = (max - min) / median), "- -" when empty.
stat_of() {
	[ -s "$1" ] || { echo "- -"; return; }
	med_min_max "$1" | awk '{ printf "%.1f %.2f\n", $1, $1 ? ($3 - $2) / $1 * 100 : 0 }'
}

echo
echo "## Instructions per operation, kernel $(uname -r) ($clock)"
printf '%-8s' loop
for c in $CONDS; do printf ' %15s' "$c"; done
echo
for l in $LOOPS; do
	printf '%-8s' "$l"
	for c in $CONDS; do printf ' %15s' "$(stat_of "$B/ipo-$l-$c" | awk '{ print $1 }')"; done
	echo
done
echo
echo "## Added per operation: +instructions (% of baseline); outside: x the floor's; inside: x Landlock's, lim +over limits"
printf '%-8s' loop
for c in $CONDS; do [ "$c" = baseline ] || printf ' %30s' "$c"; done
echo
for l in $LOOPS; do
	base=$(stat_of "$B/ipo-$l-baseline" | awk '{ print $1 }')
	floor=$(stat_of "$B/ipo-$l-floor" | awk '{ print $1 }')
	ll=$(stat_of "$B/ipo-$l-landlock" | awk '{ print $1 }')
	lim=$(stat_of "$B/ipo-$l-limits" | awk '{ print $1 }')
	printf '%-8s' "$l"
	for c in $CONDS; do
		[ "$c" = baseline ] && continue
		v=$(stat_of "$B/ipo-$l-$c" | awk '{ print $1 }')
		printf ' %30s' "$(awk -v v="$v" -v b="$base" -v f="$floor" -v L="$ll" -v m="$lim" -v c="$c" 'BEGIN {
			if (v == "-" || b == "-") { print "-"; exit }
			d = v - b; s = sprintf("%+.0f (%+.1f%%)", d, d / b * 100)
			if (c ~ /^outside/ && f != "-" && f - b > 0) s = s sprintf(" %.2fx", d / (f - b))
			if (c ~ /^inside/ && L != "-" && L - b > 0) s = s sprintf(" %.2fx", d / (L - b))
			if (c ~ /^inside/ && m != "-") s = s sprintf(" lim%+.0f", v - m)
			print s }')"
	done
	echo
done

# "name runs time" per program, summed over its ids, from progstats output $1.
prog_sum() {
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		c[v["name"]] += v["run_cnt"]; t[v["name"]] += v["run_time_ns"] }
		END { for (n in c) print n, c[n], t[n] }' "$1"
}

# The programs' runs and time in condition $1 for script $2 (launched once): "name runs time" to $3.
prog_delta() {
	cond_setup "$1"
	sysctl -qw kernel.bpf_stats_enabled=1 || fail "profile: no kernel.bpf_stats_enabled"
	if [ "$1" = floor ]; then
		# noop-lsm's programs live as long as its launch: read from inside it.
		in_cond "$1" sh -c "progstats >$B/ps0 && $2 && progstats >$B/ps1" >"$B/out" 2>"$B/err" ||
			fail "profile $1: $(cat "$B/out" "$B/err")"
	else
		progstats >"$B/ps0" || fail "profile: progstats failed"
		in_cond "$1" sh -c "$2" >"$B/out" 2>"$B/err" || fail "profile $1: $(cat "$B/out" "$B/err")"
		progstats >"$B/ps1" || fail "profile: progstats failed"
	fi
	sysctl -qw kernel.bpf_stats_enabled=0
	cond_teardown "$1"
	prog_sum "$B/ps0" >"$B/ps0.sum"
	prog_sum "$B/ps1" | awk 'NR == FNR { c[$1] = $2; t[$1] = $3; next }
		{ print $1, $2 - c[$1], $3 - t[$1] }' "$B/ps0.sum" - >"$3"
}

profile() {
	for c in $CONDS; do
		case $c in inside-*-without-*) continue ;; inside-* | outside-run | floor) ;; *) continue ;; esac
		prog_delta "$c" "sleep 2" "$B/prof-none"
		for l in $(cond_loops "$c"); do
			prog_delta "$c" "sleep 2 && $(loop_cmd "$l")" "$B/prof-$l"
			ops=$(sed -n "s/.* ops=\([0-9]*\) .*/\1/p" "$B/out")
			[ -n "$ops" ] || fail "profile $c: no ops in '$(cat "$B/out")'"
			echo
			echo "## Per program, $l in $c: $ops operations (kernel $(uname -r))"
			printf '%-28s %10s %12s %12s\n' program runs/op instr/run instr/op
			awk -v ops="$ops" 'NR == FNR { c[$1] = $2; t[$1] = $3; next }
				{ n = $2 - c[$1]; tm = $3 - t[$1]; if (n <= 0) next; s += tm / ops
				  if (tm / ops >= 1) printf "%-28s %10.2f %12.0f %12.0f\n", $1, n / ops, tm / n, tm / ops }
				END { printf "%-28s %10s %12s %12.0f\n", "all", "", "", s }' \
				"$B/prof-none" "$B/prof-$l" | sort -k4 -n -r
		done
	done
}
[ "${SBX_BENCH_COST_PROFILE:-0}" = 0 ] || profile

echo
echo "Spread (max - min) / median over the rounds, worst cell: $(for f in "$B"/ipo-*; do
	stat_of "$f" | awk '{ print $2 }'; done | sort -n | tail -1)%"
echo "Reproduce: SBX_BENCH_ONLY=cost make bench KERNEL=$(matrix_kernel)"
