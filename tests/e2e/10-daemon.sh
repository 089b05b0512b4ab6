# The host agent's first slice: pinned programs outlive the daemon (kill -9),
# a restarted daemon adopts them and collects what was produced meanwhile,
# attach/detach/list on an existing cgroup, atomic replacement, limits on
# attach (undone by a failing attach, restored by detach).
# e2e: programs=own
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

# A run under sbx-bpf's own parent, with a fresh pinned set (nothing attached yet), is judged by
# its own entry alone only while no sandbox lies above it: one attached to that parent while the
# command runs applies to it too (attach turns nesting on before its entry goes in).
SBXROOT=/sys/fs/cgroup/sbx-bpf
echo above >"$W/data/above"
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data/other\" ] } }" >"$W/run-own.json"
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data/above\" ] } }" >"$W/above.json"
sbx-bpf run --name e2e-below --policy "$W/run-own.json" -- sh -c \
	'sbx-probe open "$1"; while [ ! -e "$2" ]; do sleep 0.1; done; sbx-probe open "$1"' \
	sh "$W/data/above" "$W/above.go" >"$W/above.out" 2>"$W/above.err" &
RUNPID=$!
i=0
while [ ! -s "$W/above.out" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sbx-bpf attach "$SBXROOT" --policy "$W/above.json" 2>"$W/above-attach.err"
check above-run/attach "$?" 0
touch "$W/above.go"
wait "$RUNPID"
check above-run/allowed-then-denied "$(tr '\n' ' ' <"$W/above.out")" "OK EACCES "
wait_event above-run/event-names-parent "$W/ev1.json" \
	"any(.[]; .op == \"read\" and .path == \"$W/data/above\" and .verdict == \"denied\" and
	 .sandbox_cgroup_id == $(stat -c %i "$SBXROOT"))"
sbx-bpf detach "$SBXROOT"
check above-run/detach "$?" 0

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
# The kernel counts what each sandbox refused, by kind, sent or not (the denial above: one read).
out=$(sbx-bpf list --json | jq -r '.[0].counts | [.denied.read, .denied.write, .denied.network, .granted] | join(" ")')
check list/counts "$out" "1 0 0 0"

# kill -9: the pinned links keep enforcing; the denial waits in the ring buffer.
kill -9 "$D"; wait "$D" 2>/dev/null
# The dead daemon's socket answers nobody.
sbx-bpf events 2>"$W/ev-dead.err"
check events/dead-daemon-exit-1 "$?" 1
grep -q "no daemon is running (/run/sbx-bpf/events.sock: Connection refused)" "$W/ev-dead.err" &&
	pass events/dead-daemon-message || fail events/dead-daemon-message "$(cat "$W/ev-dead.err")"
check status/daemon-gone "$(sbx-bpf status --json | jq -r '[.pinned, .daemon] | join(" ")')" "true "
check kill9/still-denied "$(inside sbx-probe open "$W/data/secret" 2>/dev/null)" EACCES
cat >"$W/agent.json" <<EOF
{ "host": "e2e-host", "sinks": [
    { "type": "jsonl", "path": "$W/sink.jsonl" },
    { "type": "jsonl", "path": "$W/ocsf.jsonl", "format": "ocsf" },
    { "type": "syslog", "target": "udp://127.0.0.1:5514" },
    { "type": "prometheus", "listen": "127.0.0.1:9464" } ] }
EOF
python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 5514))
open('$W/syslog.ready', 'w').close()
with open('$W/syslog.out', 'ab', buffering=0) as f:
    while True: f.write(s.recv(65535) + b'\\n')" &
SYSLOG=$!
wait_for "$W/syslog.ready" 100	# the backlog goes out at once: be listening first
sbx-bpf daemon --events "$W/ev2.json" --config "$W/agent.json" 2>"$W/d2.err" &
D=$!
sleep 2
grep -q adopted "$W/d2.err" && pass restart/adopted || fail restart/adopted "$(cat "$W/d2.err")"
check_json restart/backlog-collected "$W/ev2.json" \
	"any(.[]; .op == \"read\" and .path == \"$W/data/secret\" and .verdict == \"denied\" and
	 .rule.text == \"denyRead $W/data/secret\")"

# The sinks got the backlog too: JSON lines with host/boot_id/seq, OCSF, syslog, Prometheus.
check_json sinks/jsonl "$W/sink.jsonl" \
	"any(.[]; .op == \"read\" and .host == \"e2e-host\" and (.seq | type) == \"number\" and (.boot_id | length) > 0)"
