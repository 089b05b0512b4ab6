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

# SBX_BENCH_VERIFIER_TRACE=1: where the verifier's time goes. The programs are
# loaded again under ftrace's function_graph tracer, hooked on a few of
# bpf_check's passes only (set_ftrace_filter), so nothing else pays the
# tracer's entry and exit: each pass's time (instructions, under icount) in
# all programs, then per program in load order. Passes this kernel lacks are
# left out of the filter. SBX_BENCH_VERIFIER_PASSES adds functions to hook;
# a function called more than once in a program shows "us/calls" there.
# SBX_BENCH_VERIFIER_LIVENESS=1 (7.0 and later): which subprograms 7.x's
# stack liveness pass analyses, and how often. The pass analyses a
# subprogram once as a root and again for each call site that passes it a
# pointer into a stack; its time follows the size of what it analyses.
# An fprobe on analyze_subprog reads the subprogram's index and size
# (instructions) from its func_instance (BTF field names of 7.x's
# kernel/bpf/liveness.c); its entries and exits give each subprogram's
# own time (us = thousands of instructions, the probe's cost included).
# One row per size: a shared subprogram has the same size in every program;
# "again" counts its analyses for a call site (depth 1 and more).
T=/sys/kernel/tracing
tracefs() { [ -e $T/trace ] || mount -t tracefs nodev $T || fail "$1: no tracefs"; }
liveness() {
	tracefs liveness
	echo 'f:sbx_ana analyze_subprog sub=instance->subprog n=instance->insn_cnt d=instance->depth' \
		>>$T/dynamic_events 2>/dev/null || { echo "liveness: no analyze_subprog to probe on $(uname -r)"; return 0; }
	echo 'f:sbx_anax analyze_subprog%return' >>$T/dynamic_events
	# bpf_check(prog, attr, ...): BPF_PROG_LOAD's prog_name sits 48 bytes into attr
	echo 'f:sbx_chk bpf_check name=+48($arg2):string' >>$T/dynamic_events
	echo 131072 >$T/buffer_size_kb
	echo 1 >$T/events/fprobes/enable
	echo >$T/trace
	echo 1 >$T/tracing_on
	sbx-bpf doctor --verifier-stats >/dev/null 2>"$B/liveness.err" || fail "liveness: doctor: $(tail -5 "$B/liveness.err")"
	echo 0 >$T/tracing_on
	cat $T/trace >"$B/liveness"
	echo 0 >$T/events/fprobes/enable
	echo >$T/dynamic_events
	echo 1408 >$T/buffer_size_kb
	echo
	echo "## 7.x's stack liveness pass, per subprogram (one row per size; largest own time first)"
	printf '%6s %9s %6s %10s   %s\n' insns analyses again own_us "first seen (program, subprogram index)"
	awk 'function now() { match($0, / [0-9]+\.[0-9]+: /); return substr($0, RSTART + 1, RLENGTH - 3) * 1e6 }
		/ sbx_chk: / { prog++; name = prog; if (match($0, /name="[^"]*"/)) name = substr($0, RSTART + 6, RLENGTH - 7) }
		/ sbx_ana: / { t = now(); if (sp > 0) own[stk[sp]] += t - last; last = t
			match($0, /sub=[0-9]+/); s = substr($0, RSTART + 4, RLENGTH - 4)
			match($0, /n=[0-9]+/); n = substr($0, RSTART + 2, RLENGTH - 2)
			if (!/ d=0/) again[n]++
			stk[++sp] = n; cnt[n]++; if (!(n in first)) first[n] = name " #" s }
		/ sbx_anax: / && sp > 0 { t = now(); own[stk[sp]] += t - last; last = t; sp-- }
		END { for (n in cnt) printf "%6d %9d %6d %10.0f   %s\n", n, cnt[n], again[n], own[n], first[n] }' "$B/liveness" |
		sort -k4 -n -r | head -25
	# Roots (depth 0) are each subprogram's one analysis per program; deeper
	# ones are again per call site that hands it a stack pointer.
	echo "by depth (0: analysed as a root; 1 and more: again for a call site passing a stack pointer)"
	printf '%6s %9s %10s %12s\n' depth analyses insns own_us
	awk 'function now() { match($0, / [0-9]+\.[0-9]+: /); return substr($0, RSTART + 1, RLENGTH - 3) * 1e6 }
		/ sbx_ana: / { t = now(); if (sp > 0) own[stk[sp]] += t - last; last = t
			match($0, /n=[0-9]+/); n = substr($0, RSTART + 2, RLENGTH - 2)
			match($0, /d=[0-9]+/); d = substr($0, RSTART + 2, RLENGTH - 2)
			stk[++sp] = d; cnt[d]++; ins[d] += n }
		/ sbx_anax: / && sp > 0 { t = now(); own[stk[sp]] += t - last; last = t; sp-- }
		END { for (d in cnt) printf "%6d %9d %10d %12.0f\n", d, cnt[d], ins[d], own[d] }' "$B/liveness" | sort -n
	echo "Reproduce: SBX_BENCH_ONLY=verifier SBX_BENCH_VERIFIER_LIVENESS=1 make bench KERNEL=$(matrix_kernel)"
}
[ "${SBX_BENCH_VERIFIER_LIVENESS:-0}" = 1 ] && liveness

# SBX_BENCH_VERIFIER_RUN=1: where one `sbx-bpf run -- /bin/true` without the
# daemon spends, by bpf(2) command (kprobes on __sys_bpf and bpf_check), with
# its start-up phases (SBX_TRACE_PHASES). SBX_BENCH_VERIFIER_RUN_FUNCS adds
# kernel functions; SBX_BENCH_VERIFIER_RUN_UFUNCS functions of sbx-bpf
# itself, as NAME=OFFSET (uprobes; the binary is static and not relocated,
# so the offset is the symbol's address less 0x400000:
#   a=$(nm build/sbx-bpf | awk '$3 == "hooks__select" { print $1 }'); printf '0x%x\n' $((0x$a - 0x400000))
# ). Each probe hit costs instructions too: compare runs with the same
# probes only.
run_probe() { # NAME TARGET EVENTS-FILE [FETCH-ARGS]
	echo "p:sbx_f_$1 $2 ${4:-}" >>"$T/$3" && echo "r:sbx_fr_$1 $2" >>"$T/$3" || fail "run: cannot probe $2"
}
run_trace() {
	tracefs run
	run_probe sys __sys_bpf kprobe_events 'cmd=%di:u32'	# x86-64: the first argument
	run_probe chk bpf_check kprobe_events
	for f in ${SBX_BENCH_VERIFIER_RUN_FUNCS:-}; do run_probe "$f" "$f" kprobe_events; done
	for u in ${SBX_BENCH_VERIFIER_RUN_UFUNCS:-}; do
		run_probe "${u%%=*}" "$(command -v sbx-bpf):${u#*=}" uprobe_events; done
	echo 131072 >$T/buffer_size_kb
	echo 1 >$T/events/kprobes/enable
	[ -z "${SBX_BENCH_VERIFIER_RUN_UFUNCS:-}" ] || echo 1 >$T/events/uprobes/enable
	echo >$T/trace
	echo 1 >$T/tracing_on
	SBX_TRACE_PHASES=1 sbx-bpf run -- /bin/true 2>"$B/run.err" || fail "run: $(tail -5 "$B/run.err")"
	echo 0 >$T/tracing_on
	cat $T/trace >"$B/run.trace"
	echo 0 >$T/events/kprobes/enable
	[ -z "${SBX_BENCH_VERIFIER_RUN_UFUNCS:-}" ] || { echo 0 >$T/events/uprobes/enable; echo >$T/uprobe_events; }
	echo >$T/kprobe_events
	echo 1408 >$T/buffer_size_kb
	echo
	echo "## One run without the daemon: its phases, then by bpf(2) command (us = thousands of instructions)"
	awk '$2 == "phase" { if (prev) printf "  %10.0f us  phase %s\n", ($4 - prev) / 1e3, $3; prev = $4 }' "$B/run.err"
	echo "  us      calls  (bpf command or probed function)"
	awk 'BEGIN { split("MAP_CREATE MAP_LOOKUP_ELEM MAP_UPDATE_ELEM MAP_DELETE_ELEM MAP_GET_NEXT_KEY PROG_LOAD " \
			"OBJ_PIN OBJ_GET PROG_ATTACH PROG_DETACH PROG_TEST_RUN PROG_GET_NEXT_ID MAP_GET_NEXT_ID " \
			"PROG_GET_FD_BY_ID MAP_GET_FD_BY_ID OBJ_GET_INFO_BY_FD PROG_QUERY RAW_TRACEPOINT_OPEN BTF_LOAD " \
			"BTF_GET_FD_BY_ID TASK_FD_QUERY MAP_LOOKUP_AND_DELETE_ELEM MAP_FREEZE BTF_GET_NEXT_ID " \
			"MAP_LOOKUP_BATCH MAP_LOOKUP_AND_DELETE_BATCH MAP_UPDATE_BATCH MAP_DELETE_BATCH LINK_CREATE " \
			"LINK_UPDATE LINK_GET_FD_BY_ID LINK_GET_NEXT_ID ENABLE_STATS ITER_CREATE LINK_DETACH PROG_BIND_MAP", cn, " ") }
		function now() { match($0, / [0-9]+\.[0-9]+: /); return substr($0, RSTART + 1, RLENGTH - 3) * 1e6 }
		$1 !~ /^sbx-bpf-[0-9]+$/ { next }	# sbx-bpf alone, not what else calls bpf() meanwhile
		{ match($0, /-[0-9]+ +\[/); pid = substr($0, RSTART + 1, RLENGTH - 2) + 0 }
		/ sbx_f_/ { match($0, / sbx_f_[A-Za-z0-9_]+/); f = substr($0, RSTART + 7, RLENGTH - 7)
			if (f == "sys") { match($0, /cmd=[0-9]+/); c[pid] = substr($0, RSTART + 4, RLENGTH - 4) + 0 }
			t0[pid, f] = now() }
		/ sbx_fr_/ { match($0, / sbx_fr_[A-Za-z0-9_]+/); f = substr($0, RSTART + 8, RLENGTH - 8)
			d = now() - t0[pid, f]
			if (f == "sys") { s[c[pid]] += d; n[c[pid]]++ } else { fs[f] += d; fn[f]++ } }
		END { for (k in s) printf "  %10.0f us %6d  %s\n", s[k], n[k], ((k + 1) in cn ? cn[k + 1] : "cmd " k)
			for (f in fs) printf "  %10.0f us %6d  %s\n", fs[f], fn[f], (f == "chk" ? "bpf_check (in PROG_LOAD)" : f) }' \
		"$B/run.trace" | sort -n -r
	echo "Reproduce: SBX_BENCH_ONLY=verifier SBX_BENCH_VERIFIER_RUN=1 make bench KERNEL=$(matrix_kernel)"
}
[ "${SBX_BENCH_VERIFIER_RUN:-0}" = 1 ] && run_trace

[ "${SBX_BENCH_VERIFIER_TRACE:-0}" = 1 ] || exit 0
tracefs trace
PASSES="bpf_check do_check_common bpf_compute_live_registers bpf_compute_subprog_arg_access
	do_misc_fixups bpf_do_misc_fixups jit_subprogs bpf_fixup_call_args ${SBX_BENCH_VERIFIER_PASSES:-}"
untrace() {
	echo 0 >$T/tracing_on
	echo nop >$T/current_tracer
	: >$T/set_ftrace_filter
	echo 0 >$T/options/funcgraph-tail
	echo 1408 >$T/buffer_size_kb
}
trap untrace EXIT
untrace
for f in $PASSES; do echo "$f" >>$T/set_ftrace_filter 2>/dev/null; done
echo function_graph >$T/current_tracer || fail "trace: no function_graph tracer"
echo 1 >$T/options/funcgraph-tail
echo 131072 >$T/buffer_size_kb
echo >$T/trace
echo 1 >$T/tracing_on
sbx-bpf doctor --verifier-stats >"$B/traced" 2>&1 || fail "trace: doctor: $(tail -5 "$B/traced")"
echo 0 >$T/tracing_on
cat $T/trace >"$B/trace"
untrace
# "N us" on each function's closing line ("} /* name */") or leaf line ("name();").
awk -v passes="$(echo $PASSES)" '
	BEGIN { n = split(passes, p, " "); for (i = 1; i <= n; i++) want[p[i]] = 1 }
	match($0, /[0-9]+(\.[0-9]+)? us/) {
		d = substr($0, RSTART, RLENGTH - 3) + 0
		if (!match($0, /\/\* [A-Za-z_0-9.]+ \*\//) && !match($0, /[A-Za-z_0-9.]+\(\);/)) next
		name = substr($0, RSTART, RLENGTH); gsub(/[\/* ();]/, "", name)
		if (!(name in want)) next
		sum[name] += d; calls[name]++
		if (name == "bpf_check") { prog[++np] = d
			for (k in cur) { per[np, k] = cur[k]; nper[np, k] = ncur[k]; delete cur[k]; delete ncur[k] } }
		else { cur[name] += d; ncur[name]++ }
	}
	END {
		printf "\n## Where the verifier spends (function_graph on its passes; us = thousands of instructions)\n"
		printf "%-34s %12s %8s %7s\n", "pass", "us", "calls", "share"
		for (k in sum) if (k != "bpf_check")
			printf "%-34s %12.0f %8d %6.1f%%\n", k, sum[k], calls[k], 100 * sum[k] / sum["bpf_check"]
		printf "%-34s %12.0f %8d\n", "bpf_check (all of it)", sum["bpf_check"], calls["bpf_check"]
		printf "(a pass nested in another, as the liveness pass in bpf_compute_live_registers, counts in both)\n"
		printf "\nper program, in load order, the feature probes of libbpf and doctor included (match a row to"
		printf "\na program by its bpf_check us against verify_us above): bpf_check us, then each pass us\n"
		for (i = 1; i <= np; i++) {
			line = sprintf("%3d %9.0f", i, prog[i])
			for (k in sum) if (k != "bpf_check" && per[i, k] > 0) line = line sprintf("  %s %.0f%s", k, per[i, k], nper[i, k] > 1 ? "/" nper[i, k] : "")
			print line
		}
	}' "$B/trace"
echo "Reproduce: SBX_BENCH_ONLY=verifier SBX_BENCH_VERIFIER_TRACE=1 make bench KERNEL=$(matrix_kernel)"
