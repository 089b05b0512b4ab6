# A protection that does not load is never silently missing. With one hook
# left out (SBX_TEST_DROP_HOOKS, as if this kernel had refused its
# program): doctor FAILs naming it; run, the daemon and attach refuse to
# start, naming the hook, the reason and what is lost, and change nothing;
# accepted by name (flag, policy key, agent.json key) they start, the rest
# is enforced as ever, and the gap shows in status, list and a `start`
# lifecycle record.
# e2e: programs=own
. /sbx/tests/e2e/lib.sh

PIN=/sys/fs/bpf/sbx
CG=/sys/fs/cgroup/e2e-gaps
mkdir -p "$W/data" "$CG"
echo secret >"$W/data/secret"
export SBX_TEST_DROP_HOOKS=perf_event_open
inside() { sh -c 'echo $$ >'"$CG"'/cgroup.procs && exec "$@"' sh "$@"; }

# --- doctor -----------------------------------------------------------------------------------
sbx-bpf --json doctor >"$W/doctor.json" 2>"$W/doctor.err"
check doctor/exit-1 "$?" 1
check_json doctor/not-ok "$W/doctor.json" '.[0].ok == false'
check_json doctor/programs-fail "$W/doctor.json" \
	'.[0].checks[] | select(.name == "programs") | .status == "FAIL"'
check_json doctor/names-hook "$W/doctor.json" \
	'.[0].checks[] | select(.name == "hook:perf_event_open") |
	 (.status == "FAIL" and (.detail | test("left out on request")) and (.detail | test("perf events")) and
	  (.fix | test("--accept-missing perf_event_open")))'
check_json doctor/one-gap "$W/doctor.json" '[.[0].checks[] | select(.name | startswith("hook:"))] | length == 1'

# --- a variant that does not fit this kernel, through the real verifier ------------------------
# What a kernel update that changes a hook under a fixed object does. 6.1's verifier refuses the
# (int type) variant on its (struct perf_event_attr *, int) hook: doctor FAILs with the verifier's
# own words. 6.12's and 7.x's verifiers load the (attr, type) variant on their (int type) hook,
# which would then misread its argument: only the BTF comparison (hooks.c) keeps it out, so there
# `hooks` must pick the fitting variant (a load there would only show the verifier's blindness,
# at the cost of a whole verification: left out).
case "${SBX_KERNEL_RELEASE:-$(uname -r)}" in
6.1.*)
	SBX_TEST_DROP_HOOKS= SBX_TEST_WRONG_VARIANT=perf_event_open sbx-bpf --json doctor >"$W/wrong.json" \
		2>"$W/wrong.err"
	check wrong-variant/doctor-exit-1 "$?" 1
	check_json wrong-variant/verifier-reason "$W/wrong.json" \
		'.[0].checks[] | select(.name == "hook:perf_event_open") |
		 (.status == "FAIL" and (.detail | test("left out") | not) and (.detail | test("perf events")))'
	;;
*)
	check wrong-variant/btf-picks-fit "$(sbx-bpf hooks 2>&1 | awk '$1 == "perf_event_open" { print $2, $3 }')" \
		"task_perf_event_open fits"
	;;
esac

# --- run without its own acceptance: refused before anything loads, nothing started -----------
sbx-bpf run --name e2e-gap --deny-read "$W/data/secret" -- sh -c "touch $W/ran" 2>"$W/run.err"
check run/refused-exit-1 "$?" 1
[ ! -e "$W/ran" ] && pass run/command-not-started || fail run/command-not-started "it ran"
[ ! -e /sys/fs/cgroup/sbx-bpf/e2e-gap ] && pass run/no-cgroup || fail run/no-cgroup "left behind"
grep -q "lacks 1 of sbx-bpf's protections; nothing was started" "$W/run.err" &&
grep -q "perf_event_open: left out on request" "$W/run.err" &&
grep -q "without it: a sandbox allowed by perf_event_paranoid could open perf events" "$W/run.err" &&
grep -q -- "--accept-missing perf_event_open" "$W/run.err" && pass run/refusal-names-all ||
	fail run/refusal-names-all "$(cat "$W/run.err")"
# refused by the kernel's BTF before the verifier ran, not a load that failed
grep -q "cannot load" "$W/run.err" && fail run/refused-not-failed "$(cat "$W/run.err")" ||
	pass run/refused-not-failed

# --- accepted by flag: runs, everything else enforced, the gap in a start record ----------------
sbx-bpf run --accept-missing perf_event_open --deny-read "$W/data/secret" --events "$W/ev1.json" -- \
	sh -c "sbx-probe open $W/data/secret; touch $W/ran1" >"$W/out1" 2>"$W/err1"
check accepted/exit "$?" 0
[ -e "$W/ran1" ] && pass accepted/command-ran || fail accepted/command-ran "$(cat "$W/err1")"
check accepted/still-denied "$(cat "$W/out1")" EACCES
grep -q "warning: running without the perf_event_open hook (accepted)" "$W/err1" &&
	pass accepted/warned || fail accepted/warned "$(cat "$W/err1")"
