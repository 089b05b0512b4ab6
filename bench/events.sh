#!/bin/sh
# `make bench` (SBX_BENCH_ONLY=events): how many violations per second the
# event path carries from the kernel to the daemon's JSON lines file, what
# becomes of the rest, and what the daemon's CPU pays. Runs as root in the
# VM (tests/vm/init.sh); see bench/README.md.
#
# 16 cgroups attached with a policy that denies $D; floods are evflood
# processes in them, each opening denied files in a tight loop for
# SBX_BENCH_EV_SECONDS (default 3): either distinct paths (f0…f(N-1),
# N = SBX_BENCH_EV_FILES, default 32768: a path comes back after N opens,
# by when its coalescing slot (8192, direct-mapped) has almost surely been
# taken by another, and, below 32768 opens/s per process, its 1 s window
# has closed, so nearly nothing coalesces) or the same path every time
# (nearly all coalesces).
# The daemon writes JSON lines to $EV (--events); its stderr goes to
# /dev/null. After each flood the script waits until the file stops growing,
# then reads the kernel's counters (sbx-bpf status --json .counters, deltas):
# every violation is counted once, and ends as a record sent (delivered),
# folded into another's repeat count (coalesced), withheld by the sandbox's
# record rate (throttled), or lost to a full ring buffer (events_lost).
#   matrix  {1 process in 1 sandbox, 16 in 16} x {distinct, same path} x
#           {--event-rate 0 (no rate limit: the raw figure), the default}
#   ramp    --event-rate 0, distinct paths, 1, 2, 4, … processes (over the
#           16 sandboxes, at most SBX_BENCH_EV_MAXPROCS, default 32) until
#           events_lost grows: the rate at which drops begin
# Daemon CPU is utime+stime from /proc/PID/stat over the flood and the drain,
# per 100,000 lines written.
# shellcheck disable=SC2086 # word lists on purpose
BENCH=events
B=/tmp/bench-ev
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
SECS=${SBX_BENCH_EV_SECONDS:-3}
NFILES=${SBX_BENCH_EV_FILES:-32768}
MAXP=${SBX_BENCH_EV_MAXPROCS:-32}
NSB=16
P=/sys/fs/cgroup/bench-events
D=$B/deny
EV=$B/events.json
POLICY=$B/policy.json
DAEMON_LOG=/dev/null
HZ=$(getconf CLK_TCK)
ATTACHED=0

cleanup() {
	i=1
	while [ $i -le "$ATTACHED" ]; do sbx-bpf detach "$P/e$i" >/dev/null 2>&1; i=$((i + 1)); done
	unload_all
	i=1
	while [ $i -le "$NSB" ]; do rmdir "$P/e$i" 2>/dev/null; i=$((i + 1)); done
	rmdir "$P" 2>/dev/null
}
trap cleanup EXIT

# "violations coalesced throttled events_lost" now, into $B/cnt.
counters() {
	sbx-bpf status --json >"$B/status.json" 2>"$B/err" || fail "sbx-bpf status: $(cat "$B/err")"
	jq -r '.counters | "\(.violations) \(.coalesced) \(.throttled) \(.events_lost)"' "$B/status.json" \
		>"$B/cnt" || fail "no counters in $(cat "$B/status.json")"
}
daemon_cpu() { awk '{ print $14 + $15 }' "/proc/$DAEMON/stat"; }
lines() { wc -l <"$EV"; }