check_json sinks/ocsf "$W/ocsf.jsonl" 'any(.[]; .class_uid == 1001 and .disposition_id == 2)'
grep -q 'sbx@32473' "$W/syslog.out" && pass sinks/syslog || fail sinks/syslog "$(head -c 300 "$W/syslog.out")"
out=$(curl -s -m 5 http://127.0.0.1:9464/metrics)
echo "$out" | grep -q '^sbx_violations_total{.*op="read".*} [1-9]' && pass sinks/prometheus ||
	fail sinks/prometheus "$(echo "$out" | head -c 400)"

# `events`: two watchers at once over the daemon's socket, one filtered to the cgroup.
check events/socket-mode "$(stat -c %a /run/sbx-bpf/events.sock 2>&1)" 600
sbx-bpf events --follow --json >"$W/watch1.json" 2>"$W/watch1.err" &
E1=$!
sbx-bpf events --follow --json --cgroup "$CG" >"$W/watch2.json" 2>"$W/watch2.err" &
E2=$!
i=0
while [ "$(sbx-bpf status --json | jq -r '.daemon.watchers_connected')" != 2 ] && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check events/status-two-watchers "$(sbx-bpf status --json | jq -r '.daemon.watchers_connected')" 2
inside sbx-probe open "$W/data/secret" >/dev/null 2>&1
i=0
while ! { grep -qF "\"path\":\"$W/data/secret\"" "$W/watch1.json" &&
	  grep -qF "\"path\":\"$W/data/secret\"" "$W/watch2.json"; } && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
CGID=$(stat -c %i "$CG")
for n in 1 2; do
	check_json "events/watcher$n-live-denial" "$W/watch$n.json" \
		"any(.[]; .op == \"read\" and .path == \"$W/data/secret\" and .verdict == \"denied\" and
		 .cgroup_id == $CGID and (.seq | type) == \"number\")"
done
check_json events/filter-only-this-cgroup "$W/watch2.json" "all(.[]; .cgroup_id == $CGID or .sandbox_cgroup_id == $CGID)"
out=$(sbx-bpf events --json --backlog 1024 --cgroup "$CGID" | jq -s "any(.[]; .path == \"$W/data/secret\")")
check events/recent-backlog "$out" true
sbx-bpf events --backlog 1 >"$W/recent.txt"
check events/recent-exit-0 "$?" 0
grep -q "^sbx-bpf: denied read $W/data/secret (denyRead $W/data/secret) pid [0-9]* sbx-probe" "$W/recent.txt" &&
	pass events/human-line || fail events/human-line "$(cat "$W/recent.txt")"
kill -INT "$E1"; wait "$E1"
check events/sigint-exit-0 "$?" 0


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

# Limits on attach: written into the cgroup before its policy applies, shown by
# list, replaced whole by the next attach, written back by detach with what the
# files held before the first attach; an attach that fails midway changes nothing.
echo +pids >/sys/fs/cgroup/cgroup.subtree_control
echo 100 >"$CG/pids.max"	# an original that is not the default
rec=/run/sbx-bpf/sandboxes/$(stat -c %i "$CG").json
files() { (cd "$CG" && cat "$@" 2>&1) | tr '\n' ' '; }
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data/secret\" ] }, \"limits\": { \"pids\": 50 } }" >"$W/p3.json"
sbx-bpf attach "$CG" --policy "$W/p3.json" --memory 64M --pids 20 2>"$W/lim.err"
check limits/attach-exit "$?" 0
check limits/files "$(files memory.max memory.oom.group pids.max)" "67108864 1 20 "
check limits/policy-too "$(inside sbx-probe open "$W/data/secret" 2>/dev/null)" EACCES
check limits/fork-at-pids-max "$(inside sbx-probe forks 40 2>/dev/null)" EAGAIN
check limits/fork-below-pids-max "$(inside sbx-probe forks 5 2>/dev/null)" OK
out=$(sbx-bpf list --json | jq -cS ".[] | select(.cgroup == \"$CG\") | .limits")
check limits/list-json "$out" '{"memory.max":"67108864","memory.oom.group":"1","pids.max":"20"}'
sbx-bpf list | grep -F "$CG" | grep -qF "	memory.max=67108864, memory.oom.group=1, pids.max=20" &&
	pass limits/list-human || fail limits/list-human "$(sbx-bpf list 2>&1)"
check limits/record-originals "$(jq -cS .limits_restore "$rec" 2>&1)" \
	'{"memory.max":"max","memory.oom.group":"0","pids.max":"100"}'

# Re-attach: memory goes back to its original, cpu is new, the originals stay the cgroup's.
sbx-bpf attach "$CG" --policy "$W/p3.json" --cpu 50% --pids 30 2>>"$W/lim.err"
check limits/reattach-exit "$?" 0
check limits/reattach-files "$(files cpu.max memory.max memory.oom.group pids.max)" "50000 100000 max 0 30 "
out=$(sbx-bpf list --json | jq -cS ".[] | select(.cgroup == \"$CG\") | .limits")
check limits/reattach-list-json "$out" '{"cpu.max":"50000 100000","pids.max":"30"}'
check limits/reattach-originals "$(jq -cS .limits_restore "$rec" 2>&1)" '{"cpu.max":"max 100000","pids.max":"100"}'

# The kernel refuses the io.max line of a device that does not exist, after
# memory.max and memory.oom.group were written (and cpu.max put back): all undone.
mknod "$W/noblk" b 4000 7
cp "$rec" "$W/rec.before"
sbx-bpf attach "$CG" --policy "$W/p2.json" --memory 32M --io-write-bps "$W/noblk=1M" --pids 10 2>"$W/lim-bad.err"
check limits/refused-exit "$?" 1
grep -qF "refused $CG/io.max = '4000:7 wbps=1000000'" "$W/lim-bad.err" && pass limits/refused-message ||
	fail limits/refused-message "$(cat "$W/lim-bad.err")"
check limits/refused-files-unchanged "$(files cpu.max memory.max memory.oom.group pids.max)" "50000 100000 max 0 30 "
cmp -s "$rec" "$W/rec.before" && pass limits/refused-record-unchanged ||
	fail limits/refused-record-unchanged "$(cat "$rec")"
check limits/refused-policy-unchanged "$(inside sbx-probe open "$W/data/secret" 2>/dev/null) $(inside sbx-probe open "$W/data/other" 2>/dev/null)" "EACCES OK"

# A parent with processes cannot give its children controllers: said, nothing attached.
BUSY=/sys/fs/cgroup/e2e-busy
mkdir -p "$BUSY/c"
sleep 300 &
busy=$!
echo "$busy" >"$BUSY/cgroup.procs"
sbx-bpf attach "$BUSY/c" --policy "$W/p3.json" --memory 64M 2>"$W/busy.err"
check limits/busy-parent-exit "$?" 1
grep -q "cannot write '+memory[^']*' to $BUSY/cgroup.subtree_control: Device or resource busy" "$W/busy.err" &&
	pass limits/busy-parent-message || fail limits/busy-parent-message "$(cat "$W/busy.err")"
check limits/busy-parent-not-attached \
	"$(sbx-bpf list --json | jq "[.[] | select(.cgroup_id == $(stat -c %i "$BUSY/c"))] | length")" 0
kill "$busy"; wait "$busy" 2>/dev/null
rmdir "$BUSY/c" "$BUSY"

sbx-bpf detach "$CG" 2>>"$W/lim.err"
check limits/detach-exit "$?" 0
check limits/detach-restores "$(files cpu.max memory.max memory.oom.group pids.max)" "max 100000 max 0 100 "
check limits/detach-open "$(inside sbx-probe open "$W/data/secret" 2>/dev/null)" OK
check limits/detach-forks "$(inside sbx-probe forks 40 2>/dev/null)" OK
echo max >"$CG/pids.max"

# Nested: a policy on a parent and one on a child both apply; each can only narrow.
P=/sys/fs/cgroup/e2e-parent
mkdir -p "$P/child" "$W/w/sub"
cat >"$W/parent.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/data/secret" ], "allowWrite": [ "$W/w/sub" ] },
  "network": { "allow": [ "127.0.0.2:8080" ] } }
