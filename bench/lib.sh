# Shared by the benchmarks (bench/*.sh): sourced with
# `. "$(dirname "$0")/lib.sh"` after setting BENCH (the name in FAIL lines)
# and B (the scratch directory). POSIX sh: the VM runs them with dash.
# shellcheck shell=sh
export PATH="/sbx/bin:$PATH"
DAEMON=
PIN=/sys/fs/bpf/sbx
# Every `run` sandbox starts sbx-bpf's DNS resolver and steers port 53 to it,
# as on a host with a nameserver: the VM may have none in /etc/resolv.conf,
# so name one (connect-overhead.sh does the same). Nothing is resolved.
export SBX_DNS_UPSTREAM="${SBX_DNS_UPSTREAM:-127.0.0.1:53}"
SOCK=/run/sbx-bpf/events.sock
# Under icount (the default, scripts/vm.sh) repeated measurements agree to well under 1 %, and the VM
# runs several times slower: fewer rounds and runs say as much.
if [ "${SBX_BENCH_CLOCK:-icount}" = icount ]; then
	: "${SBX_BENCH_ROUNDS:=2}" "${SBX_BENCH_RUNS:=20}" "${SBX_BENCH_LOAD_RUNS:=3}"
fi

# Killed by its timeout (tests/vm/init.sh), a benchmark still runs its EXIT trap and cleans up.
trap 'exit 143' TERM
trap 'exit 130' INT

fail() { echo "FAIL bench/$BENCH: $*"; exit 1; }
note() { echo "note: $*"; }

# Print $2..$# rotated left by $1.
rotate() {
	n=$1; shift
	while [ "$n" -gt 0 ]; do x=$1; shift; set -- "$@" "$x"; n=$((n - 1)); done
	echo "$@"
}

# 1000000 -> 1,000,000
group() { echo "$1" | sed ':a; s/\B[0-9]\{3\}\>/,&/; ta'; }

# Numbers in FILE (one per line): "median min max", or nothing for an empty file.
med_min_max() {
	sort -n "$1" | awk '{ a[NR] = $1 } END {
		if (!NR) exit
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		print m, a[1], a[NR] }'
}

# Numbers in FILE: "p50 p95 mean n", nearest-rank percentiles as startbench prints them.
pct_file() {
	sort -n "$1" | awk '{ a[NR] = $1; s += $1 } END {
		if (!NR) exit
		r50 = int((50 * NR + 99) / 100); r95 = int((95 * NR + 99) / 100)
		printf "%.3f %.3f %.3f %d\n", a[r50], a[r95], s / NR, NR }'
}

# The value of KEY= in a tool's one-line result (ops_per_sec, p50_ms…) in FILE.
field() { sed -n "s/.*\<$1=\([^ ]*\).*/\1/p" "$2" | head -n 1; }

# Where a user's shell sits on a systemd host (level 3), not in the root
# cgroup: outside a sandbox the hooks look up each ancestor level.
into_session() {
	CG_SESSION=/sys/fs/cgroup/user.slice/user-0.slice/session-1.scope
	{ mkdir -p "$CG_SESSION" && echo $$ >"$CG_SESSION/cgroup.procs"; } ||
		fail "cannot move into $CG_SESSION"
}

# Wait up to $2 tenths of a second (default 600) for file $1; 1 if it never came.
wait_file() {
	i=0
	while [ ! -e "$1" ]; do
		[ $i -lt "${2:-600}" ] || return 1
		i=$((i + 1))
		sleep 0.1
	done
}

# sbx-bpf daemon ARGS… in the background (DAEMON is its pid), up when its
# socket is there (it makes it after loading or adopting the programs).
# Its stderr (a human line per event) goes to $DAEMON_LOG (default
# $B/daemon.log).
daemon_start() {
	[ -z "$DAEMON" ] || fail "a daemon is already running (pid $DAEMON)"
	[ ! -e "$SOCK" ] || fail "$SOCK exists before the daemon starts"
	sbx-bpf daemon "$@" 2>"${DAEMON_LOG:-$B/daemon.log}" &
	DAEMON=$!
	i=0
	while [ ! -S "$SOCK" ]; do
		if ! kill -0 "$DAEMON" 2>/dev/null || [ $i -ge 1200 ]; then
			fail "the daemon did not start: $(tail -5 "${DAEMON_LOG:-$B/daemon.log}")"
		fi
		i=$((i + 1))
		sleep 0.1
	done
}

# SIGTERM the daemon and wait for it; the programs stay pinned.
daemon_stop() {
	[ -n "$DAEMON" ] || return 0
	kill "$DAEMON" 2>/dev/null
	wait "$DAEMON" 2>/dev/null
	DAEMON=
}

