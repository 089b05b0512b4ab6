#!/bin/sh
# `make bench` (SBX_BENCH_ONLY=startup): how long starting a command in a
# sandbox takes, from fork() to the command's exit, against starting it in
# bubblewrap and starting it bare. Runs as root in the VM
# (tests/vm/init.sh); see bench/README.md.
#
# Conditions, each timed by startbench (clock_gettime around fork, exec
# and waitpid) over SBX_BENCH_RUNS runs (default 100; SBX_BENCH_LOAD_RUNS,
# default 30, for own, which loads and verifies every program each time:
# seconds per run under TCG) in SBX_BENCH_ROUNDS chunks; the table shows
# p50, p95 and mean over all the runs:
#   true     /bin/true
#   version  sbx-bpf version: the binary's own exec and exit, what no
#            change to run's work can take off
#   bwrap    bwrap --ro-bind / / /bin/true
#   pinned   sbx-bpf run --policy P -- /bin/true with a daemon running:
#            run loads no BPF, it takes a policy id and puts the rules in
#            the pinned maps
#   own      the same with no daemon and nothing pinned: run loads and
#            attaches its own programs, and they go after it exits (a
#            child of run holds their links while the kernel detaches
#            them: seconds on 6.1 and 6.12, see unload_later in run.c).
#            Its runs follow each other, so a run's load may overlap the
#            one before's detaching, as a user's back-to-back runs do.
# P has 10 denyRead rules and allowWrite $B (the open benchmark's smallest
# policy). Each round runs true, version, bwrap and own (nothing pinned),
# in an order rotated every round, and, with a daemon started for it,
# pinned; the order of the two halves alternates.
# shellcheck disable=SC2086,SC2119 # $CONDS is a word list; daemon_start takes no arguments here
BENCH=startup
B=/tmp/bench-startup
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
RUNS=${SBX_BENCH_RUNS:-100}
LOAD_RUNS=${SBX_BENCH_LOAD_RUNS:-30}
ROUNDS=${SBX_BENCH_ROUNDS:-5}
PER=$(((RUNS + ROUNDS - 1) / ROUNDS))
PER_LOAD=$(((LOAD_RUNS + ROUNDS - 1) / ROUNDS))
CMD=/bin/true
POLICY=$B/policy.json
UNPINNED="true version bwrap own"

cleanup() { unload_all; }
trap cleanup EXIT

gen_policy() {
	awk -v w="$B" 'BEGIN {
		printf "{\n  \"filesystem\": {\n    \"allowWrite\": [\"%s\"],\n    \"denyRead\": [\n", w
		for (i = 0; i < 10; i++)
			printf "      \"/bench/deny/r%05d\"%s\n", i, i < 9 ? "," : ""
		printf "    ]\n  }\n}\n"
	}' >"$POLICY"
}

# The command line timed in condition $1.
cond_cmd() {
	case $1 in
	true) echo "$CMD" ;;
	bwrap) echo "bwrap --ro-bind / / $CMD" ;;
	version) echo "sbx-bpf version" ;;
	pinned | own) echo "sbx-bpf run --policy $POLICY -- $CMD" ;;
	esac
}

# One chunk of runs of condition $1 (PER, or PER_LOAD for own, whose runs
# all do the same work: no warm-up), added to $B/ms-$1.
chunk() {
	n=$PER warm=1
	[ "$1" = own ] && n=$PER_LOAD warm=0
	# shellcheck disable=SC2046 # the command line is split into words on purpose
	startbench -n "$n" --warmup "$warm" --raw "$B/ms-$1" -- $(cond_cmd "$1") >"$B/out" 2>"$B/err" ||
		fail "$1: $(cat "$B/err")"
	unloads_wait	# own's last run's links: not under the next condition's figures
	CHUNK="$CHUNK $1=$(field p50_ms "$B/out")"
}

# sbx-probe's count of BPF programs in the kernel, with ARGS… as a prefix (a sandbox).
progs() { unloads_wait; sbx-probe bpf-progs 2>"$B/err" || fail "sbx-probe bpf-progs: $(cat "$B/err")"; }
# The kernel's program count while a run's command is running, counted from
# outside (a sandbox may not call bpf()): its cgroup has a process once the
# programs are in.
progs_during_run() {
	sbx-bpf run --name bench-progs --policy "$POLICY" -- sleep 60 2>/dev/null &
	rp=$!
	for i in $(seq 600); do [ -n "$(cat /sys/fs/cgroup/sbx-bpf/bench-progs/cgroup.procs 2>/dev/null)" ] && break; sleep 0.1; done
	progs
	kill "$rp"
	wait "$rp" 2>/dev/null
}

unload_all
into_session
mkdir -p "$B" /bench/deny
echo secret >/bench/deny/r00000
gen_policy
CONDS="true version bwrap pinned own"
no_bwrap=
if ! command -v bwrap >/dev/null; then
	no_bwrap="bwrap is not installed (bubblewrap, scripts/vm.sh ROOTFS_PKGS)"