EOF
cat >"$W/child.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/data/other" ], "allowWrite": [ "$W/w" ] },
  "network": { "allow": [ "127.0.0.2:8080", "127.0.0.3:8080" ] } }
EOF
sbx-bpf attach "$P" --policy "$W/parent.json" && sbx-bpf attach "$P/child" --policy "$W/child.json"
check nested/attach "$?" 0
inchild() { sh -c 'echo $$ >'"$P/child"'/cgroup.procs && exec "$@"' sh "$@"; }
check nested/parent-deny-read "$(inchild sbx-probe open "$W/data/secret" 2>/dev/null)" EACCES
check nested/child-deny-read "$(inchild sbx-probe open "$W/data/other" 2>/dev/null)" EACCES
check nested/write-both-allow "$(inchild sbx-probe open "$W/w/sub/f" creat 2>/dev/null)" OK
check nested/write-child-only "$(inchild sbx-probe open "$W/w/g" creat 2>/dev/null)" EACCES
check nested/net-both-allow "$(inchild sbx-probe sendto 127.0.0.2 8080 2>/dev/null)" OK
check nested/net-child-only "$(inchild sbx-probe sendto 127.0.0.3 8080 2>/dev/null)" EACCES
check nested/parent-alone "$(sh -c 'echo $$ >'"$P"'/cgroup.procs && exec sbx-probe open '"$W/data/other" 2>/dev/null)" OK
# Signals are judged at each level too (task.bpf.c task_under): a task in the
# parent alone is outside the child's sandbox; one in a cgroup below the
# child is inside both.
mkdir -p "$P/child/below"
sh -c 'echo $$ >'"$P"'/cgroup.procs && exec sleep 30' & SP=$!
sh -c 'echo $$ >'"$P/child/below"'/cgroup.procs && exec sleep 30' & SBELOW=$!
i=0
until grep -qx "$SP" "$P/cgroup.procs" && grep -qx "$SBELOW" "$P/child/below/cgroup.procs"; do
	[ $i -lt 50 ] || break
	sleep 0.1; i=$((i + 1))
