#!/bin/sh
# `make bench` (SBX_BENCH_ONLY=compare): the loops of open-overhead.sh and
# connect-overhead.sh under Landlock, bubblewrap and sbx-bpf, each with the
# same allow-lists, against no sandbox at all, side by side in one run. Runs
# as root in the VM (tests/vm/init.sh); see bench/README.md.
#
# Conditions, interleaved round by round (the starting condition rotates,
# and so does the order of the loops within it); the table shows medians:
#   baseline   no sandbox, no sbx-bpf programs loaded
#   landlock   landlock-run --read / --write /tmp/bench --connect-tcp 5000:
#              Landlock cannot deny beneath an allowed directory, so its
#              ruleset is the allow-lists of the sbx-bpf policy without its
#              denyRead rules; TCP port rules need ABI 4 (Linux 6.7), UDP
#              has none at all
#   bwrap      bwrap --ro-bind / / --bind /tmp/bench /tmp/bench --dev /dev
#              --proc /proc: a mount namespace, the same allow-lists as
#              mounts (read-only everywhere but /tmp/bench); no network
#              rules (it can only unshare the network entirely)
#   sbx        sbx-bpf run with 10 denyRead rules, allowWrite /tmp/bench and
#              network allow 127.0.0.1:5000 (its own programs, no daemon)
# Loops (SBX_BENCH_COMPARE_LOOPS, default all four), each SBX_BENCH_SECONDS:
#   open       openbench: open+close of three files (open-overhead.sh)
#   create     openbench --create /tmp/bench/w: create+close+unlink
#   tcp, udp   connectbench to 127.0.0.1:5000 (connect-overhead.sh)
# shellcheck disable=SC2086 # $CONDS, $LOOPS and $FILES are word lists on purpose
BENCH=compare
B=/tmp/bench
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${SBX_BENCH_ROUNDS:-5}
SECS=${SBX_BENCH_SECONDS:-1.5}
LOOPS=${SBX_BENCH_COMPARE_LOOPS:-open create tcp udp}
CONDS="baseline landlock bwrap sbx"
ADDR=127.0.0.1
PORT=5000
FILES="/usr/lib/x86_64-linux-gnu/libc.so.6 /etc/passwd $B/a/b/c/d/f"
SERVER=
NOWRITE=/tmp/bench-nowrite

cleanup() {
	[ -z "$SERVER" ] || { kill "$SERVER"; wait "$SERVER"; } 2>/dev/null
}
trap cleanup EXIT

# $B/policy-cmp.json: 10 denyRead rules on paths never opened, the write
# and network allow-lists the other sandboxes get too.
gen_policy() {
	awk -v w="$B" -v dst="$ADDR:$PORT" 'BEGIN {
		printf "{\n  \"filesystem\": {\n    \"allowWrite\": [\"%s\"],\n    \"denyRead\": [\n", w
		for (i = 0; i < 10; i++)
			printf "      \"/bench/deny/r%05d\"%s\n", i, i < 9 ? "," : ""
		printf "    ]\n  },\n  \"network\": { \"allow\": [\"%s\"] }\n}\n", dst
	}' >"$B/policy-cmp.json"
}

# The command of loop $1, and the mode= it prints.
loop_cmd() {
	case $1 in
	open) echo "openbench --seconds $SECS $FILES" ;;
	create) echo "openbench --seconds $SECS --create $B/w" ;;
	tcp) echo "connectbench --seconds $SECS --addr $ADDR --port $PORT" ;;
	udp) echo "connectbench --seconds $SECS --udp --addr $ADDR --port $PORT" ;;
	esac
}
loop_mode() {
	case $1 in open) echo open ;; create) echo create+unlink ;; tcp) echo tcp ;; udp) echo udp ;; esac
}

# CMD… in condition $1.
in_cond() {
	cond=$1; shift
	case $cond in
	baseline) "$@" ;;
	landlock) landlock-run --read / --write "$B" --connect-tcp "$PORT" -- "$@" ;;
	bwrap) bwrap --ro-bind / / --bind "$B" "$B" --dev /dev --proc /proc -- "$@" ;;
	sbx) sbx-bpf run --name bench-cmp --policy "$B/policy-cmp.json" -- "$@" ;;
	esac
}

