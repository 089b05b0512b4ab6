#!/bin/sh
# `make bench` (SBX_BENCH_ONLY=scale): 1,000 sandboxes on one host. With a
# daemon's programs pinned, make SBX_BENCH_SANDBOXES cgroups (default 1000)
# and attach a small policy to each, timing every mkdir, attach and detach;
# what each sandbox costs in memory; and whether an open(2) in one sandbox
# (and outside any) gets slower when all of them are there. Runs as root in
# the VM (tests/vm/init.sh); see bench/README.md.
#
# Steps: daemon up, snapshot; mkdir N cgroups (timed), snapshot; attach s1;
# open(2) rounds with one sandbox; attach s2…sN (timed), snapshot; rounds
# with N; detach s2…sN (timed), snapshot; rounds with one again; clean up.
# A snapshot is mapmem (entries and memlock of every pinned map) plus
# Slab, Percpu and Shmem from /proc/meminfo and the daemon's VmRSS.
# shellcheck disable=SC2086,SC2119 # $FILES is a word list; daemon_start takes no arguments here
BENCH=scale
B=/tmp/bench-scale
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
N=${SBX_BENCH_SANDBOXES:-1000}
ROUNDS=${SBX_BENCH_ROUNDS:-5}
SECS=${SBX_BENCH_SECONDS:-1.5}
P=/sys/fs/cgroup/bench-scale
POLICY=$B/policy.json
D=/bench/scale/deny
FILES="/usr/lib/x86_64-linux-gnu/libc.so.6 /etc/passwd $B/a/b/c/d/f"
DONE=

# On a failure half-way, leave no sandbox behind for the next benchmark.
cleanup() {
	if [ -z "$DONE" ]; then
		daemon_stop
		for s in "$P"/s*; do
			[ -d "$s" ] || continue
			id=$(stat -c %i "$s")
			rm -f "/run/sbx-bpf/sandboxes/$id.json"
			rmdir "$s"
		done 2>/dev/null
	fi
	unload_all
	rmdir "$P" 2>/dev/null
}
trap cleanup EXIT

# Snapshot $1: $B/maps-$1 (mapmem) and $B/mem-$1 (slab percpu shmem rss, kB).
snap() {
	mapmem >"$B/maps-$1" 2>"$B/err" || fail "mapmem: $(cat "$B/err")"
	echo "$(meminfo Slab) $(meminfo Percpu) $(meminfo Shmem)" \
		"$(awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON/status")" >"$B/mem-$1"
}

# openbench in condition $1 (inside: in cgroup s1; outside: in this shell's); appends to $B/ops-$2-$1.
measure() {
	case $1 in
	inside) sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$P/s1" \
		openbench --seconds "$SECS" $FILES ;;
	outside) openbench --seconds "$SECS" $FILES ;;
	esac >"$B/out" 2>"$B/err" || fail "$1 ($2): $(cat "$B/out" "$B/err")"
	ops=$(field ops_per_sec "$B/out")
	[ -n "$ops" ] || fail "$1 ($2): no result in '$(cat "$B/out")'"
	echo "$ops" >>"$B/ops-$2-$1"
	LINE="$LINE $1=$ops"
}

# ROUNDS rounds of both conditions, labelled $1 (one, all).
rounds() {
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		LINE=
		for c in $(rotate $((r % 2)) inside outside); do measure "$c" "$1"; done
		echo "$2 round $((r + 1))/$ROUNDS:$LINE"
		r=$((r + 1))
	done
}

# startbench over s$2… for $3 cgroups: CMD with {} the index; the timings go to $B/ms-$1.
timed() {
	name=$1 first=$2 n=$3; shift 3
	startbench -n "$n" --warmup 0 --first "$first" --raw "$B/ms-$name" -- "$@" >"$B/out" 2>"$B/err" ||
		fail "$name: $(cat "$B/err")"
	echo "$name: $(cat "$B/out")"
}

# open of a denied file inside cgroup $1.
probe_in() { sh -c 'echo $$ >"$1/cgroup.procs" && exec sbx-probe open "$2"' sh "$1" "$2" 2>/dev/null; }