done
check nested/kill-parent-level "$(inchild sbx-escape kill "$SP" USR1 2>/dev/null)" EPERM
check nested/kill-below-child "$(inchild sbx-escape kill "$SBELOW" KILL 2>&1)" OK
kill "$SP" "$SBELOW" 2>/dev/null; wait "$SP" "$SBELOW" 2>/dev/null
wait_event nested/kill-event-names-the-child "$W/ev2.json" \
	"any(.[]; .op == \"signal\" and .arg == 10 and .target.pid == $SP and
	     .sandbox_cgroup_id == $(stat -c %i "$P/child"))"
rmdir "$P/child/below"
# rename and link judge both paths per sandbox of the chain (fs.bpf.c
# two_judge), the inode hooks per sandbox and mount (sb_chain_judge): each
# level refuses what its policy does not allow, and its event says which.
for f in sub/r1 sub/x2 x1; do echo x >"$W/w/$f"; done
check nested/rename-both-allow "$(inchild sbx-probe rename "$W/w/sub/r1" "$W/w/sub/r2" 2>/dev/null)" OK
check nested/rename-child-only "$(inchild sbx-probe rename "$W/w/sub/r2" "$W/w/r3" 2>/dev/null)" EACCES
check nested/link-child-only "$(inchild sbx-probe link "$W/w/sub/r2" "$W/w/l1" 2>/dev/null)" EACCES
check nested/setxattr-both-allow \
	"$(inchild sbx-probe setxattr "$W/w/sub/x2" system.posix_acl_access acl:640 2>/dev/null)" OK
check nested/setxattr-child-only \
	"$(inchild sbx-probe setxattr "$W/w/x1" system.posix_acl_access acl:640 2>/dev/null)" EACCES
[ -e "$W/w/sub/r2" ] && [ ! -e "$W/w/r3" ] && [ ! -e "$W/w/l1" ] && pass nested/rename-link-unchanged ||
	fail nested/rename-link-unchanged "$(ls "$W/w" "$W/w/sub" | tr '\n' ' ')"
for op in rename:r3 link:l1 setxattr:x1; do
	wait_event "nested/${op%%:*}-event-names-the-parent" "$W/ev2.json" \
		"any(.[]; .op == \"${op%%:*}\" and (.path == \"$W/w/${op#*:}\" or .path2 == \"$W/w/${op#*:}\") and
		     .sandbox_cgroup_id == $(stat -c %i "$P") and .cgroup_id == $(stat -c %i "$P/child"))"
done
sleep 1
check_json nested/event-names-deciding-sandbox "$W/ev2.json" \
	"any(.[]; .path == \"$W/w/g\" and .sandbox_cgroup_id == $(stat -c %i "$P") and .cgroup_id == $(stat -c %i "$P/child"))"