elif ! bwrap --ro-bind / / "$CMD" 2>"$B/err"; then
	no_bwrap="bwrap does not run here ($(cat "$B/err"))"
fi
if [ -n "$no_bwrap" ]; then
	note "$no_bwrap: no bubblewrap row"
	CONDS=$(for c in $CONDS; do [ "$c" = bwrap ] || printf '%s ' "$c"; done)
fi
UNPINNED=$(for c in $UNPINNED; do case " $CONDS " in *" $c "*) echo "$c" ;; esac; done)
NU=$(echo $UNPINNED | wc -w)

# Both ways of running enforce the policy; with a daemon, run loads no program.
out=$(sbx-bpf run --policy "$POLICY" -- sbx-probe open /bench/deny/r00000 2>"$B/err")
[ "$out" = EACCES ] || fail "own: open /bench/deny/r00000 gave '$out', not EACCES: $(cat "$B/err")"
n0=$(progs)
n1=$(progs_during_run)
[ "$n1" -gt "$n0" ] || fail "own: $n0 programs outside, $n1 inside: run loaded nothing?"
daemon_start
out=$(sbx-bpf run --policy "$POLICY" -- sbx-probe open /bench/deny/r00000 2>"$B/err")
[ "$out" = EACCES ] || fail "pinned: open /bench/deny/r00000 gave '$out', not EACCES: $(cat "$B/err")"
n0=$(progs)
n1=$(progs_during_run)
[ "$n1" -eq "$n0" ] || fail "pinned: $n0 programs outside, $n1 inside: run loaded programs of its own"
unload_all
echo "checked: run enforces the policy with and without a daemon, and loads no program with one"
echo "from cgroup $(sed -n 's/^0:://p' /proc/self/cgroup)"
echo "$ROUNDS rounds of $PER runs per condition (plus 1 untimed), of $PER_LOAD for own; conditions: $CONDS"

for c in $CONDS; do : >"$B/ms-$c"; done
r=0
while [ $r -lt "$ROUNDS" ]; do
	CHUNK=
	if [ $((r % 2)) -eq 0 ]; then
		for c in $(rotate $((r % NU)) $UNPINNED); do chunk "$c"; done
		daemon_start; chunk pinned; unload_all
	else
		daemon_start; chunk pinned; unload_all
		for c in $(rotate $((r % NU)) $UNPINNED); do chunk "$c"; done
	fi
	echo "round $((r + 1))/$ROUNDS p50 ms:$CHUNK"
	r=$((r + 1))
done

REF=bwrap
case " $CONDS " in *" bwrap "*) ;; *) REF=true ;; esac
for c in $CONDS; do
	case $c in
	true) printf '%s (no sandbox)' "$CMD" ;;
	version) printf 'sbx-bpf version (no sandbox)' ;;
	bwrap) printf 'bwrap --ro-bind / / %s' "$CMD" ;;
	pinned) printf 'sbx-bpf run, daemon running' ;;
	own) printf 'sbx-bpf run, own programs' ;;
	esac
	printf '\t%s\n' "$(pct_file "$B/ms-$c")"
done >"$B/rows"
ref=$(pct_file "$B/ms-$REF")
echo
echo "## Start-up: fork() to exit of one command, kernel $(uname -r)"
awk -F '\t' -v ref="$ref" -v refname="$REF" '
	BEGIN {
		split(ref, R, " ")
		printf "%-34s %9s %9s %9s %6s  %s\n", "condition", "p50 ms", "p95 ms", "mean ms", "runs",
			"p50 / p95 vs " refname
	}
	{
		split($2, v, " ")
		printf "%-34s %9.2f %9.2f %9.2f %6d  %5.2f / %5.2f\n", $1, v[1], v[2], v[3], v[4],
			v[1] / R[1], v[2] / R[2]
	}' "$B/rows"
echo
echo "p50, p95: nearest-rank percentiles of all runs; a run is fork() to waitpid() of the whole"
echo "command (for sbx-bpf run: policy, cgroup, rules in, $CMD, cleanup). With a daemon running, run"
echo "loads nothing, and waits for the daemon's last events only if the sandbox counted a violation"
echo "(feed_drain in userspace/run.c); without one it loads and verifies its own programs."
if [ "${SBX_BENCH_CLOCK:-icount}" = icount ]; then
	echo "Under icount 1 ms is 1,000,000 guest instructions (all of them: run's, the command's, the kernel's)."
else
	echo "Figures are from QEMU TCG (emulated CPU): only the ratios mean anything."
fi