check_json accepted/start-record "$W/ev1.json" \
	'[.[] | select(.type == "lifecycle" and .event == "start")] | length == 1 and
	 (.[0].missing[0].hook == "perf_event_open") and (.[0].detail | test("perf_event_open"))'
check_json accepted/denial-event "$W/ev1.json" \
	"any(.[]; .type == \"violation\" and .op == \"read\" and .path == \"$W/data/secret\")"

# an unknown hook in the policy's key is a policy error with its position (nothing loaded)
printf '{\n  "acceptMissing": ["perf_event_opn"]\n}\n' >"$W/typo.json"
sbx-bpf run --policy "$W/typo.json" -- true 2>"$W/typo.err"
check accepted/typo-exit-2 "$?" 2
grep -q "typo.json:2:21: 'acceptMissing\[0\]': \"perf_event_opn\" is not a hook" "$W/typo.err" &&
	pass accepted/typo-position || fail accepted/typo-position "$(cat "$W/typo.err")"

# --- the daemon: refuses before pinning anything, unless told ----------------------------------
sbx-bpf daemon 2>"$W/d0.err"
check daemon/refused-exit-1 "$?" 1
[ ! -e "$PIN/meta" ] && pass daemon/nothing-pinned || fail daemon/nothing-pinned "$(ls "$PIN")"
grep -q "perf_event_open: left out on request" "$W/d0.err" && grep -q 'accept_missing' "$W/d0.err" &&
	pass daemon/refusal-message || fail daemon/refusal-message "$(cat "$W/d0.err")"
echo '{ "accept_missing": ["perf_event_open"] }' >"$W/agent.json"
sbx-bpf daemon --config "$W/agent.json" --events "$W/d.json" 2>"$W/d1.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 && pass daemon/accepted-starts || fail daemon/accepted-starts "$(cat "$W/d1.err")"
check_json daemon/start-record "$W/d.json" \
	'[.[] | select(.type == "lifecycle" and .event == "start")] | length == 1 and .[0].missing[0].hook == "perf_event_open"'
check status/json-missing "$(sbx-bpf status --json | jq -r '[.pinned, .missing[0].hook, (.missing | length)] | join(" ")')" \
	"true perf_event_open 1"
sbx-bpf status | grep -q '^missing: *perf_event_open$' && pass status/text-missing ||
	fail status/text-missing "$(sbx-bpf status)"

# run on the daemon's set (nothing loads from here on): its own acceptance still needed
unset SBX_TEST_DROP_HOOKS
sbx-bpf run -- sh -c "touch $W/ran2" 2>"$W/run2.err"
check pinned-run/refused "$?" 1
[ ! -e "$W/ran2" ] && pass pinned-run/not-started || fail pinned-run/not-started "it ran"
grep -q "perf_event_open: left out on request" "$W/run2.err" && pass pinned-run/names-gap ||
	fail pinned-run/names-gap "$(cat "$W/run2.err")"
sbx-bpf --json run --deny-read "$W/data/secret" -- true >"$W/run.json" 2>/dev/null
check_json pinned-run/refusal-json "$W/run.json" \
	'.[0].error != null and .[0].missing[0].hook == "perf_event_open" and (.[0].missing[0].protection | length > 0)'
# another hook accepted is not this one
sbx-bpf run --accept-missing bpf -- true 2>/dev/null
check pinned-run/other-hook-refused "$?" 1
# by the policy's key
printf '{\n  "acceptMissing": ["perf_event_open"],\n  "filesystem": { "denyRead": ["%s"] }\n}\n' \
	"$W/data/secret" >"$W/accept.json"
check pinned-run/policy-key "$(sbx-bpf run --policy "$W/accept.json" -- sbx-probe open "$W/data/secret" 2>/dev/null)" \
	EACCES
sbx-bpf run --accept-missing perf_event_open --deny-read "$W/data/secret" --events "$W/ev2.json" -- \
	sbx-probe open "$W/data/secret" >"$W/out2" 2>/dev/null
check pinned-run/accepted "$(cat "$W/out2")" EACCES
check_json pinned-run/start-record "$W/ev2.json" \
	'any(.[]; .type == "lifecycle" and .event == "start" and .missing[0].hook == "perf_event_open")'

# attach: refused without, listed with
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data/secret\" ] } }" >"$W/p.json"
sbx-bpf attach "$CG" --policy "$W/p.json" 2>"$W/a0.err"
check attach/refused "$?" 1
check attach/nothing-attached "$(sbx-bpf list --json | jq -r 'length')" 0
sbx-bpf attach "$CG" --policy "$W/p.json" --accept-missing perf_event_open 2>"$W/a1.err"
check attach/accepted "$?" 0
check attach/enforced "$(inside sbx-probe open "$W/data/secret" 2>/dev/null)" EACCES
check list/json-missing "$(sbx-bpf list --json | jq -r '.[0].missing[0].hook')" perf_event_open
sbx-bpf list | grep -q 'missing=perf_event_open' && pass list/text-missing || fail list/text-missing "$(sbx-bpf list)"
sbx-bpf detach "$CG" 2>/dev/null

