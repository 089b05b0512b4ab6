#!/usr/bin/env bash
# kill, freeze, thaw and stats with the real binary on the build host: the
# command-line contract (exit codes, messages, --json errors), and, where
# this host lets root make a cgroup in its cgroup2 tree (hybrid layouts do:
# cgroup.kill and cgroup.freeze need no controller), a real freeze/thaw/kill
# of processes checked against cgroup.events and cgroup.procs directly.
# Prints one "PASS name" / "FAIL name: why" line per check.
B=${BUILD:-build}/sbx-bpf
T=lifecycle
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
W=$(mktemp -d)
CG=
cleanup() {
	[ -n "$CG" ] && [ -d "$CG" ] && { echo 1 >"$CG/cgroup.kill" 2>/dev/null; sleep 0.2; rmdir "$CG" 2>/dev/null; }
	rm -rf "$W"
}
trap cleanup EXIT
V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
GHOST=ghost-$$

# --- help -----------------------------------------------------------------------
for cmd in stats freeze thaw kill; do
	"$B" --help | grep -q "^  $cmd " && pass "help-lists-$cmd" || fail "help-lists-$cmd" "missing"
	"$B" $cmd --help >"$W/out"; check "$cmd-help-exit-0" "$?" 0
	grep -q "Usage: sbx-bpf $cmd .*NAME|CGROUP" "$W/out" && pass "$cmd-help-text" || fail "$cmd-help-text" "$(head -1 "$W/out")"
done

# --- usage errors: exit 2 ------------------------------------------------------------
for cmd in stats freeze thaw kill; do
	"$B" $cmd >/dev/null 2>"$W/err"; check "$cmd-no-argument-exit-2" "$?" 2
	grep -q "$cmd takes one sandbox NAME or CGROUP" "$W/err" && pass "$cmd-no-argument-message" ||
		fail "$cmd-no-argument-message" "$(cat "$W/err")"
	"$B" $cmd a b >/dev/null 2>&1; check "$cmd-two-arguments-exit-2" "$?" 2
	"$B" $cmd --bogus x >/dev/null 2>&1; check "$cmd-bad-option-exit-2" "$?" 2
	"$B" $cmd .. >/dev/null 2>"$W/err"; check "$cmd-dotdot-name-exit-2" "$?" 2
	grep -q "invalid sandbox name '..'" "$W/err" && pass "$cmd-dotdot-name-message" || fail "$cmd-dotdot-name-message" "$(cat "$W/err")"
done
"$B" stats --timeout 5 x >/dev/null 2>&1; check stats-has-no-timeout-exit-2 "$?" 2
for t in 0 -1 abc 5s 99999; do
	"$B" kill --timeout "$t" "$GHOST" >/dev/null 2>&1; check "kill-timeout-$t-exit-2" "$?" 2
done

if [ -z "$V2" ]; then
	# No cgroup2 at all: every lookup fails with exit 1 and says so.
	"$B" stats "$GHOST" >/dev/null 2>"$W/err"; check no-cgroup2-exit-1 "$?" 1
	grep -q "no cgroup v2" "$W/err" && pass no-cgroup2-message || fail no-cgroup2-message "$(cat "$W/err")"
	exit 0
fi

# --- a sandbox that does not exist: exit 1, named, and {"error": …} in JSON ------------------
for cmd in stats freeze thaw kill; do
	"$B" $cmd "$GHOST" >/dev/null 2>"$W/err"; check "$cmd-unknown-sandbox-exit-1" "$?" 1
	grep -q "no sandbox named '$GHOST' ($V2/sbx-bpf/$GHOST does not exist)" "$W/err" &&
		pass "$cmd-unknown-sandbox-message" || fail "$cmd-unknown-sandbox-message" "$(cat "$W/err")"
	"$B" --json $cmd "$GHOST" >"$W/out" 2>/dev/null; check "$cmd-unknown-sandbox-json-exit-1" "$?" 1
	jq -e --arg g "$GHOST" '(keys == ["error"]) and (.error | test("no sandbox named .\($g)."))' "$W/out" >/dev/null &&
		pass "$cmd-json-error-object" || fail "$cmd-json-error-object" "$(cat "$W/out")"