# A run that loaded its own programs leaves a child holding their links for
# the seconds their detaching takes (userspace/run.c, unload_later): a set
# still attached, which every hooked call pays for. Wait (up to 120 s) until
# no such child is left, so that no figure counts it.
. /sbx/tests/vm/unloads.sh
unloads_wait() {
	wait_unloads 1200 || { echo "warning: an unload child is still there after 120 s" >&2; return 1; }
}

# No daemon and no programs loaded: the state every benchmark starts from and leaves.
# `unload` removes the pins; the kernel detaches the links in a worker
# afterwards, one after another (seconds on 6.1 and 6.12), and until a
# hook's detach is done a new load of a program for that hook waits for it
# (the trampoline's lock): a load measured then counts that wait (6.12: 11.4 G
# instead of 5.7 G). Hence the wait here for no BPF-LSM program at all.
unload_all() {
	daemon_stop
	[ ! -e "$PIN" ] || sbx-bpf unload >/dev/null 2>&1 || echo "warning: sbx-bpf unload failed" >&2
	unloads_wait
	i=0
	while [ "$(sbx-probe bpf-progs lsm)" != 0 ]; do
		[ $i -lt 1200 ] || { echo "warning: BPF-LSM programs still loaded after 120 s" >&2; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
}

# Until the guest is quiet: at most one busy tick (10 ms, 10 M instructions
# under icount) in a second, for at most 60 s. What an unload leaves to the
# kernel goes on after its last program is gone (most likely trampolines
# and JIT images freed after RCU grace periods, in kernel workers): after
# the cost bench's policy checks (four loads and unloads) a 6.1 guest stayed
# busy for 7 to 8 s. A launch measured meanwhile counts it: the first launch
# read +1,586 instructions an operation more than `limits` on stat (6.1,
# 5,000 operations), +268 on pread. Says how long it waited when that was
# more than the first second.
settle() {
	n=0
	prev=
	while [ $n -lt 60 ]; do
		read -r _ u ni sy _ _ irq sirq _ </proc/stat
		busy=$((u + ni + sy + irq + sirq))
		if [ -n "$prev" ] && [ $((busy - prev)) -le 1 ]; then
			[ $n -le 1 ] || note "quiet after $n s of guest time"
			return 0
		fi
		prev=$busy
		sleep 1
		n=$((n + 1))
	done
	echo "warning: the guest was still busy after 60 s" >&2
}

# Programs loaded, sandbox listed, this shell outside it: a holder sandbox
# under policy $1 that sleeps (HOLDER is its run's pid). Its READY file is
# written from inside, so the set-up is complete. 1 if it did not start.
holder_start() {
	rm -f "$B/READY"
	sbx-bpf run --name bench-holder --policy "$1" -- \
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

# run forwards SIGTERM to the sleep, then removes the sandbox (and its programs, if its own).
holder_stop() {
	[ -n "$HOLDER" ] || return 0
	kill "$HOLDER"
	wait "$HOLDER"
	HOLDER=
	unloads_wait
	[ ! -e /sys/fs/cgroup/sbx-bpf/bench-holder ] || { echo "holder sandbox still there" >&2; return 1; }
}

# One row of an overhead table: label $1, target $2, and the median, min and
# max of the ops/s in file $3 (one per round), tab-separated.
overhead_row() { printf '%s\t%s\t%s\n' "$1" "$(med_min_max "$3" | tr ' ' '\t')" "$2"; }

# The table of the overhead_row lines in file $2, titled $1: the first row is
# the baseline the others are compared with.
overhead_table() {
	echo
	echo "## $1, kernel $(uname -r)"
	awk -F '\t' '
		NR == 1 { base = $2 }
		{ med[NR] = $2; lo[NR] = $3; hi[NR] = $4; lab[NR] = $1; tgt[NR] = $5 }
		END {
			printf "%-24s %12s %10s %7s %9s %7s  %s\n", "condition", "median ops/s", "ns/op", "ratio",
				"overhead", "spread", "target"
			for (i = 1; i <= NR; i++)
				printf "%-24s %12.1f %10.1f %7.3f %8.1f%% %6.1f%%  %s\n", lab[i], med[i], 1e9 / med[i],
					med[i] / base, (base / med[i] - 1) * 100, (hi[i] - lo[i]) / med[i] * 100, tgt[i]
		}' "$2"
}

# "/proc/meminfo KEY" in kB.
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# The running kernel as scripts/vm.sh names it (6.1, 6.12, 7.x), for "Reproduce:" lines.
matrix_kernel() {
	case $(uname -r) in
	[7-9].*) echo 7.x ;;
	*) uname -r | cut -d. -f1,2 ;;
	esac
}
