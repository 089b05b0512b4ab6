#!/usr/bin/env bash
# Runs the test layers and prints one closing line "N passed, N failed".
#   tests/run.sh [unit|bpf|host|vm]...     default: all four
# Layers:
#   unit  cmocka tests of the userspace library (build/tests/unit/*)
#   bpf   BPF decision logic in the host kernel via BPF_PROG_TEST_RUN
#   host  the real binary on this host (CLI contract, doctor's verdict)
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
			tail -5 <<<"$out"
		fi
	done
}

layer_unit() { run_cmocka $(find "$BUILD/tests/unit" -type f -name "test_*" ! -name "*.d" | sort); }
layer_bpf() { run_cmocka "$BUILD"/tests/bpf/fs_match_test; }
layer_host() {
	local t
	for t in "$ROOT"/tests/host/*.sh; do
		BUILD=$BUILD bash "$t" || echo "FAIL $(basename "$t" .sh)/exit (status $?)"
	done
}
layer_vm() { "$ROOT/scripts/vm.sh" test; }

[ $# -gt 0 ] || set -- unit bpf host vm
for layer in "$@"; do
	start=$SECONDS
	count "$layer" < <("layer_$layer" 2>&1)
	echo "$layer: took $((SECONDS - start))s"
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