# The daemon has written everything: the file has not grown for 2 s (summaries
# go out a coalescing window after the last violation, throttled counts after
# 1 s of quiet), at most 120 s.
drain() {
	prev=-1 same=0 i=0
	while [ $same -lt 2 ] && [ $i -lt 120 ]; do
		sleep 1
		n=$(lines)
		if [ "$n" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		prev=$n
		i=$((i + 1))
	done
	[ $same -ge 2 ] || note "the daemon was still writing 120 s after the flood"
}

# flood LABEL PROCS SANDBOXES MODE: PROCS evflood processes, process k in
# sandbox e((k-1) % SANDBOXES + 1), MODE distinct or same. Appends a row to
# $B/rows-LABEL and sets LOST (events_lost delta) and RATE (violations/s).
flood() {
	label=$1 np=$2 nsb=$3 mode=$4
	same=
	[ "$mode" = same ] && same=--same
	: >"$EV"
	counters
	read -r v0 c0 t0 l0 <"$B/cnt"
	cpu0=$(daemon_cpu)
	k=1
	pids=
	while [ $k -le "$np" ]; do
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$P/e$(((k - 1) % nsb + 1))" \
			evflood --seconds "$SECS" $same "$D" "$NFILES" >"$B/fl-$k" 2>&1 &
		pids="$pids $!"
		k=$((k + 1))
	done
	for p in $pids; do wait "$p" || fail "$label: evflood: $(cat "$B"/fl-*)"; done
	drain
	cpu1=$(daemon_cpu)
	counters
	read -r v1 c1 t1 l1 <"$B/cnt"
	ln=$(lines)
	denied=$(cat "$B"/fl-* | sed -n 's/^denied=\([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	rm -f "$B"/fl-*
	v=$((v1 - v0)) c=$((c1 - c0)) t=$((t1 - t0)) l=$((l1 - l0))
	[ "$v" -eq "$denied" ] ||
		note "$label $np/$nsb/$mode: the flooders counted $denied denials, the kernel $v violations"
	LOST=$l
	RATE=$(awk -v v="$v" -v s="$SECS" 'BEGIN { printf "%.0f", v / s }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$np" "$nsb" "$mode" "$v" "$RATE" \
		$((v - c - t - l)) "$c" "$t" "$l" "$ln" $((cpu1 - cpu0)) >>"$B/rows-$label"
	echo "$label: $np process(es) in $nsb sandbox(es), $mode: $v violations, $l lost, $ln lines"
}

# The rows of $B/rows-$1 as a table titled $2.
table() {
	echo
	echo "## $2, kernel $(uname -r)"
	awk -F '\t' -v hz="$HZ" '
		BEGIN {
			printf "%5s %4s %-8s %10s %9s %10s %10s %9s %9s %9s %10s\n", "procs", "sbx", "paths",
				"violations", "per s", "delivered", "coalesced", "throttled", "lost", "lines",
				"cpu/100k"
		}
		{
			cpu = $10 > 0 ? sprintf("%.0f ms", $11 * 1000 / hz * 100000 / $10) : "-"
			printf "%5d %4d %-8s %10d %9d %10d %10d %9d %9d %9d %10s\n", $1, $2, $3, $4, $5, $6, $7, $8,
				$9, $10, cpu
		}' "$B/rows-$1"
}

for x in "$SECS" "$NFILES" "$MAXP"; do
	case $x in '' | *[!0-9.]*) fail "SBX_BENCH_EV_SECONDS, _FILES and _MAXPROCS must be numbers" ;; esac
done
unload_all
into_session
mkdir -p "$D" "$P" || fail "cannot make $D or $P"
seq -f "$D/f%.0f" 0 $((NFILES - 1)) | xargs touch || fail "cannot make $NFILES files in $D"
# allowWrite $B: the flooders' stdout files were opened outside, and uses are judged (file_permission).
printf '{ "filesystem": { "denyRead": ["%s"], "allowWrite": ["%s"] } }\n' "$D" "$B" >"$POLICY"
: >"$EV"
daemon_start --events "$EV" --event-rate 0
i=1
while [ $i -le "$NSB" ]; do
	mkdir -p "$P/e$i" || fail "cannot make $P/e$i"
	sbx-bpf attach "$P/e$i" --policy "$POLICY" >"$B/out" 2>&1 || fail "attach e$i: $(cat "$B/out")"
	ATTACHED=$i
	i=$((i + 1))
done
# Every flooder is all denials: evflood exits 1 on anything else.
sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$P/e$NSB" \
	evflood --seconds 0.2 "$D" "$NFILES" >"$B/out" 2>&1 || fail "evflood in e$NSB: $(cat "$B/out")"
sleep 2
echo "checked: a process in an attached cgroup gets EACCES for every file of $D"
echo "$NSB sandboxes under $P denying $D ($NFILES files); floods of ${SECS}s; daemon --events $EV"

: >"$B/rows-raw"
: >"$B/rows-default"
: >"$B/rows-ramp"
for cfg in raw default; do
	if [ $cfg = default ]; then
		daemon_stop
		daemon_start --events "$EV"
	fi
	for np in 1 $NSB; do
		flood $cfg "$np" "$np" distinct
		flood $cfg "$np" "$np" same
	done
done
daemon_stop

daemon_start --events "$EV" --event-rate 0
np=1
DROPS=
while [ $np -le "$MAXP" ]; do
	flood ramp "$np" "$((np < NSB ? np : NSB))" distinct
	if [ "$LOST" -gt 0 ]; then
		DROPS="drops begin at $np flooding process(es): $RATE violations/s offered, $LOST lost in ${SECS}s"
		break
	fi
	np=$((np * 2))
done
daemon_stop
[ -n "$DROPS" ] || DROPS="no drops up to $MAXP flooding processes (last: $RATE violations/s offered)"

table raw "Event throughput, no rate limit (daemon --event-rate 0)"
table default "Event throughput, default rate limit (1,000 records/s per sandbox, burst 2,000)"
table ramp "Ramp: distinct paths over $NSB sandboxes, no rate limit"
echo
echo "$DROPS"
echo
echo "violations: the kernel's count (status .counters); per s: over the ${SECS}s flood. Each violation"
echo "ends in one column: delivered (a record reached the daemon), coalesced (folded into an identical"
echo "record's repeat count), throttled (held back by the sandbox's record rate, counted in a"
echo "'throttled' record), lost (ring buffer full). lines: JSON lines the daemon wrote (records,"
echo "coalescing summaries, throttled records). cpu/100k: the daemon's utime+stime over the flood and"
echo "its drain, per 100,000 lines. paths: distinct cycles over $NFILES files, same opens one."
echo "Figures are from QEMU TCG (emulated CPU): rates are emulated; the fates' shares are not."
echo "Reproduce: SBX_BENCH_ONLY=events make bench KERNEL=$(matrix_kernel)"
