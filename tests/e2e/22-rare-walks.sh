# The walks of rare paths run as bpf_loop calls whose flags the verifier
# cannot know (bpf/sandbox.h rare_loop). Their flags are 0, so they never fail
# in use; here they are made to (rare_loop_flags set to 1 in the loaded
# programs: bpf_loop answers -EINVAL), and each caller must answer as a
# denial would, or keep nothing:
# - the event key hashes no path: it takes the event's own time, so
#   identical denials are no longer coalesced, but each still has its record;
# - the outside table's reset does not clear it: the table keeps its old
#   generation, so a cgroup it knew as outside is judged at once when attached;
# - sbx_sandboxed cannot walk the levels: it answers "enforcing", so with no
#   work slot free even a task under audit alone, or under no sandbox, is
#   refused (17-full-maps lets both go when the walk works);
# - sbx_arming_here cannot walk the levels: the task is let go as under an
#   arming sandbox, and not cached as outside, so the exec that arms the
#   sandbox is followed by a denial.
# Every denial is checked for its errno and its event.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh

CG=/sys/fs/cgroup/e2e-rare
mkdir -p "$W/data" "$CG/key" "$CG/cached" "$CG/audit" "$CG/arm/child"
for f in secret1 secret2 secret3 secret4 secret5; do echo secret >"$W/data/$f"; done
echo open >"$W/open"
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data\" ], \"allowWrite\": [ \"$W\" ] } }" >"$W/p.json"
# in CG CMD…: CMD run in cgroup CG (relative to $CG).
in_cg() { cg=$1; shift; sh -c 'echo $$ >'"$CG/$cg"'/cgroup.procs && exec "$@"' sh "$@"; }
counter() { sbx-bpf status --json | jq -r ".counters.$1"; }
cgid() { stat -c %i "$CG/$1"; }
flags() { sbx-global rare_loop_flags "$1" >/dev/null 2>"$W/flags.err" || fail "flags/set-$1" "$(cat "$W/flags.err")"; }
# Whatever happens below, the next test finds the walks working and the slots free.
trap 'sbx-global rare_loop_flags 0 >/dev/null 2>&1; sbx-slots give >/dev/null 2>&1' EXIT

check flags/zero-in-use "$(sbx-global rare_loop_flags | cut -d' ' -f2)" 0
sbx-bpf daemon --events "$W/ev.json" 2>"$W/d.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d.err")"
for c in key cached audit; do
	mode=; [ $c = audit ] && mode=--audit
	sbx-bpf attach "$CG/$c" --fresh $mode --policy "$W/p.json" 2>"$W/a-$c.err"
	check "attach/$c" "$?" 0
done
sbx-bpf detach "$CG/cached" 2>>"$W/a-cached.err"	# attached once: a nested set-up (nest_set)

# --- the event key: five identical denials in a row, coalesced into one record while the walk
# works, five records when it fails.
five() { in_cg key python3 -B -c '
import errno, sys
out = []
for _ in range(5):
    try:
        open(sys.argv[1]).close()
        out.append("OK")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
print(" ".join(out))' "$W/data/$1"; }
records() { jq -s "[.[] | select(.type == \"violation\" and .path == \"$W/data/$1\" and .summary != true and
	.errno == 13 and .sandbox_cgroup_id == $(cgid key))] | length" "$W/ev.json"; }
c0=$(counter coalesced)
check key/works-denied "$(five secret1)" "EACCES EACCES EACCES EACCES EACCES"
c1=$(counter coalesced)
wait_event key/works-one-record "$W/ev.json" "[.[] | select(.type == \"violation\" and
	.path == \"$W/data/secret1\" and .summary != true)] | length == 1"
check key/works-coalesced "$([ $((c1 - c0)) -ge 4 ] && echo yes || echo "no: $c0 -> $c1")" yes
flags 1
check key/failed-denied "$(five secret2)" "EACCES EACCES EACCES EACCES EACCES"
c2=$(counter coalesced)
flags 0
check key/failed-not-coalesced "$((c2 - c1))" 0
wait_event key/failed-five-records "$W/ev.json" "[.[] | select(.type == \"violation\" and
	.path == \"$W/data/secret2\" and .summary != true and .errno == 13 and
	.sandbox_cgroup_id == $(cgid key))] | length == 5"

