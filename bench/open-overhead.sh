#!/bin/sh
# `make bench`: what sbx-bpf's file hooks cost an open(2), a stat()+open(2)
# and a create+unlink, outside and inside a sandbox, against a kernel with no
# sbx-bpf programs at all. Runs as root in the VM (init's child, like
# tests/vm/demo.sh); output goes to the console and back to the host. See
# bench/README.md.
#
# Conditions, interleaved round by round (the starting condition rotates, so
# drift over the run does not favour one of them); each round runs openbench
# for SBX_BENCH_SECONDS per mode in every condition (the modes in one launch,
# their order rotating too), and the tables show the medians:
#   baseline     no sbx-bpf programs loaded
#   outside      programs loaded for a holder sandbox; openbench in no sandbox
#   rules-N      openbench inside a sandbox whose policy has N denyRead rules
# Modes (SBX_BENCH_OPEN_MODES, default all four):
#   open         open(O_RDONLY)+close() of three allowed files
#   stat         stat()+open()+close() of the same files
#   create       open(O_CREAT|O_EXCL)+close()+unlink() in $B/w (allowWrite)
#   read         a 1-byte pread() through descriptors of the same files,
#                opened once: what lsm/file_permission costs every use
# shellcheck disable=SC2086 # $FILES, $CONDS and $MODES are word lists on purpose
BENCH=open-overhead
B=/tmp/bench
. "$(dirname "$0")/lib.sh"
ROUNDS=${SBX_BENCH_ROUNDS:-5}
SECS=${SBX_BENCH_SECONDS:-1.5}
MODES=${SBX_BENCH_OPEN_MODES:-open stat create read}
RULES="10 1000 10000"
CONDS="baseline outside"
for n in $RULES; do CONDS="$CONDS rules-$n"; done
# Allowed files at realistic depths, each walked to its end by the matcher.
FILES="/usr/lib/x86_64-linux-gnu/libc.so.6 /etc/passwd $B/a/b/c/d/f"

# $B/policy-N.json: N denyRead rules on paths that are never opened.
gen_policy() {
	awk -v n="$1" -v w="$B" 'BEGIN {
		printf "{\n  \"filesystem\": {\n    \"allowWrite\": [\"%s\"],\n    \"denyRead\": [\n", w
		for (i = 0; i < n; i++)
			printf "      \"/bench/deny/r%05d\"%s\n", i, i < n - 1 ? "," : ""
		printf "    ]\n  }\n}\n"
	}' >"$B/policy-$1.json"
}

# The openbench command of mode $1, and the name it prints in mode=.
ob_cmd() {
	case $1 in
	open) echo "openbench --seconds $SECS $FILES" ;;
	stat) echo "openbench --seconds $SECS --stat $FILES" ;;
	create) echo "openbench --seconds $SECS --create $B/w" ;;
	read) echo "openbench --seconds $SECS --read $FILES" ;;
	esac
}
ob_mode() {
	case $1 in open) echo open ;; stat) echo stat+open ;; create) echo create+unlink ;; read) echo read ;; esac
}

# Run the modes $2 (in that order, one launch) once in condition $1; appends
# each mode's ops/s to $B/ops-MODE-COND and sets LINE to them, for the log.
measure() {
	script=
	for m in $2; do script="$script${script:+ && }$(ob_cmd "$m")"; done
	if [ "$1" = baseline ] && pgrep -x sbx-bpf >/dev/null; then
		fail "baseline: an sbx-bpf is running: $(pgrep -a -x sbx-bpf)"
	fi
	case $1 in
	baseline)
		sh -c "$script" ;;
	outside)
		holder_start "$B/policy-10.json" && sh -c "$script" && holder_stop ;;
	rules-*)
		sbx-bpf run --name bench --policy "$B/policy-${1#rules-}.json" -- sh -c "$script" ;;
	esac >"$B/out" 2>"$B/err" || fail "$1: $(cat "$B/out" "$B/err")"
	LINE=
	for m in $MODES; do
		ops=$(sed -n "s/^ops_per_sec=\([0-9.]*\) .* mode=$(ob_mode "$m") .*/\1/p" "$B/out")
		[ -n "$ops" ] || fail "$1: no $m result in '$(cat "$B/out")'"
		echo "$ops" >>"$B/ops-$m-$1"
		LINE="$LINE${LINE:+/}$ops"
	done
}