# expect WANT COND CMD…: CMD in COND prints WANT (sbx-probe: OK, EACCES, EROFS…).
expect() {
	want=$1 cond=$2; shift 2
	out=$(in_cond "$cond" "$@" 2>"$B/err")
	[ "$out" = "$want" ] || fail "$cond: $* gave '$out', not $want: $(cat "$B/err")"
}

# expect_connect WANT COND ARGS…: connectbench ARGS connects (ok) or fails with errno WANT.
expect_connect() {
	want=$1 cond=$2; shift 2
	in_cond "$cond" connectbench --iterations 3 "$@" >/dev/null 2>"$B/err"
	rc=$?
	if [ "$want" = ok ]; then
		[ $rc -eq 0 ] || fail "$cond: connectbench $* failed: $(cat "$B/err")"
	elif [ $rc -ne 1 ] || ! grep -q "^connectbench: connect .*($want)\$" "$B/err"; then
		fail "$cond: connectbench $* should fail with $want (exit $rc): $(cat "$B/err")"
	fi
}

# Run the loops $2 (that order, one launch) once in condition $1; appends
# each loop's ops/s to $B/ops-LOOP-COND and sets LINE, for the log.
measure() {
	script=
	for l in $2; do script="$script${script:+ && }$(loop_cmd "$l")"; done
	if [ "$1" = baseline ] && pgrep -x sbx-bpf >/dev/null; then
		fail "an sbx-bpf is running during the baseline"
	fi
	in_cond "$1" sh -c "$script" >"$B/out" 2>"$B/err" || fail "$1: $(cat "$B/out" "$B/err")"
	LINE=
	for l in $LOOPS; do
		ops=$(sed -n "s/^ops_per_sec=\([0-9.]*\) .* mode=$(loop_mode "$l")\( .*\)*\$/\1/p" "$B/out")
		[ -n "$ops" ] || fail "$1: no $l result in '$(cat "$B/out")'"
		echo "$ops" >>"$B/ops-$l-$1"
		LINE="$LINE${LINE:+/}$ops"
	done
}

for l in $LOOPS; do
	case $l in open | create | tcp | udp) ;; *) fail "unknown loop '$l' in SBX_BENCH_COMPARE_LOOPS (open create tcp udp)" ;; esac
done
unload_all
into_session
mkdir -p "$B/a/b/c/d" "$B/w" /bench/deny "$NOWRITE"
echo data >"$B/a/b/c/d/f"
echo secret >/bench/deny/r00000
gen_policy

# The TCP server, outside any sandbox for the whole run, up before anything is measured.
connectbench --serve --addr "$ADDR" --port "$PORT" >"$B/server.log" 2>&1 &
SERVER=$!
i=0
until grep -q '^listening' "$B/server.log" 2>/dev/null; do
	if ! kill -0 "$SERVER" 2>/dev/null || [ $i -ge 600 ]; then
		fail "server did not start: $(cat "$B/server.log")"
	fi
	i=$((i + 1))
	sleep 0.1
done

# Which sandboxes this kernel and root filesystem have; the others are left out, said so.
ABI=$(landlock-run --abi)
if [ "${ABI:-0}" -eq 0 ]; then
	note "Landlock is not enabled in this kernel: no Landlock row"
	CONDS=$(echo $CONDS | sed 's/landlock//')
elif [ "$ABI" -lt 4 ]; then
	note "Landlock ABI $ABI (Linux $(uname -r)): no network rules before ABI 4 (Linux 6.7), so its"
	note "tcp and udp rows run under its filesystem ruleset only; on 6.7+ TCP connect is limited to port $PORT"
else
	note "Landlock ABI $ABI: TCP connect limited to port $PORT; Landlock has no UDP rules (udp row: no network rule)"
fi
if ! command -v bwrap >/dev/null; then
	note "bwrap is not installed (bubblewrap, scripts/vm.sh ROOTFS_PKGS): no bubblewrap row"
	CONDS=$(echo $CONDS | sed 's/bwrap//')
elif ! in_cond bwrap true 2>"$B/err"; then
	note "bwrap does not run here ($(cat "$B/err")): no bubblewrap row"
	CONDS=$(echo $CONDS | sed 's/bwrap//')
fi

