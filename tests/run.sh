#!/usr/bin/env bash
# Runs the test layers and prints one closing line "N passed, N failed".
#   tests/run.sh [unit|san|bpf|host|fuzz|vm]...     default: all six
# Layers:
#   unit  cmocka tests of the userspace library (build/tests/unit/*)
#   san   the same tests built with ASan+UBSan (build/san/tests/unit/*, `make san`):
#         a leak, an overflow or undefined behaviour fails the binary
#   bpf   BPF decision logic in the host kernel via BPF_PROG_TEST_RUN
#   host  the real binary on this host (CLI contract, doctor's verdict)
#   fuzz  each libFuzzer target (build/fuzz/fuzz_*, `make fuzz-build`) for
#         SBX_FUZZ_SECONDS (30) from its seeds in tests/fuzz/corpus/; a crash, a
#         leak or a broken invariant fails it, with the input that did it
#   vm    the e2e suite as root in QEMU, on every kernel of scripts/vm.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PASSED=0 FAILED=0

count() {	# count LAYER < lines of "PASS …"/"FAIL …"
	local layer=$1 p=0 f=0 line
	while IFS= read -r line; do
		case "$line" in
		PASS*) p=$((p + 1)); [ -n "${V:-}" ] && echo "  $line" ;;
		FAIL*) f=$((f + 1)); echo "  $line" ;;
		*) echo "  $line" ;;
		esac
	done
	echo "$layer: $p passed, $f failed"
	PASSED=$((PASSED + p)) FAILED=$((FAILED + f))
}

# cmocka binaries in TAP mode → PASS/FAIL lines; a crash counts as a failure.
run_cmocka() {
	local bin rc out
	for bin in "$@"; do
		out=$(CMOCKA_MESSAGE_OUTPUT=TAP "$bin" 2>&1)
		rc=$?
		printf '%s\n' "$out" | awk -v b="$(basename "$bin")" '
			/^ok /     { sub(/^ok [0-9]+ - /, ""); print "PASS " b "/" $0 }
			/^not ok / { sub(/^not ok [0-9]+ - /, ""); print "FAIL " b "/" $0 }
			/^#/ && !/^# ok/ { print }'
		if [ $rc -ne 0 ] && ! grep -q '^not ok' <<<"$out"; then
			echo "FAIL $(basename "$bin")/exit (status $rc)"
			grep -m4 -E 'runtime error|ERROR: [A-Za-z]+Sanitizer|^SUMMARY: ' <<<"$out"
			tail -5 <<<"$out"
		fi
	done
}

# Executables named test_* or fuzz_* in $1 (not the compiler's .d files), sorted.
bins_in() { find "$1" -maxdepth 1 -type f -perm -u+x -name "$2" 2>/dev/null | sort; }

layer_unit() { run_cmocka $(bins_in "$BUILD/tests/unit" "test_*"); }
layer_san() {
	local bins
	bins=$(bins_in "$BUILD/san/tests/unit" "test_*")
	[ -n "$bins" ] || { echo "FAIL san/build (nothing in $BUILD/san/tests/unit: run 'make san')"; return; }
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		run_cmocka $bins
}
layer_bpf() { run_cmocka "$BUILD"/tests/bpf/fs_match_test "$BUILD"/tests/bpf/map_purge_test "$BUILD"/tests/bpf/moves_test; }
layer_host() {
	local t
	for t in "$ROOT"/tests/host/*.sh; do
		BUILD=$BUILD bash "$t" || echo "FAIL $(basename "$t" .sh)/exit (status $?)"
	done
}
# One target: new inputs go to $BUILD/fuzz/corpus/NAME (kept between runs), never to the seeds in git.
run_fuzzer() {
	local bin=$1 name=${1##*/fuzz_} out rc first repro dict=()
	local work=$BUILD/fuzz/corpus/$name art=$BUILD/fuzz/artifacts/$name/

	mkdir -p "$work" "$art"
	[ -f "$ROOT/tests/fuzz/$name.dict" ] && dict=(-dict="$ROOT/tests/fuzz/$name.dict")
	out=$("$bin" -max_total_time="${SBX_FUZZ_SECONDS:-30}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$art" "${dict[@]}" "$work" "$ROOT/tests/fuzz/corpus/$name" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "PASS fuzz_$name"
		awk -v n="fuzz_$name" '/^stat::number_of_executed_units:/ { r = $2 } /^stat::average_exec_per_sec:/ { s = $2 }
			/DONE +cov:/ { c = $4; f = $6; k = $8 } END { printf "# %s: %d runs (%d/s), cov %s, ft %s, corpus %s\n", n, r, s, c, f, k }' <<<"$out"
		return
	fi
	first=$(grep -m1 -E 'invariant .* broken|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)' <<<"$out")
	repro=$(grep -o 'Test unit written to .*' <<<"$out" | tail -1)
	repro=${repro#Test unit written to }
	echo "FAIL fuzz_$name: ${first:-exit status $rc}"
	echo "reproducer: ${repro:-none written}; replay: $bin ${repro:-…}"
	grep -m8 -E '^ +#[0-9]+ .* in ' <<<"$out" | grep -v -E ' in (fuzzer::|__sanitizer|__interceptor|__pthread|abort|raise|__libc|_start|main )'
}
layer_fuzz() {
	local bins bin
	bins=$(bins_in "$BUILD/fuzz" "fuzz_*")
	[ -n "$bins" ] || { echo "FAIL fuzz/build (nothing in $BUILD/fuzz: run 'make fuzz-build')"; return; }
	# Two at a time (one per core of the build machine), outputs kept apart and shown in order.
	local n=0 tmp
	tmp=$(mktemp -d)
	for bin in $bins; do
		run_fuzzer "$bin" >"$tmp/$n" 2>&1 &
		n=$((n + 1))
		[ $((n % ${SBX_FUZZ_JOBS:-2})) -ne 0 ] || wait
	done
	wait
	cat "$tmp"/* 2>/dev/null
	rm -rf "$tmp"
}
# vm.sh reports each kernel's suite, and a FAIL for one that did not finish;
# if it stops itself (a fetch that failed, a signal), that is a FAIL too.
layer_vm() { "$ROOT/scripts/vm.sh" test || echo "FAIL vm/exit (status $?)"; }

[ $# -gt 0 ] || set -- unit san bpf host fuzz vm
for layer in "$@"; do
	start=$SECONDS
	count "$layer" < <("layer_$layer" 2>&1)
	echo "$layer: took $((SECONDS - start))s"
done
echo "total: took ${SECONDS}s ($*)"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
