# The static binary runs in the VM, and doctor says this kernel can enforce.
. /sbx/tests/e2e/lib.sh

out=$(sbx-bpf --version); check version-runs "$?" 0
case "$out" in "sbx-bpf "*) pass version-text ;; *) fail version-text "got '$out'" ;; esac

sbx-bpf doctor >"$W/doctor.txt" 2>&1; check doctor-exit-0 "$?" 0
sbx-bpf --json doctor >"$W/doctor.json"; check doctor-json-exit-0 "$?" 0
check_json doctor-ok "$W/doctor.json" '.[0].ok == true'
check_json doctor-lsm-load-pass "$W/doctor.json" \
	'.[0].checks[] | select(.name == "lsm_load") | .status == "PASS"'
check_json doctor-lsm-active "$W/doctor.json" \
	'.[0].checks[] | select(.name == "lsm") | (.status == "PASS" and (.detail | test("bpf")))'
check_json doctor-cgroup-unified "$W/doctor.json" \
	'.[0].checks[] | select(.name == "cgroup") | (.status == "PASS" and (.detail | test("cpu.*memory.*io|io.*memory")))'
check_json doctor-no-fail "$W/doctor.json" '[.[0].checks[] | select(.status == "FAIL")] | length == 0'

sbx-bpf no-such-command 2>"$W/err"; check unknown-command-exit-2 "$?" 2
grep -q "unknown command 'no-such-command'" "$W/err" && pass unknown-command-message ||
	fail unknown-command-message "$(cat "$W/err")"