# Each sandbox confines what it should (so a broken setup cannot pass for a
# fast one), and lets every loop run.
for c in $CONDS; do
	in_cond "$c" sh -c "openbench --iterations 10 $FILES && openbench --iterations 10 --create $B/w" \
		>/dev/null 2>"$B/err" || fail "$c: openbench failed: $(cat "$B/err")"
	expect_connect ok "$c" --addr "$ADDR" --port "$PORT"
	expect_connect ok "$c" --udp --addr "$ADDR" --port "$PORT"
	case $c in
	baseline)
		expect OK "$c" sbx-probe open "$NOWRITE/f" creat
		rm -f "$NOWRITE/f"
		expect_connect ECONNREFUSED "$c" --addr "$ADDR" --port $((PORT + 1)) ;;
	landlock)
		expect EACCES "$c" sbx-probe open "$NOWRITE/f" creat
		[ "$ABI" -lt 4 ] || expect_connect EACCES "$c" --addr "$ADDR" --port $((PORT + 1)) ;;
	bwrap)
		expect EROFS "$c" sbx-probe open "$NOWRITE/f" creat ;;
	sbx)
		expect EACCES "$c" sbx-probe open /bench/deny/r00000
		expect EACCES "$c" sbx-probe open "$NOWRITE/f" creat
		expect_connect EACCES "$c" --addr "$ADDR" --port $((PORT + 1)) ;;
	esac
done
echo "checked: each sandbox refuses a create outside $B (and sbx-bpf a denyRead file and"
echo "port $((PORT + 1)); Landlock too from ABI 4), and runs every loop"
echo "from cgroup $(sed -n 's/^0:://p' /proc/self/cgroup)"
echo "$ROUNDS rounds x ${SECS}s per condition and loop; conditions: $CONDS; loops: $LOOPS"
for c in $CONDS; do for l in $LOOPS; do : >"$B/ops-$l-$c"; done; done
nloops=$(echo $LOOPS | wc -w)
r=0
while [ $r -lt "$ROUNDS" ]; do
	line="round $((r + 1))/$ROUNDS ($(echo $LOOPS | tr ' ' /)):"
	for c in $(rotate "$r" $CONDS); do
		measure "$c" "$(rotate $((r % nloops)) $LOOPS)"
		line="$line $c=$LINE"
	done
	echo "$line"
	r=$((r + 1))
done

# One row per condition: label, then per loop "median spread".
for c in $CONDS; do
	case $c in
	baseline) printf 'baseline (no sandbox)' ;;
	landlock) printf 'Landlock (ABI %s)' "$ABI" ;;
	bwrap) printf 'bubblewrap' ;;
	sbx) printf 'sbx-bpf, 10 rules' ;;
	esac
	for l in $LOOPS; do
		med_min_max "$B/ops-$l-$c" | awk '{ printf "\t%s %.1f", $1, ($3 - $2) / $1 * 100 }'
	done
	echo
done >"$B/rows"
echo
echo "## Sandboxes compared, kernel $(uname -r): median ops/s, ratio to baseline, spread"
awk -F '\t' -v loops="$LOOPS" '
	BEGIN {
		n = split(loops, L, " ")
		name["open"] = "open+close"; name["create"] = "create+unlink"
		name["tcp"] = "TCP connect"; name["udp"] = "UDP connect"
		printf "%-22s", "condition"
		for (i = 1; i <= n; i++)
			printf "  %-23s", name[L[i]]
		printf "\n%-22s", ""
		for (i = 1; i <= n; i++)
			printf "  %10s %6s %5s", "ops/s", "ratio", "sprd"
		printf "\n"
	}
	{
		printf "%-22s", $1
		for (i = 1; i <= n; i++) {
			split($(i + 1), v, " ")
			if (NR == 1)
				base[i] = v[1]
			printf "  %10.1f %6.3f %4.0f%%", v[1], v[1] / base[i], v[2]
		}
		printf "\n"
	}' "$B/rows"
echo
echo "Each cell: median ops/s over the $ROUNDS rounds, ratio to the baseline (below 1 is slower), spread"
echo "(max - min) / median: ratios closer to 1 than the spreads are noise. Same allow-lists everywhere:"
echo "read /, write $B, TCP to $ADDR:$PORT; only sbx-bpf also has denyRead rules (Landlock and"
echo "bubblewrap cannot deny beneath an allowed directory) and limits UDP (Landlock has no UDP rules,"
echo "bubblewrap no per-address rules)."
echo "Figures are from QEMU TCG (emulated CPU): only the ratios mean anything."
echo "Reproduce: SBX_BENCH_ONLY=compare make bench KERNEL=$(matrix_kernel)"
