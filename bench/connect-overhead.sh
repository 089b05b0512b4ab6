#!/bin/sh
# `make bench`, second part: what sbx-bpf's lsm/socket_connect costs a
# connect(2) to loopback, outside and inside a sandbox, against a kernel with
# no sbx-bpf programs at all. Runs as root in the VM after open-overhead.sh
# (tests/vm/init.sh); output goes to the console and back to the host. See
# bench/README.md.
#
# Each measurement is connectbench for SBX_BENCH_SECONDS: socket() +
# connect() + close() in a loop, over TCP (with the handshake, against a
# `connectbench --serve` started here, outside any sandbox: a sandbox may not
# listen) and over UDP (connect() only picks a route and a port, so the hook
# is a large share of it). Conditions, interleaved round by round (the
# starting condition rotates, and so does the order of TCP and UDP within
# it); the tables show the medians:
#   baseline     no sbx-bpf programs loaded
#   outside      programs loaded for a holder sandbox; connectbench in no sandbox
#   cidrs-N      connectbench inside a sandbox whose policy allows N CIDRs
#                plus the measured destination
# shellcheck disable=SC2086 # $CONDS, $PROTOS and $U are word lists on purpose
BENCH=connect-overhead
B=/tmp/bench-connect
# lib.sh names a DNS upstream: every sandbox starts sbx-bpf's resolver and
# attaches the cgroup programs that steer port 53 to it (cgroup/connect4 runs
# on every connect and lets other ports pass), as on a host with a
# nameserver. Nothing is resolved during the benchmark.
. "$(dirname "$0")/lib.sh"
ROUNDS=${SBX_BENCH_ROUNDS:-5}
SECS=${SBX_BENCH_SECONDS:-1.5}
ADDR=127.0.0.1
PORT=5000
CIDRS="10 1000"
CONDS="baseline outside"
for n in $CIDRS; do CONDS="$CONDS cidrs-$n"; done
PROTOS="tcp udp"
SERVER=
HOLDER=

cleanup() {
	holder_stop 2>/dev/null
	[ -z "$SERVER" ] || { kill "$SERVER"; wait "$SERVER"; } 2>/dev/null
}
trap cleanup EXIT

# The host of generated prefix $1 (1…N): 127.0.1.1, 127.0.2.1, … 127.3.232.1.
prefix_host() { echo "127.$(($1 / 256)).$(($1 % 256)).1"; }

# $B/policy-N.json: allow N /24 prefixes on port 443 and the measured
# destination. The prefixes are 127.0.1.0/24 … (loopback, but not the
# 127.0.0.0/24 of the measured address and of the denied 127.0.0.2), packed
# next to the measured address: the LPM trie branches among them right where
# its lookup goes, so the walk to the measured address is as deep as N makes
# it (prefixes far away, such as 10.X.Y.0/24, would leave it on a short
# branch of its own). Being loopback, they can also be connected to, so the
# checks below prove the list is installed. The filesystem part lets the
# holder write its READY file.
gen_policy() {
	awk -v n="$1" -v w="$B" -v dst="$ADDR:$PORT" 'BEGIN {
		printf "{\n  \"filesystem\": { \"allowWrite\": [\"%s\"] },\n", w
		printf "  \"network\": {\n    \"allow\": [\n"
		for (i = 1; i <= n; i++)
			printf "      \"127.%d.%d.0/24:443\",\n", int(i / 256), i % 256
		printf "      \"%s\"\n    ]\n  }\n}\n", dst
	}' >"$B/policy-$1.json"
}

# Set up condition $1 before its measurements, and tear it down after.
enter() {
	case $1 in
	baseline)
		! pgrep -x sbx-bpf >/dev/null || fail "an sbx-bpf is running during the baseline" ;;
	outside)
		holder_start "$B/policy-10.json" 2>"$B/err" || fail "outside: $(cat "$B/err")" ;;
	esac
}
leave() {
	[ "$1" != outside ] || holder_stop 2>"$B/err" || fail "outside: $(cat "$B/err")"
}

# connectbench ARGS… in condition $1 (baseline and outside: in no sandbox).
cb_in() {
	cond=$1; shift
	case $cond in
	cidrs-*) sbx-bpf run --name bench --policy "$B/policy-${cond#cidrs-}.json" -- connectbench "$@" ;;
	*) connectbench "$@" ;;
	esac
}

# Measure $2 (tcp|udp) once in condition $1; sets OPS to its ops/s.
measure() {
	U=
	[ "$2" = udp ] && U=--udp
	cb_in "$1" --seconds "$SECS" --addr "$ADDR" --port "$PORT" $U >"$B/out" 2>"$B/err" ||
		fail "$1 $2: $(cat "$B/out" "$B/err")"
	OPS=$(sed -n 's/^ops_per_sec=\([0-9.]*\) .*/\1/p' "$B/out")
	[ -n "$OPS" ] || fail "$1 $2: no result in '$(cat "$B/out")'"
}