# Where a run's start-up goes (SBX_TRACE_PHASES: run prints its clock at
# each phase's end): each phase's median over $1 runs, so that work of the
# daemon's once-a-second tick, which lands in whichever phase it falls in,
# does not stand for the phase. "idle": of that time, how much the CPUs sat
# idle (the kernel's count over all CPUs, in 10 ms steps; the benchmarks'
# guest has one): under -icount an idle guest's
# clock jumps to its next timer, so a kernel that waits (a grace period)
# shows as time no instruction ran.
phases() {
	rm -f "$B"/phase-* "$B"/faults-* "$B"/idle-*
	i=0
	while [ $i -lt "$1" ]; do
		# Into a file, read after: an awk reading a pipe would start (exec, ld.so) during
		# the run, and its instructions would land in whichever phase it was scheduled in.
		env $PHASE_ENV SBX_TRACE_PHASES=1 sbx-bpf run --policy "$POLICY" -- "$CMD" 2>"$B/trace" >/dev/null
		awk '$2 == "phase" { if (prev) print $3, ($4 - prev) / 1e6, $5 - pf, ($6 - pi) * 10; prev = $4; pf = $5; pi = $6 }' \
			"$B/trace" >"$B/phases"
		while read -r name v f idle; do
			echo "$v" >>"$B/phase-$name"
			echo "$f" >>"$B/faults-$name"
			echo "$idle" >>"$B/idle-$name"
		done <"$B/phases"
		i=$((i + 1))
	done
	printf '  %-12s %12s %8s %10s\n' phase time faults "idle"
	while read -r name v f idle; do
		printf '  %-12s %12.3f ms %8s %7s ms\n' "$name" "$(med_min_max "$B/phase-$name" | awk '{ print $1 }')" \
			"$(med_min_max "$B/faults-$name" | awk '{ print $1 }')" \
			"$(med_min_max "$B/idle-$name" | awk '{ print $1 }')"
	done <"$B/phases" >"$B/table"
	cat "$B/table"
	# Under icount the sum less the idle time is the instructions the guest ran.
	awk '{ t += $2; i += $5 } END { printf "  %-12s %12.3f ms %8s %7d ms   (under icount: %.1f M instructions)\n", "all", t, "", i, t - i }' \
		"$B/table"
}
echo
echo "## A run's phases, daemon running (each phase's time from the end of the one before; median of 9 runs)"
daemon_start
phases 9
unload_all
echo "## The same, own programs (one run)"
phases 1
# A load reads the kernel's BTF digest from its cache (userspace/kbtf.h),
# which the runs above filled; a kernel's first load builds it from the
# whole BTF and writes it. SBX_BTF_CACHE=off builds it without writing it.
echo "## The same, own programs, the BTF digest built (a kernel's first load; SBX_BTF_CACHE=off; one run)"
unload_all	# the last run's programs off their hooks: their detaching would land in this run's load
PHASE_ENV=SBX_BTF_CACHE=off phases 1

# SBX_BENCH_STARTUP_LIBBPF=1: inside the load, one more run with
# SBX_TRACE_LIBBPF, which stamps each of libbpf's messages with the clock
# (instructions, under icount). The time from one message to the next is put
# down to the step the first one names: "found target candidate" is (the
# rest of) a search of the kernel's BTF for one type (CO-RE), "created successfully"
# the next map's creation, a "skipped loading" or the last relocation the
# verifying of the programs that follow. Printing a message costs about
# 7,700 instructions, so groups of many messages read high.
libbpf_steps() {
	unload_all	# the last run's programs detached: their unloading would land in this run's attaching
	SBX_TRACE_PHASES=1 SBX_TRACE_LIBBPF=1 sbx-bpf run --policy "$POLICY" -- "$CMD" 2>"$B/ltrace" >/dev/null
	awk '$1 == "libbpf" || $2 == "phase" { t = ($1 == "libbpf") ? $2 : $4; if (p) printf "%d %s\n", t - p, prev; p = t
		prev = ($1 == "libbpf") ? substr($0, index($0, "libbpf: ") + 8) : "(sbx-bpf) phase " $3 }' \
		"$B/ltrace" >"$B/steps"
	echo "## Inside one load: libbpf's steps (SBX_BENCH_STARTUP_LIBBPF=1; M instructions, count)"
	echo "(a step is named by the message or phase end that opens it; see bench/README.md)"
	awk '{ k = "other messages" }
		/found target candidate/ { k = "CO-RE: a search of the kernel BTF for one type" }
		/created successfully/ { k = "maps: creating the next one" }
		/skipped loading|relocated, imm/ { k = "programs: verifying (after a skip or the last relocation)" }
		/^[0-9]+ \(sbx-bpf\) phase/ { k = "sbx-bpf: " $4 }
		{ s[k] += $1; n[k]++ }
		END { for (k in s) if (s[k] >= 1e6) printf "  %9.1f %5d  %s\n", s[k] / 1e6, n[k], k }' "$B/steps" | sort -rn
	echo "### The 15 largest steps"
	sort -rn "$B/steps" | head -15 | awk '{ v = $1; $1 = ""; printf "  %9.1f %s\n", v / 1e6, substr($0, 2, 110) }'
}
[ "${SBX_BENCH_STARTUP_LIBBPF:-0}" = 1 ] && libbpf_steps
echo "Reproduce: SBX_BENCH_ONLY=startup make bench KERNEL=$(matrix_kernel)"
