#!/bin/sh
# `make bench` (SBX_BENCH_ONLY=verifier): what the kernel's verifier spends
# on each sbx-bpf program, on this kernel. veristat is not packaged in
# Debian 12; `sbx-bpf doctor --verifier-stats` loads the programs this host
# would load (never attaching them) with the verifier's statistics log
# (BPF_LOG_STATS) and prints, per program, "processed N insns" (what the
# 1,000,000-instruction limit counts), the states it stored, its
# verification time and the program's size after the verifier's rewrites.
# Runs as root in the VM (tests/vm/init.sh); see bench/README.md.
BENCH=verifier
B=/tmp/bench-verifier
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p "$B"
# On a refusal, doctor's FAIL lines name each program the verifier refused, and why.
sbx-bpf doctor --verifier-stats >"$B/out" 2>"$B/err" ||
	fail "$(cat "$B/out" "$B/err"; sbx-bpf doctor 2>&1 | grep '^FAIL')"
echo
echo "## Verifier cost per program, kernel $(uname -r), most instructions first"
cat "$B/out"
awk '$1 == "program" { t = 1; next } t && $1 == "total" { exit } t && NF >= 7 {
		n++; if ($3 > max) { max = $3; name = $1 } }
	END { printf "\n%d programs; the largest, %s, processed %d instructions (%.1f%% of the limit)\n",
		n, name, max, max / 10000 }' "$B/out"
echo "verify_us is emulated time under QEMU TCG; instruction and state counts are the kernel's own."
echo "Reproduce: SBX_BENCH_ONLY=verifier make bench KERNEL=$(matrix_kernel)"