into_session

mkdir -p "$B/a/b/c/d" "$B/w" /bench/deny /tmp/bench-nowrite
echo data >"$B/a/b/c/d/f"
for f in $FILES; do [ -r "$f" ] || fail "$f missing"; done
for m in $MODES; do
	case $m in open | stat | create | read) ;; *) fail "unknown mode '$m' in SBX_BENCH_OPEN_MODES (open stat create read)" ;; esac
done

# Every policy really denies its first and last rule and a create outside
# its allowWrite, and allows the files and the creates that are measured.
for n in $RULES; do
	gen_policy "$n"
	for r in r00000 "r$(printf %05d $((n - 1)))"; do
		echo secret >"/bench/deny/$r"
		out=$(sbx-bpf run --name bench --policy "$B/policy-$n.json" -- sbx-probe open "/bench/deny/$r" 2>"$B/err")
		[ "$out" = EACCES ] || fail "policy-$n: open /bench/deny/$r gave '$out', not EACCES: $(cat "$B/err")"
	done
	out=$(sbx-bpf run --name bench --policy "$B/policy-$n.json" -- \
		sbx-probe open /tmp/bench-nowrite/f creat 2>"$B/err")
	[ "$out" = EACCES ] || fail "policy-$n: creating /tmp/bench-nowrite/f gave '$out', not EACCES: $(cat "$B/err")"
	sbx-bpf run --name bench --policy "$B/policy-$n.json" -- sh -c \
		"openbench --iterations 10 $FILES && openbench --iterations 10 --stat $FILES &&
		 openbench --iterations 10 --create $B/w && openbench --iterations 10 --read $FILES" \
		>/dev/null 2>"$B/err" || fail "policy-$n: openbench failed inside the sandbox: $(cat "$B/err")"
done

echo "checked: each policy denies its first and last rule and a create outside $B, and allows"
echo "the files and the creates in $B/w"
echo "open+close and stat+open+close of: $FILES; create+close+unlink in $B/w"
echo "from cgroup $(sed -n 's/^0:://p' /proc/self/cgroup) (sandboxes: /sbx-bpf/NAME)"
echo "$ROUNDS rounds x ${SECS}s per condition and mode; conditions: $CONDS; modes: $MODES"
for c in $CONDS; do for m in $MODES; do : >"$B/ops-$m-$c"; done; done
nmodes=$(echo $MODES | wc -w)
r=0
while [ $r -lt "$ROUNDS" ]; do
	line="round $((r + 1))/$ROUNDS ($(echo $MODES | tr ' ' /)):"
	for c in $(rotate "$r" $CONDS); do
		measure "$c" "$(rotate $((r % nmodes)) $MODES)"
		line="$line $c=$LINE"
	done
	echo "$line"
	r=$((r + 1))
done

# The table of mode $1, titled $2.
table() {
	for c in $CONDS; do
		case $c in
		baseline) overhead_row "baseline (no sbx-bpf)" - "$B/ops-$1-$c" ;;
		outside) overhead_row "outside any sandbox" "<= 1%" "$B/ops-$1-$c" ;;
		rules-*) overhead_row "inside, $(group "${c#rules-}") rules" "<= 10%" "$B/ops-$1-$c" ;;
		esac
	done >"$B/medians-$1"
	overhead_table "$2 throughput" "$B/medians-$1"
}

for m in $MODES; do
	case $m in
	open) table open "open(O_RDONLY)+close()" ;;
	stat) table stat "stat()+open(O_RDONLY)+close()" ;;
	create) table create "open(O_CREAT|O_EXCL)+close()+unlink() in an allowWrite directory" ;;
	read) table read "pread(1 byte) through an open descriptor" ;;
	esac
done
echo
echo "ratio = ops/s relative to baseline; overhead = extra time per operation;"
echo "spread = (max - min) / median over the $ROUNDS rounds: overheads below it are noise."
echo "Figures are from QEMU TCG (emulated CPU): only the ratios mean anything."
echo "Reproduce: make bench KERNEL=$(matrix_kernel)"
