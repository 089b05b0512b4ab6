# The static binary runs in the VM, doctor says this kernel can enforce
# (every program loaded and verified: it loads the real object), and `run`
# with programs of its own, no daemon anywhere, denies with an event: the
# daemon-less path, which most other files leave to the shared programs.
# e2e: programs=own
. /sbx/tests/e2e/lib.sh

out=$(sbx-bpf --version); check version-runs "$?" 0
case "$out" in "sbx-bpf "*) pass version-text ;; *) fail version-text "got '$out'" ;; esac

sbx-bpf --json doctor >"$W/doctor.json"; check doctor-json-exit-0 "$?" 0
check_json doctor-ok "$W/doctor.json" '.[0].ok == true'
check_json doctor-programs-pass "$W/doctor.json" \
	'.[0].checks[] | select(.name == "programs") | (.status == "PASS" and (.detail | test("every program loads")))'
check_json doctor-lsm-load-pass "$W/doctor.json" \
	'.[0].checks[] | select(.name == "lsm_load") | .status == "PASS"'
check_json doctor-lsm-active "$W/doctor.json" \
	'.[0].checks[] | select(.name == "lsm") | (.status == "PASS" and (.detail | test("bpf")))'
check_json doctor-cgroup-unified "$W/doctor.json" \
	'.[0].checks[] | select(.name == "cgroup") | (.status == "PASS" and (.detail | test("cpu.*memory.*io|io.*memory")))'
# Every kernel of the matrix has the move counts (CONFIG_KALLSYMS_ALL, bpf_kallsyms_lookup_name).
check_json doctor-move-counts "$W/doctor.json" \
	'.[0].checks[] | select(.name == "move_counts") | (.status == "PASS" and (.detail | test("seen to move and given to the programs")))'
# FMODE_CREATED is given on kernels whose headers were read for it (4.19 to 7.3); past them, a WARN.
case "$(uname -r)" in
[4-6].* | 7.[0-3].* | 7.[0-3]) want='.status == "PASS" and (.detail | test("FMODE_CREATED \\(0x100000\\)"))' ;;
*) want='.status == "WARN" and (.detail | test("outside 4.19 to 7.3"))' ;;
esac
check_json doctor-created-opens "$W/doctor.json" ".[0].checks[] | select(.name == \"created_opens\") | ($want)"
check_json doctor-no-fail "$W/doctor.json" '[.[0].checks[] | select(.status == "FAIL")] | length == 0'

sbx-bpf no-such-command 2>"$W/err"; check unknown-command-exit-2 "$?" 2
grep -q "unknown command 'no-such-command'" "$W/err" && pass unknown-command-message ||
	fail unknown-command-message "$(cat "$W/err")"

# The daemon-less path: nothing pinned, `run` loads and attaches its own programs.
[ ! -e /sys/fs/bpf/sbx/meta ] && pass own/nothing-pinned || fail own/nothing-pinned "a set is pinned"
wait_unloads 1200 || fail own/no-unload-before "$(unload_pids) still there"
progs0=$(sbx-probe bpf-progs)
mkdir -p "$W/d" && echo secret >"$W/d/secret"
out=$(sbx-bpf run --deny-read "$W/d/secret" --events "$W/ev.json" -- sh -c "sbx-probe open $W/d/secret; cat /etc/hostname" \
	2>"$W/run.err")
check own/exit "$?" 0
check own/denied-then-allowed "$(echo "$out" | tr '\n' ' ')" "EACCES $(cat /etc/hostname) "
check_json own/event "$W/ev.json" \
	"length == 1 and .[0].op == \"read\" and .[0].path == \"$W/d/secret\" and .[0].errno == 13"
grep -q "denied read $W/d/secret" "$W/run.err" && pass own/human-line || fail own/human-line "$(cat "$W/run.err")"

# The run's links go after it has exited: a child holds them past run's
# exit and takes the kernel's wait (two RCU-tasks grace periods a link on
# 6.1 and 6.12). The child goes, and then no program of the run is left in
# the kernel.
if [ -n "$(unload_pids)" ]; then
	echo "INFO $T/unload: the run had returned, its links were still going" >>"$LOG"
else
	echo "INFO $T/unload: the run's links were gone when it returned" >>"$LOG"
fi
wait_unloads 1200 && pass unload/child-exits || fail unload/child-exits "$(unload_pids) still there after 120 s"
check unload/no-program-left "$(sbx-probe bpf-progs)" "$progs0"

# lsm/file_permission (the largest program to verify) is loaded only when the command inherits a
# descriptor to judge on use, beyond its stdio; then a use the policy denies is refused.
# lsm_while NAME: how many LSM programs are in the kernel while a run of ours sleeps; the run
# inherits what the caller passes to this function (3<FILE).
mkdir -p "$W/m"
lsm_while() {
	sbx-bpf run --allow-write "$W/m" -- sh -c "touch $W/m/$1; sleep 3" 2>"$W/lsm-$1.err" &
	wait_for "$W/m/$1" 900 && sbx-probe bpf-progs lsm
	wait $!
	wait_unloads 1200
}
plain=$(lsm_while plain)
held=$(lsm_while held 3<"$W/d/secret")
check own/fd-judging-only-when-needed "$((held - plain))" 1
out=$(sbx-bpf run --deny-read "$W/d" -- sh -c 'cat <&3 >/dev/null 2>&1 && echo OK || echo refused' \
	3<"$W/d/secret" 2>/dev/null)
check own/inherited-use-refused "$out" refused