[ "$N" -ge 2 ] || fail "SBX_BENCH_SANDBOXES must be at least 2"
unload_all
into_session
mkdir -p "$B/a/b/c/d" "$D" "$P" || fail "cannot make $B, $D or $P"
echo data >"$B/a/b/c/d/f"
echo secret >"$D/a"
printf '{ "filesystem": { "allowWrite": ["%s"], "denyRead": ["%s/a", "%s/b"] } }\n' "$B" "$D" "$D" >"$POLICY"
: >"$B/ms-attach"
: >"$B/ms-detach"
: >"$B/ms-mkdir"
for c in inside outside; do : >"$B/ops-one-$c"; : >"$B/ops-all-$c"; done

daemon_start
snap 0
timed mkdir 1 "$N" mkdir "$P/s{}"
snap 1
sbx-bpf attach "$P/s1" --policy "$POLICY" >"$B/out" 2>&1 || fail "attach s1: $(cat "$B/out")"
[ "$(probe_in "$P/s1" "$D/a")" = EACCES ] || fail "s1 does not deny $D/a"
[ "$(probe_in "$P/s2" "$D/a")" = OK ] || fail "s2 (not attached yet) denies $D/a"
echo "policy: $(cat "$POLICY")"
echo "open+close of: $FILES; inside = in $P/s1; from cgroup $(sed -n 's/^0:://p' /proc/self/cgroup)"
rounds one "1 sandbox:"

timed attach 2 $((N - 1)) sbx-bpf attach "$P/s{}" --policy "$POLICY"
snap 2
used=$(sbx-bpf status --json | jq -r '.maps.sandboxes.used')
[ "$used" = "$N" ] || fail "status shows $used sandboxes, not $N"
[ "$(probe_in "$P/s$N" "$D/a")" = EACCES ] || fail "s$N does not deny $D/a"
rounds all "$N sandboxes:"

timed detach 2 $((N - 1)) sbx-bpf detach "$P/s{}"
snap 3
rounds one "1 sandbox again:"
sbx-bpf detach "$P/s1" >"$B/out" 2>&1 || fail "detach s1: $(cat "$B/out")"
used=$(sbx-bpf status --json | jq -r '.maps.sandboxes.used')
[ "$used" = 0 ] || fail "status shows $used sandboxes after detaching all"
i=1
while [ $i -le "$N" ]; do rmdir "$P/s$i" || fail "rmdir $P/s$i"; i=$((i + 1)); done
DONE=1

Ng=$(group "$N")
echo
echo "## Scale: $Ng sandboxes on the daemon's pinned programs, kernel $(uname -r)"
printf '%-40s %9s %9s %9s %6s\n' "per sandbox" "mean ms" "p50 ms" "p95 ms" "runs"
for s in mkdir attach detach; do
	case $s in
	mkdir) label="mkdir CG (the cgroup alone)" ;;
	attach) label="sbx-bpf attach CG --policy P" ;;
	detach) label="sbx-bpf detach CG" ;;
	esac
	pct_file "$B/ms-$s" | awk -v l="$label" '{ printf "%-40s %9.2f %9.2f %9.2f %6d\n", l, $3, $1, $2, $4 }'
done

# Per map: entries and memlock before attaching and with N sandboxes (snapshots 1 and 2).
echo
echo "memory per sandbox (snapshot before attaching vs with $Ng attached, divided by $Ng):"
awk -v n="$N" '
	function kv(line, k,   a, i, m) { m = split(line, a, " "); for (i = 1; i <= m; i++) if (index(a[i], k "=") == 1) return substr(a[i], length(k) + 2); return "" }
	FNR == 1 { f++ }
	/^map=/ { name = kv($0, "map"); e[f, name] = kv($0, "entries"); ml[f, name] = kv($0, "memlock")
		eb[f, name] = kv($0, "entry_bytes"); if (f == 1) names[++nn] = name }
	/^total / { te[f] = kv($0, "entry_bytes"); tm[f] = kv($0, "memlock") }
	END {
		printf "  %-14s %10s %10s %9s %14s %14s %10s\n", "map", "entries", "entries", "per sbx",
			"memlock", "memlock", "per sbx"
		printf "  %-14s %10s %10s %9s %14s %14s %10s\n", "", "before", "after", "", "before", "after", "bytes"
		for (i = 1; i <= nn; i++) {
			m = names[i]
			pe = e[1, m] == "-" ? "-" : sprintf("%.2f", (e[2, m] - e[1, m]) / n)
			printf "  %-14s %10s %10s %9s %14s %14s %10.0f\n", m, e[1, m], e[2, m], pe, ml[1, m], ml[2, m],
				(ml[2, m] - ml[1, m]) / n
		}
		printf "  map entries, key + value:       %.0f bytes per sandbox\n", (te[2] - te[1]) / n
		printf "  maps memlock (fdinfo):          %.0f bytes per sandbox\n", (tm[2] - tm[1]) / n
	}' "$B/maps-1" "$B/maps-2"
