# stats, freeze, thaw and kill act on a live sandbox from outside it: the
# numbers come from its cgroup, a frozen workload stops making progress and
# resumes when thawed, kill ends the whole tree (run reports SIGKILL as 137)
# and run then removes the cgroup. Unknown names exit 1.
. /sbx/tests/e2e/lib.sh

CG=/sys/fs/cgroup/sbx-bpf/e2e-life
C=$W/count
trap 'sbx-bpf kill e2e-life >/dev/null 2>&1; sbx-bpf kill e2e-life2 >/dev/null 2>&1' EXIT

# Limits (when this run has them) enable the memory and pids controllers, so
# those sections must then be numbers; without them they may be null.
LIMITS=
if sbx-bpf run --help | grep -q -- '--memory' && sbx-bpf run --help | grep -q -- '--pids'; then
	LIMITS="--memory 256M --pids 64"
fi

# A busy phase (cpu usage), then a counter it appends to until killed.
# shellcheck disable=SC2086
sbx-bpf run --name e2e-life --events "$W/life.json" $LIMITS -- sh -c "
	i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done
	touch $W/ready
	while :; do echo x >>$C; done" >"$W/run.out" 2>"$W/run.err" &
runpid=$!
if ! wait_for "$CG" 300 || ! wait_for "$W/ready" 600; then
	fail sandbox-started "no $CG or workload not ready; run: $(cat "$W/run.err")"
	exit 0
fi
pass sandbox-started

# --- stats ---------------------------------------------------------------------------
sbx-bpf --json stats e2e-life >"$W/stats.json"; check stats-exit-0 "$?" 0
check_json stats-identity "$W/stats.json" \
	".[0].name == \"e2e-life\" and .[0].cgroup == \"$CG\" and .[0].populated == true and .[0].frozen == false"
check_json stats-cpu-fields "$W/stats.json" \
	'(.[0].cpu | keys) == ["nr_periods","nr_throttled","system_usec","throttled_usec","usage_usec","user_usec"]'
check_json stats-cpu-used "$W/stats.json" '.[0].cpu.usage_usec > 0 and .[0].cpu.user_usec + .[0].cpu.system_usec > 0'
check_json stats-sections-present "$W/stats.json" \
	'.[0] | has("memory") and has("io") and has("pids")'
check_json stats-memory-fields "$W/stats.json" \
	'.[0].memory == null or (.[0].memory | keys) == ["current","max","oom","oom_kill","peak"]'
check_json stats-io-fields "$W/stats.json" \
	'.[0].io == null or (.[0].io | keys) == ["rbytes","rios","wbytes","wios"]'
check_json stats-pids-fields "$W/stats.json" \
	'.[0].pids == null or (.[0].pids | keys) == ["current","events_max","max"]'
if [ -n "$LIMITS" ]; then
	check_json stats-memory-limited "$W/stats.json" \
		'.[0].memory.current > 0 and .[0].memory.max == 268435456 and .[0].memory.oom_kill == 0'
	check_json stats-pids-limited "$W/stats.json" \
		'.[0].pids.current >= 1 and .[0].pids.max == 64 and .[0].pids.events_max == 0'
fi
sbx-bpf stats e2e-life >"$W/stats.txt"; check stats-human-exit-0 "$?" 0
grep -q "^sandbox  e2e-life$" "$W/stats.txt" && grep -q "^state    populated, not frozen$" "$W/stats.txt" &&
	pass stats-human || fail stats-human "$(cat "$W/stats.txt")"
# The same cgroup by path, absolute and relative to the cgroup2 mount.
sbx-bpf --json stats "$CG" | jq -e '.name == "e2e-life"' >/dev/null && pass stats-by-path || fail stats-by-path "absolute"
sbx-bpf --json stats sbx-bpf/e2e-life | jq -e '.name == "e2e-life"' >/dev/null &&
	pass stats-by-relative-path || fail stats-by-relative-path "relative"