done
"$B" kill "$GHOST" --json >"$W/out" 2>/dev/null
jq -e '.error' "$W/out" >/dev/null && pass json-option-after-command || fail json-option-after-command "$(cat "$W/out")"
"$B" stats "$V2/$GHOST" >/dev/null 2>"$W/err"; check unknown-cgroup-path-exit-1 "$?" 1
grep -q "no cgroup '$V2/$GHOST'" "$W/err" && pass unknown-cgroup-path-message || fail unknown-cgroup-path-message "$(cat "$W/err")"
if ! grep -q " - cgroup2 " <(awk '$5 == "/sys/fs/cgroup"' /proc/self/mountinfo); then
	# Hybrid or legacy: say why no sandbox can be there.
	grep -q "sandboxes need cgroup v2 as the only hierarchy" <("$B" stats "$GHOST" 2>&1) &&
		pass unknown-sandbox-explains-layout || fail unknown-sandbox-explains-layout "no layout hint"
fi

# --- paths outside the cgroup2 hierarchy, non-cgroups, the root: exit 2 ----------------------
"$B" stats /etc/ >/dev/null 2>"$W/err"; check path-outside-exit-2 "$?" 2
grep -q "'/etc/' is not in the cgroup v2 hierarchy" "$W/err" && pass path-outside-message || fail path-outside-message "$(cat "$W/err")"
"$B" --json kill ../../../etc >"$W/out" 2>/dev/null; check dotdot-escape-exit-2 "$?" 2
jq -e '.error | test("not in the cgroup v2 hierarchy")' "$W/out" >/dev/null && pass dotdot-escape-json || fail dotdot-escape-json "$(cat "$W/out")"
"$B" stats "$V2/cgroup.procs" >/dev/null 2>&1; check not-a-cgroup-exit-2 "$?" 2
for cmd in kill freeze thaw; do
	"$B" $cmd "$V2/" >/dev/null 2>"$W/err"; check "$cmd-root-refused-exit-2" "$?" 2
	grep -q "root of the cgroup hierarchy" "$W/err" && pass "$cmd-root-refused-message" || fail "$cmd-root-refused-message" "$(cat "$W/err")"
done

# stats of the root: every documented key, missing controllers as null.
"$B" --json stats "$V2/" >"$W/root.json"; check stats-root-exit-0 "$?" 0
jq -e --arg p "$V2" '.cgroup == $p and .name == null and has("populated") and has("frozen") and
	(.cpu == null or (.cpu | has("usage_usec") and has("nr_throttled"))) and
	has("memory") and has("io") and has("pids")' "$W/root.json" >/dev/null &&
	pass stats-root-json-shape || fail stats-root-json-shape "$(cat "$W/root.json")"
"$B" stats "$V2/" >"$W/out"; check stats-root-human-exit-0 "$?" 0
for s in state cpu memory io pids; do
	grep -q "^$s " "$W/out" || { fail stats-human-sections "no '$s' line: $(cat "$W/out")"; break; }
done && pass stats-human-sections
# A missing controller is "-", not an error: on a controller-less v2 (hybrid) that is memory.
if [ "$(jq -r '.memory' "$W/root.json")" = null ]; then
	grep -q '^memory   -$' "$W/out" && pass stats-missing-section-dash || fail stats-missing-section-dash "$(cat "$W/out")"
fi

# --- real processes in a real cgroup (root, writable cgroup2) --------------------------------
[ "$(id -u)" = 0 ] && mkdir "$V2/sbx-lifecycle-test-$$" 2>/dev/null || { echo "# lifecycle: no writable cgroup2 here; live checks skipped"; exit 0; }
CG=$V2/sbx-lifecycle-test-$$
REL=sbx-lifecycle-test-$$/
start() {	# start a workload inside $CG ($2, default $CG): $1 = a shell command
	# In a subshell, so the kills below do not make bash report "Killed" jobs.
	(sh -c "echo \$\$ >'${2:-$CG}/cgroup.procs' && exec sh -c '$1'" >/dev/null 2>&1 &)
}
start "i=0; while :; do i=\$((i+1)); echo \$i >>$W/count; done"
start "exec sleep 300"
for i in $(seq 50); do [ "$(wc -l <"$CG/cgroup.procs")" = 2 ] && break; sleep 0.1; done
sleep 0.5