read -r s0 p0 _ _ <"$B/mem-0"
read -r s1 p1 h1 r1 <"$B/mem-1"
read -r s2 p2 h2 r2 <"$B/mem-2"
read -r s3 p3 _ _ <"$B/mem-3"
awk -v n="$N" -v s0="$s0" -v p0="$p0" -v s1="$s1" -v p1="$p1" -v h1="$h1" -v r1="$r1" \
	-v s2="$s2" -v p2="$p2" -v h2="$h2" -v r2="$r2" -v s3="$s3" -v p3="$p3" 'BEGIN {
	printf "  kernel Slab+Percpu, attach:     %.0f bytes per sandbox (everything the kernel allocated meanwhile)\n",
		((s2 + p2) - (s1 + p1)) * 1024 / n
	printf "  Shmem (tmpfs: /run records):    %.0f bytes per sandbox\n", (h2 - h1) * 1024 / n
	printf "  daemon RSS:                     %.0f bytes per sandbox\n", (r2 - r1) * 1024 / n
	printf "  the cgroup itself (mkdir):      %.0f bytes per cgroup, Slab+Percpu\n", ((s1 + p1) - (s0 + p0)) * 1024 / n
	printf "  left after detaching %d:        %.0f kB Slab+Percpu over the snapshot before attaching\n",
		n - 1, (s3 + p3) - (s1 + p1)
}'

for c in inside outside; do
	for k in one all; do
		case $c/$k in
		inside/one) label="inside s1, 1 sandbox" ;;
		inside/all) label="inside s1, $Ng sandboxes" ;;
		outside/one) label="outside, 1 sandbox" ;;
		outside/all) label="outside, $Ng sandboxes" ;;
		esac
		printf '%s\t%s\n' "$label" "$(med_min_max "$B/ops-$k-$c")"
	done
done >"$B/rows"
echo
echo "## open(O_RDONLY)+close() with 1 and with $Ng sandboxes, kernel $(uname -r)"
awk -F '\t' '
	BEGIN { printf "%-32s %12s %7s %7s\n", "condition", "median ops/s", "ratio", "spread" }
	{
		split($2, v, " ")
		if (NR % 2) base = v[1]
		printf "%-32s %12.1f %7.3f %6.1f%%\n", $1, v[1], v[1] / base, (v[3] - v[2]) / v[1] * 100
	}' "$B/rows"
echo
echo "ratio: to the same condition with 1 sandbox (its median over $((2 * ROUNDS)) rounds, before and after);"
echo "spread = (max - min) / median. The sandbox lookup is one hash lookup per cgroup level, whatever"
echo "the number of sandboxes, so both ratios should be 1 within the spread."
echo "Memory: map entries count keys and values only (the kernel adds its per-element overhead);"
echo "memlock is the kernel's account of each map (from Linux 6.4 it follows the elements of"
echo "hash maps; before, it is fixed by max_entries, so its delta is 0); Slab+Percpu is the whole"
echo "kernel's, so it includes the attach processes' passing allocations and the records' inodes."
echo "Figures are from QEMU TCG (emulated CPU): times are emulated; counts and bytes are not."
echo "Reproduce: SBX_BENCH_ONLY=scale make bench KERNEL=$(matrix_kernel)"