# --- freeze / thaw ------------------------------------------------------------------------
sbx-bpf freeze e2e-life >"$W/freeze.out" 2>&1; check freeze-exit-0 "$?" 0
grep -q '^frozen 1$' "$CG/cgroup.events" && pass freeze-cgroup-events || fail freeze-cgroup-events "$(cat "$CG/cgroup.events")"
a=$(wc -c <"$C"); sleep 1; b=$(wc -c <"$C")
check frozen-counter-stops "$b" "$a"
sbx-bpf --json stats e2e-life | jq -e '.frozen == true and .populated == true' >/dev/null &&
	pass stats-shows-frozen || fail stats-shows-frozen "$(sbx-bpf --json stats e2e-life)"

sbx-bpf --json thaw e2e-life >"$W/thaw.json"; check thaw-exit-0 "$?" 0
check_json thaw-json "$W/thaw.json" '.[0].frozen == false and .[0].name == "e2e-life" and .[0].procs >= 1'
grep -q '^frozen 0$' "$CG/cgroup.events" && pass thaw-cgroup-events || fail thaw-cgroup-events "$(cat "$CG/cgroup.events")"
sleep 1; c=$(wc -c <"$C")
[ "$c" -gt "$b" ] && pass thawed-counter-runs || fail thawed-counter-runs "stayed at $c bytes"

# --- kill ------------------------------------------------------------------------------
sbx-bpf --json kill e2e-life >"$W/kill.json"; check kill-exit-0 "$?" 0
check_json kill-json "$W/kill.json" \
	".[0].name == \"e2e-life\" and .[0].killed >= 1 and .[0].method == \"cgroup.kill\" and .[0].populated == false"
wait $runpid; check run-exit-137-after-kill "$?" 137
# run saw all of it happen and put it on the event stream.
check_json lifecycle-events "$W/life.json" \
	'[.[] | select(.type == "lifecycle") | .event] as $e | ($e | index("frozen")) != null and ($e | index("thawed")) != null and ($e | index("killed")) != null'
check_json lifecycle-events-order "$W/life.json" \
	'[.[] | select(.type == "lifecycle") | .event] | (index("frozen") < index("thawed")) and (index("thawed") < index("killed"))' 
i=0; while [ -d "$CG" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ ! -d "$CG" ] && pass cgroup-removed-by-run || fail cgroup-removed-by-run "$CG still there"

# --- kill the pre-5.14 way (freeze, SIGKILL pid by pid), a frozen tree, by path -------------------
rm -f "$W/ready"
sbx-bpf run --name e2e-life2 -- sh -c "
	sleep 300 & sleep 300 & (while :; do sh -c true; done) &
	touch $W/ready; wait" >/dev/null 2>"$W/run2.err" &
runpid=$!
if wait_for "$W/ready" 600; then
	sbx-bpf freeze e2e-life2 >/dev/null; check freeze2-exit-0 "$?" 0
	SBX_KILL_SIGNALS=1 sbx-bpf --json kill sbx-bpf/e2e-life2 >"$W/kill2.json"; check kill-signals-exit-0 "$?" 0
	check_json kill-signals-json "$W/kill2.json" \
		'.[0].name == "e2e-life2" and .[0].method == "signals" and .[0].killed >= 4 and .[0].populated == false'
	wait $runpid; check run2-exit-137 "$?" 137
	i=0; while [ -d /sys/fs/cgroup/sbx-bpf/e2e-life2 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ ! -d /sys/fs/cgroup/sbx-bpf/e2e-life2 ] && pass cgroup2-removed || fail cgroup2-removed "still there"
else
	fail kill-signals-exit-0 "second sandbox not ready: $(cat "$W/run2.err")"
fi

# --- a sandbox that does not exist ----------------------------------------------------------
for cmd in stats freeze thaw kill; do
	sbx-bpf $cmd e2e-nope >/dev/null 2>"$W/err"; check "$cmd-unknown-exit-1" "$?" 1
	grep -q "no sandbox named 'e2e-nope'" "$W/err" && pass "$cmd-unknown-message" || fail "$cmd-unknown-message" "$(cat "$W/err")"
done
sbx-bpf --json kill e2e-nope >"$W/err.json" 2>/dev/null
check_json unknown-json-error "$W/err.json" '.[0] | keys == ["error"]'
sbx-bpf kill /sys/fs/cgroup/ >/dev/null 2>&1; check kill-root-refused-exit-2 "$?" 2
exit 0