"$B" --json stats "$REL" >"$W/s.json"; check live-stats-exit-0 "$?" 0
jq -e --arg p "$CG" '.cgroup == $p and .populated == true and .frozen == false and .cpu.usage_usec > 0' \
	"$W/s.json" >/dev/null && pass live-stats-json || fail live-stats-json "$(cat "$W/s.json")"

"$B" freeze "$REL" >"$W/out"; check live-freeze-exit-0 "$?" 0
grep -q '^frozen 1$' "$CG/cgroup.events" && pass live-freeze-events || fail live-freeze-events "$(cat "$CG/cgroup.events")"
a=$(wc -c <"$W/count"); sleep 0.5; b=$(wc -c <"$W/count")
check live-frozen-workload-stops "$b" "$a"
"$B" --json stats "$REL" | jq -e '.frozen == true' >/dev/null && pass live-stats-frozen || fail live-stats-frozen "not frozen"

"$B" --json thaw "$REL" >"$W/out"; check live-thaw-exit-0 "$?" 0
jq -e '.frozen == false and .procs == 2' "$W/out" >/dev/null && pass live-thaw-json || fail live-thaw-json "$(cat "$W/out")"
grep -q '^frozen 0$' "$CG/cgroup.events" && pass live-thaw-events || fail live-thaw-events "$(cat "$CG/cgroup.events")"
sleep 0.3; c=$(wc -c <"$W/count")
[ "$c" -gt "$b" ] && pass live-thawed-workload-runs || fail live-thawed-workload-runs "count stayed at $c"

# Refusal: a cgroup holding this very process.
(echo $BASHPID >"$CG/cgroup.procs" && exec "$B" kill "$REL") >/dev/null 2>"$W/err"
check live-kill-self-refused-exit-2 "$?" 2
grep -q "contains this sbx-bpf process itself" "$W/err" && pass live-kill-self-refused-message || fail live-kill-self-refused-message "$(cat "$W/err")"

"$B" freeze "$REL" >/dev/null	# kill works on a frozen cgroup too
"$B" --json kill "$REL" >"$W/out"; check live-kill-exit-0 "$?" 0
jq -e --arg p "$CG" '.cgroup == $p and .killed == 2 and .populated == false and .exists == true and
	(.method == "cgroup.kill" or .method == "signals")' "$W/out" >/dev/null &&
	pass live-kill-json || fail live-kill-json "$(cat "$W/out")"
check live-kill-procs-empty "$(cat "$CG/cgroup.procs")" ""
grep -q '^populated 0$' "$CG/cgroup.events" && pass live-kill-events || fail live-kill-events "$(cat "$CG/cgroup.events")"
"$B" kill "$REL" >"$W/out"; check live-kill-empty-exit-0 "$?" 0
grep -q "killed 0 processes" "$W/out" && grep -q "cgroup stays" "$W/out" && pass live-kill-human || fail live-kill-human "$(cat "$W/out")"

# The pre-5.14 path (freeze, SIGKILL pid by pid), forced.
echo 0 >"$CG/cgroup.freeze"
mkdir "$CG/inner"
start "while :; do sh -c true; done"
start "exec sleep 300" "$CG/inner"
for i in $(seq 50); do grep -q '^populated 1$' "$CG/inner/cgroup.events" && break; sleep 0.1; done
SBX_KILL_SIGNALS=1 "$B" --json kill "$REL" >"$W/out"; check live-kill-signals-exit-0 "$?" 0
jq -e '.method == "signals" and .killed >= 2' "$W/out" >/dev/null && pass live-kill-signals-json || fail live-kill-signals-json "$(cat "$W/out")"
grep -q '^populated 0$' "$CG/cgroup.events" && pass live-kill-signals-empty || fail live-kill-signals-empty "$(cat "$CG/cgroup.events")"
check live-kill-signals-restores-freeze "$(cat "$CG/cgroup.freeze")" 0
rmdir "$CG/inner" "$CG" && pass live-cgroup-removable || fail live-cgroup-removable "rmdir failed"
exit 0