sbx-bpf detach "$P/child"; sbx-bpf detach "$P"

# An auditing sandbox over an enforcing one: what no rule decides (bpf(), a
# path too long to resolve) is refused by the enforcing one, whose event says
# so; the auditing one alone lets it through.
python3 - "$W/w" <<'PY'
import os, sys
os.chdir(sys.argv[1])
for i in range(45):
    os.mkdir("d" * 100); os.chdir("d" * 100)
PY
cat >"$W/deep-write.py" <<PY
import os
os.chdir("$W/w")
for i in range(45): os.chdir("d" * 100)
try:
    open("new-file", "w").write("x"); print("OK")
except PermissionError: print("EACCES")
PY
sbx-bpf attach "$P" --audit --policy "$W/parent.json" && sbx-bpf attach "$P/child" --policy "$W/child.json"
check nested-audit/attach "$?" 0
check nested-audit/bpf-denied "$(inchild sbx-escape bpf-map-create 2>/dev/null)" EPERM
check nested-audit/long-path-denied "$(inchild python3 "$W/deep-write.py" 2>/dev/null)" EACCES
# A descriptor opened outside both, written in the child (attached without
# --fresh: its uses are judged): a kernel file is the child's to refuse too.
dn0=$(cat /proc/sys/kernel/domainname)
out=$(sh -c 'exec 3>>/proc/sys/kernel/domainname; echo $$ >"$0"/cgroup.procs; echo sbx-leak >&3 && echo OK ||
	echo EACCES' "$P/child" 2>/dev/null)
check nested-audit/fd-kernel-file-refused "$out" EACCES
check nested-audit/fd-kernel-file-unchanged "$(cat /proc/sys/kernel/domainname)" "$dn0"
# /proc/1/stat's start_code reads 1 where the kernel's silent ptrace probe is refused.
startcode='print(open("/proc/1/stat").read().rsplit(")", 1)[1].split()[23])'
check nested-audit/quiet-ptrace-refused "$(inchild python3 -c "$startcode" 2>/dev/null)" 1
[ "$(sh -c 'echo $$ >'"$P"'/cgroup.procs && exec python3 -c "$0"' "$startcode" 2>/dev/null)" -gt 1 ] 2>/dev/null &&
	pass nested-audit/parent-alone-quiet-ptrace || fail nested-audit/parent-alone-quiet-ptrace "start_code hidden"
check nested-audit/parent-alone-bpf \
	"$(sh -c 'echo $$ >'"$P"'/cgroup.procs && exec sbx-escape bpf-map-create' 2>/dev/null)" OK
# bpf() as root asks for CAP_BPF or CAP_SYS_ADMIN before the bpf hook: either refuses it.
wait_event nested-audit/bpf-event-names-the-child "$W/ev2.json" \
	"any(.[]; (.op == \"bpf\" or .op == \"capability\") and .process.comm == \"sbx-escape\" and
	     .verdict == \"denied\" and .sandbox_cgroup_id == $(stat -c %i "$P/child"))"
wait_event nested-audit/long-path-event-names-the-child "$W/ev2.json" \
	"any(.[]; .path_unresolved and .op == \"create\" and .verdict == \"denied\" and
	     .sandbox_cgroup_id == $(stat -c %i "$P/child"))"
sbx-bpf detach "$P/child"; sbx-bpf detach "$P"
rm -rf "$W/w/$(printf 'd%.0s' $(seq 100))"
rmdir "$P/child" "$P" 2>/dev/null

# Depth: the programs look for sandboxes from level 1 to level 31 of a task's
# cgroups. A sandbox at level 31 judges a task one level below it; a cgroup at
# level 32, or the root, is refused by attach, and run refuses an
# SBX_CGROUP_ROOT at level 31 (its sandbox would be at 32): nothing attached.
DEEP=/sys/fs/cgroup/e2e-deep L31=/sys/fs/cgroup/e2e-deep
for i in $(seq 2 31); do L31=$L31/l$i; done
mkdir -p "$L31/l32"
sbx-bpf attach "$L31" --policy "$W/parent.json" 2>"$W/deep.err"
check depth/level-31-attach "$?" 0
indeep() { sh -c 'echo $$ >'"$L31/l32"'/cgroup.procs && exec "$@"' sh "$@"; }
check depth/level-32-task-denied "$(indeep sbx-probe open "$W/data/secret" 2>/dev/null)" EACCES
check depth/level-32-task-reads-the-rest "$(indeep sbx-probe open "$W/data/other" 2>/dev/null)" OK
wait_event depth/level-32-task-event "$W/ev2.json" \
	"any(.[]; .path == \"$W/data/secret\" and .sandbox_cgroup_id == $(stat -c %i "$L31") and .cgroup_id == $(stat -c %i "$L31/l32"))"