# expect WANT COND ARGS…: a few connects to ARGS in condition COND succeed
# (WANT=ok), or the first fails with errno WANT (EACCES, ECONNREFUSED…).
expect() {
	want=$1 where=$2; shift 2
	cb_in "$where" --iterations 3 "$@" >/dev/null 2>"$B/err"
	rc=$?
	if [ "$want" = ok ]; then
		[ $rc -eq 0 ] || fail "$where: connectbench $* failed: $(cat "$B/err")"
	elif [ $rc -ne 1 ] || ! grep -q "^connectbench: connect .*($want)\$" "$B/err"; then
		fail "$where: connectbench $* should fail with $want (exit $rc): $(cat "$B/err")"
	fi
}

into_session
mkdir -p "$B"

# The TCP server, outside any sandbox for the whole run (it is in this
# cgroup), up before anything is measured.
connectbench --serve --addr "$ADDR" --port "$PORT" >"$B/server.log" 2>&1 &
SERVER=$!
i=0
until grep -q '^listening' "$B/server.log"; do
	if ! kill -0 "$SERVER" 2>/dev/null || [ $i -ge 600 ]; then
		fail "server did not start: $(cat "$B/server.log")"
	fi
	i=$((i + 1))
	sleep 0.1
done

# Outside a sandbox, every destination the checks use is reachable (or, for
# TCP where nothing listens, refused): an EACCES below is the sandbox's.
enter baseline
expect ok baseline --addr "$ADDR" --port "$PORT"
expect ok baseline --udp --addr "$ADDR" --port "$PORT"
expect ECONNREFUSED baseline --addr 127.0.0.2 --port "$PORT"
expect ok baseline --udp --addr 127.0.0.2 --port "$PORT"
expect ECONNREFUSED baseline --addr "$ADDR" --port $((PORT + 1))
expect ok baseline --udp --addr "$ADDR" --port $((PORT + 1))
for n in 1 $CIDRS; do expect ok baseline --udp --addr "$(prefix_host "$n")" --port 444; done

# Every policy allows the measured destination over TCP and UDP, denies
# another address and another port, and holds its whole list: its first and
# last prefixes connect on 443, not on 444.
for n in $CIDRS; do
	gen_policy "$n"
	c=cidrs-$n
	expect ok "$c" --addr "$ADDR" --port "$PORT"
	! grep -q 'no DNS resolver' "$B/err" ||
		echo "note: $c: $(grep 'no DNS resolver' "$B/err"); the inside figures leave out the DNS steering"
	expect ok "$c" --udp --addr "$ADDR" --port "$PORT"
	expect EACCES "$c" --addr 127.0.0.2 --port "$PORT"
	expect EACCES "$c" --udp --addr 127.0.0.2 --port "$PORT"
	expect EACCES "$c" --addr "$ADDR" --port $((PORT + 1))
	expect ok "$c" --udp --addr "$(prefix_host 1)" --port 443
	expect ok "$c" --udp --addr "$(prefix_host "$n")" --port 443
	expect EACCES "$c" --udp --addr "$(prefix_host "$n")" --port 444
done

echo "checked: each policy allows $ADDR:$PORT (tcp, udp) and its first and last prefix on 443,"
echo "and denies 127.0.0.2:$PORT, $ADDR:$((PORT + 1)) and its last prefix on 444 (EACCES)"
echo "socket()+connect()+close() to $ADDR:$PORT; TCP server: connectbench --serve, outside any sandbox"
echo "from cgroup $(sed -n 's/^0:://p' /proc/self/cgroup) (sandboxes: /sbx-bpf/NAME)"
echo "$ROUNDS rounds x ${SECS}s per condition and protocol; conditions: $CONDS"
for c in $CONDS; do for p in $PROTOS; do : >"$B/ops-$p-$c"; done; done
r=0
while [ $r -lt "$ROUNDS" ]; do
	line="round $((r + 1))/$ROUNDS:"
	for c in $(rotate "$r" $CONDS); do
		enter "$c"
		for p in $(rotate $((r % 2)) $PROTOS); do
			measure "$c" "$p"
			echo "$OPS" >>"$B/ops-$p-$c"
			line="$line $c/$p=$OPS"
		done
		leave "$c"
	done
	echo "$line"
	r=$((r + 1))
done

# The table for protocol $1, titled $2.
table() {
	for c in $CONDS; do
		case $c in
		baseline) overhead_row "baseline (no sbx-bpf)" - "$B/ops-$1-$c" ;;
		outside) overhead_row "outside any sandbox" "<= 1%" "$B/ops-$1-$c" ;;
		cidrs-*) overhead_row "inside, $(group "${c#cidrs-}") CIDRs" "<= 5%" "$B/ops-$1-$c" ;;
		esac
	done >"$B/medians-$1"
	overhead_table "$2" "$B/medians-$1"
}

table tcp "TCP socket()+connect()+close() to $ADDR:$PORT, with the handshake"
table udp "UDP socket()+connect()+close() to $ADDR:$PORT (no packet sent)"
echo
echo "ratio = ops/s relative to baseline; overhead = extra time per socket+connect+close;"
echo "spread = (max - min) / median over the $ROUNDS rounds: overheads below it are noise."
echo "Figures are from QEMU TCG (emulated CPU): only the ratios mean anything."
echo "Reproduce: make bench KERNEL=$(matrix_kernel)"