# --- the outside table: "cached" known as outside (its own processes, a few times, so every
# CPU has asked), then attached while the table cannot be reset: judged at once.
for i in 1 2 3 4 5 6; do in_cg cached sbx-probe open "$W/data/secret3" >/dev/null; done
check reset/outside-before "$(in_cg cached sbx-probe open "$W/data/secret3")" OK
flags 1
sbx-bpf attach "$CG/cached" --fresh --policy "$W/p.json" 2>>"$W/a-cached.err"
check reset/attach "$?" 0
check reset/cached-cgroup-denied "$(in_cg cached sbx-probe open "$W/data/secret3")" EACCES
mkdir "$CG/free"
check reset/outside-still-free "$(in_cg free sbx-probe open "$W/data/secret3")" OK
flags 0
wait_event reset/event "$W/ev.json" "any(.[]; .type == \"violation\" and .op == \"read\" and
	.path == \"$W/data/secret3\" and .errno == 13 and .sandbox_cgroup_id == $(cgid cached))"

# --- sbx_sandboxed, with no work slot free: the walk failing, a task under audit alone and one
# in a cgroup under no sandbox (made now: in no cache) are refused; their sh's exec fails (126).
# This shell's own cgroup is cached as outside first (the open below, the walk still working),
# so that it can give the slots back.
mkdir "$CG/free2"
sbx-probe open "$W/open" >/dev/null
in_slots() { sh -c "echo \$\$ >$CG/$1/cgroup.procs; exec sbx-probe open $2" 2>/dev/null; echo "exit $?"; }
den0=$(counter denied)
sbx-slots take >/dev/null 2>"$W/take.err" || fail slots/take "$(cat "$W/take.err")"
flags 1
audited=$(in_slots audit "$W/open")
outside=$(in_slots free2 "$W/open")
flags 0
sbx-slots give >/dev/null 2>"$W/give.err" || fail slots/give "$(cat "$W/give.err")"
den1=$(counter denied)
check slots/audit-refused "$audited" "exit 126"
check slots/outside-refused "$outside" "exit 126"
check slots/denied-counted "$([ "$den1" -ge $((den0 + 2)) ] && echo yes || echo "no: $den0 -> $den1")" yes
check slots/back-audit-free "$(in_cg audit sbx-probe open "$W/open")" OK
check slots/back-outside-free "$(in_cg free2 sbx-probe open "$W/open")" OK

# --- sbx_arming_here: "arm" in force from its first exec; a shell in arm/child (a level below,
# so the walk is needed) reads with a builtin (no exec: let go, as arming), then execs the
# probe, which arms the sandbox and is denied. Had the failed walk been taken as "no sandbox",
# arm/child would have been cached as outside and the probe let go.
sbx-bpf attach "$CG/arm" --fresh --from-exec --policy "$W/p.json" 2>"$W/a-arm.err"
check arming/attach "$?" 0
sbx-probe open "$W/open" >/dev/null	# the table reset for the new generation, walks working
flags 1
got=$(sh -c 'echo $$ >'"$CG/arm/child"'/cgroup.procs
	if (read l <'"$W/data/secret4"'); then echo OK; else echo EACCES; fi
	exec sbx-probe open '"$W/data/secret5" 2>/dev/null | tr '\n' ' ')
flags 0
check arming/before-and-after "$got" "OK EACCES "
check arming/in-force "$(sbx-bpf list --json | jq -c ".[] | select(.cgroup_id == $(cgid arm)) | .arming")" false
wait_event arming/event "$W/ev.json" "any(.[]; .type == \"violation\" and .op == \"read\" and
	.path == \"$W/data/secret5\" and .errno == 13 and .cgroup_id == $(cgid arm/child) and
	.sandbox_cgroup_id == $(cgid arm))"

for c in key cached audit arm; do sbx-bpf detach "$CG/$c" >/dev/null 2>&1; done
kill "$D" 2>/dev/null
wait "$D" 2>/dev/null
rmdir "$CG/arm/child" "$CG/arm" "$CG/key" "$CG/cached" "$CG/audit" "$CG/free" "$CG/free2" "$CG" 2>/dev/null
rm -rf "$W"