sbx-bpf attach "$L31/l32" --policy "$W/child.json" 2>"$W/deep.err"
check depth/level-32-exit-2 "$?" 2
grep -q "$L31/l32 lies 32 levels below the cgroup2 root; the programs look for sandboxes at most 31" "$W/deep.err" &&
	pass depth/level-32-message || fail depth/level-32-message "$(cat "$W/deep.err")"
check depth/level-32-not-attached \
	"$(sbx-bpf list --json | jq "[.[] | select(.cgroup_id == $(stat -c %i "$L31/l32"))] | length")" 0
sbx-bpf attach /sys/fs/cgroup --policy "$W/child.json" 2>"$W/deep.err"
check depth/root-exit-2 "$?" 2
grep -q "is the cgroup2 root, which cannot be a sandbox" "$W/deep.err" &&
	pass depth/root-message || fail depth/root-message "$(cat "$W/deep.err")"
check depth/root-not-attached \
	"$(sbx-bpf list --json | jq "[.[] | select(.cgroup_id == $(stat -c %i /sys/fs/cgroup))] | length")" 0
SBX_CGROUP_ROOT=$L31 sbx-bpf run --name deep --policy "$W/child.json" -- true 2>"$W/deep.err"
check depth/run-at-level-32-exit-1 "$?" 1
grep -q "SBX_CGROUP_ROOT '$L31' is too deep" "$W/deep.err" &&
	pass depth/run-message || fail depth/run-message "$(cat "$W/deep.err")"
[ ! -e "$L31/deep" ] && pass depth/run-made-no-cgroup || fail depth/run-made-no-cgroup "$L31/deep exists"
# One level up, run's sandbox is at level 31: made, and it judges (errno and event). Its
# memory.oom.group needs the memory controller, delegated down to there.
L30=${L31%/l31} d=/sys/fs/cgroup
for c in e2e-deep $(seq -f l%g 2 30); do echo "+memory +pids" >"$d/cgroup.subtree_control"; d=$d/$c; done
denials() { jq -s "[.[] | select(.path == \"$W/data/other\" and .verdict == \"denied\")] | length" "$W/ev2.json"; }
before=$(denials)
out=$(SBX_CGROUP_ROOT=$L30 sbx-bpf run --name deep --policy "$W/child.json" -- sbx-probe open "$W/data/other" 2>"$W/deep.err")
[ "$out" = EACCES ] && pass depth/run-at-level-31-denies ||
	fail depth/run-at-level-31-denies "got '$out': $(cat "$W/deep.err")"
wait_event depth/run-at-level-31-event "$W/ev2.json" \
	"[.[] | select(.path == \"$W/data/other\" and .verdict == \"denied\")] | length > $before"
sbx-bpf detach "$L31"
check depth/detach "$?" 0
find "$DEEP" -depth -type d -exec rmdir {} + 2>/dev/null
# Every sandbox is gone: so is every rule of every policy (map_purge).
check detach/rules-purged "$(sbx-bpf status --json |
	jq -r '[.maps.sandboxes.used, .maps.fs_rules.used, .maps.net_rules.used] | join(" ")')" "0 0 0"

kill "$D" "$SYSLOG"; wait "$D" 2>/dev/null
# The filtered watcher saw the daemon go.
wait "$E2"
check events/daemon-gone-exit-1 "$?" 1
grep -q "the daemon closed /run/sbx-bpf/events.sock" "$W/watch2.json" && pass events/daemon-gone-message ||
	fail events/daemon-gone-message "$(tail -2 "$W/watch2.json") $(cat "$W/watch2.err")"
[ -e /run/sbx-bpf/events.sock ] && fail events/socket-removed "still there" || pass events/socket-removed
sbx-bpf unload
check unload/exit "$?" 0
[ -e "$PIN" ] && fail unload/removed "$(ls -R "$PIN" | head)" || pass unload/removed
sbx-bpf status >/dev/null 2>&1
check status/not-pinned "$?" 1
rmdir "$CG" 2>/dev/null