kill "$D"; wait "$D" 2>/dev/null
sbx-bpf unload
rmdir "$CG" 2>/dev/null

# --- a program loaded but not attached ------------------------------------------------------------
# The LSM programs open as another type and become LSM programs right before they load (loader.c
# lsm_prepare). libbpf 1.2 and later then drop their section handler, and the skeleton's attach
# skips them without a word: every program loaded, none enforcing. SBX_TEST_UNLINK takes one link
# back after the attach, as that would: run must refuse to start, not run the command unprotected.
unset SBX_TEST_DROP_HOOKS
SBX_TEST_UNLINK=file_open sbx-bpf run --name e2e-unlinked --deny-read "$W/data/secret" -- \
	sh -c "touch $W/ran-unlinked" 2>"$W/unlink.err"
check unlinked/refused-exit-1 "$?" 1
[ ! -e "$W/ran-unlinked" ] && pass unlinked/command-not-started || fail unlinked/command-not-started "it ran"
grep -q "cannot attach the enforcement programs" "$W/unlink.err" && pass unlinked/says-attach ||
	fail unlinked/says-attach "$(cat "$W/unlink.err")"
[ ! -e /sys/fs/cgroup/sbx-bpf/e2e-unlinked ] && pass unlinked/no-cgroup || fail unlinked/no-cgroup "left behind"
# the same run without the knob starts, and enforces
check unlinked/control "$(sbx-bpf run --deny-read "$W/data/secret" -- sbx-probe open "$W/data/secret" 2>/dev/null)" \
	EACCES

# --- an open that creates its file, without path_mknod ---------------------------------------------
# file_open lets such an open go by the kernel's FMODE_CREATED only because path_mknod judged the
# create (fs.bpf.c created_now). Without path_mknod (accepted), nothing has: the open is judged, and
# a create where writing is denied is refused there, with its event (the empty file is left: the
# gap's loss, which doctor names).
mkdir -p "$W/ws"
echo "{ \"filesystem\": { \"allowWrite\": [ \"$W/ws\" ] } }" >"$W/ws.json"
(cd / && SBX_TEST_DROP_HOOKS=path_mknod sbx-bpf run --accept-missing path_mknod --policy "$W/ws.json" \
	--events "$W/ev-nomknod.json" -- sbx-probe open "$W/data/made-unjudged" creat >"$W/out-nomknod" 2>/dev/null)
check no-mknod/create-open-judged "$(cat "$W/out-nomknod")" EACCES
check_json no-mknod/event "$W/ev-nomknod.json" \
	"map(select(.path == \"$W/data/made-unjudged\")) | length == 1 and .[0].op == \"write\""
SBX_TEST_DROP_HOOKS=path_mknod sbx-bpf --json doctor >"$W/doctor-nomknod.json" 2>/dev/null
check_json no-mknod/doctor-no-bit "$W/doctor-nomknod.json" \
	'.[0].checks[] | select(.name == "created_opens") | (.status == "WARN" and (.detail | test("path_mknod is not loaded")))'
check no-mknod/allowed-still "$(cd / && SBX_TEST_DROP_HOOKS=path_mknod sbx-bpf run --accept-missing path_mknod \
	--policy "$W/ws.json" -- sbx-probe open "$W/ws/made" creat 2>/dev/null)" OK
check no-mknod/control "$(cd / && sbx-bpf run --policy "$W/ws.json" -- sbx-probe open "$W/data/made-judged" creat \
	2>/dev/null)" EACCES
[ ! -e "$W/data/made-judged" ] && pass no-mknod/control-no-file || fail no-mknod/control-no-file "created"

# --- the walk read the other way -----------------------------------------------------------------
# The walk reads with plain loads where the kernel has bpf_rdonly_cast (6.2+), through a helper
# call per step where it does not; each boot also runs the other way (SBX_TEST_PLAIN_LOADS). On
# 6.1 plain loads are a load its verifier refuses: the loader loads again without them, so every
# protection is there (run starts without a gap) and enforces.
unset SBX_TEST_DROP_HOOKS
if grep -q bpf_rdonly_cast /sys/kernel/btf/vmlinux; then other=0; else other=1; fi
long=a-directory-name-longer-than-any-inline-store
mkdir -p "$W/data/$long"
echo x >"$W/data/$long/f"
echo x >"$W/data/$long/g"
out=$(SBX_TEST_PLAIN_LOADS=$other sbx-bpf run --events "$W/ev-walk.json" --deny-read "$W/data/secret" \
	--deny-read "$W/data/$long/f" -- \
	sh -c 'for f; do sbx-probe open "$f"; done' sh "$W/data/secret" "$W/data/$long/f" "$W/data/$long/g" \
	2>"$W/walk.err" | tr '\n' ' ')
check walk-other-way/verdicts "$out" "EACCES EACCES OK "
check_json walk-other-way/events "$W/ev-walk.json" \
	"[.[] | select(.op == \"read\") | .path] == [\"$W/data/secret\", \"$W/data/$long/f\"]"
