# The host agent's first slice: pinned programs outlive the daemon (kill -9),
# a restarted daemon adopts them and collects what was produced meanwhile,
# attach/detach/list on an existing cgroup, atomic replacement.
. /sbx/tests/e2e/lib.sh

PIN=/sys/fs/bpf/sbx
CG=/sys/fs/cgroup/e2e-attach
mkdir -p "$W/data"
echo secret >"$W/data/secret"
echo other >"$W/data/other"
mkdir -p "$CG"
# inside CMD…: run CMD in the attached cgroup.
inside() { sh -c 'echo $$ >'"$CG"'/cgroup.procs && exec "$@"' sh "$@"; }

sbx-bpf daemon --events "$W/ev1.json" 2>"$W/d1.err" &
D=$!
wait_for "$PIN/meta" 600 && pass daemon/pinned || fail daemon/pinned "no $PIN/meta; $(cat "$W/d1.err")"
[ -e "$PIN/links/fs_file_open" ] && [ -e "$PIN/maps/sandboxes" ] && [ -e "$PIN/progs/net_connect4" ] &&
	pass daemon/pin-layout || fail daemon/pin-layout "$(ls -R "$PIN" 2>&1 | head -20)"

echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data/secret\" ] } }" >"$W/p1.json"
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data/other\" ] } }" >"$W/p2.json"
sbx-bpf attach "$CG" --policy "$W/p1.json" 2>"$W/a.err"
check attach/exit "$?" 0
check attach/denied "$(inside sbx-probe open "$W/data/secret" 2>/dev/null)" EACCES
check attach/other-ok "$(inside sbx-probe open "$W/data/other" 2>/dev/null)" OK
check attach/outside-ok "$(sbx-probe open "$W/data/secret" 2>/dev/null)" OK
out=$(sbx-bpf list --json | jq -r 'length')
check list/one "$out" 1
out=$(sbx-bpf status --json | jq -r "[.pinned, (.daemon.pid == $D), .maps.sandboxes.used, (.maps.fs_rules.used > 0)] | join(\" \")")
check status/running "$out" "true true 1 true"
sbx-bpf daemon 2>"$W/d-second.err"
check daemon/single-instance "$?" 1
out=$(sbx-bpf list --json | jq -r ".[0] | [.cgroup, .policy, .mode, (.policy_hash | length)] | join(\" \")")
check list/fields "$out" "$CG $W/p1.json enforce 16"

# kill -9: the pinned links keep enforcing; the denial waits in the ring buffer.
kill -9 "$D"; wait "$D" 2>/dev/null
check status/daemon-gone "$(sbx-bpf status --json | jq -r '[.pinned, .daemon] | join(" ")')" "true "
check kill9/still-denied "$(inside sbx-probe open "$W/data/secret" 2>/dev/null)" EACCES
sbx-bpf daemon --events "$W/ev2.json" 2>"$W/d2.err" &
D=$!
sleep 2
grep -q adopted "$W/d2.err" && pass restart/adopted || fail restart/adopted "$(cat "$W/d2.err")"
check_json restart/backlog-collected "$W/ev2.json" \
	"any(.[]; .op == \"read\" and .path == \"$W/data/secret\" and .verdict == \"denied\" and
	 .rule.text == \"denyRead $W/data/secret\")"

# Replacement: a process looping on open never sees both files readable at once.
inside sh -c "i=0; while [ \$i -lt 400 ]; do a=\$(sbx-probe open $W/data/secret 2>/dev/null);
	b=\$(sbx-probe open $W/data/other 2>/dev/null); echo \"\$a\$b\"; i=\$((i + 1)); done" >"$W/loop.out" &
L=$!
sleep 1
sbx-bpf attach "$CG" --policy "$W/p2.json" 2>>"$W/a.err"
check replace/exit "$?" 0
wait "$L"
grep -q OKOK "$W/loop.out" && fail replace/never-both "a window with neither policy" || pass replace/never-both
check replace/new-policy "$(inside sbx-probe open "$W/data/other" 2>/dev/null)" EACCES
check replace/old-gone "$(inside sbx-probe open "$W/data/secret" 2>/dev/null)" OK

sbx-bpf detach "$CG"
check detach/exit "$?" 0
check detach/open "$(inside sbx-probe open "$W/data/other" 2>/dev/null)" OK
check list/empty "$(sbx-bpf list --json | jq -r 'length')" 0
[ -e "/run/sbx-bpf/sandboxes/$(stat -c %i "$CG").json" ] && fail detach/record-removed "still there" ||
	pass detach/record-removed
sbx-bpf attach "$CG" --policy "$W/nope.json" 2>/dev/null
check attach/bad-policy-exit "$?" 2

kill "$D"; wait "$D" 2>/dev/null
sbx-bpf unload
check unload/exit "$?" 0
[ -e "$PIN" ] && fail unload/removed "$(ls -R "$PIN" | head)" || pass unload/removed
sbx-bpf status >/dev/null 2>&1
check status/not-pinned "$?" 1
rmdir "$CG" 2>/dev/null
