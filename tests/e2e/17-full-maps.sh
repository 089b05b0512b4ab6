# The kernel's maps are shared capacity. A policy that does not fit is
# refused with a sentence naming the full map, and nothing of it stays:
# `run` does not start the command, `attach` leaves the cgroup's previous
# policy in force, and every key written before the map filled is taken
# back (a small policy fits again right after). With no work memory left
# to judge a call with, a sandboxed task is refused and the loss counted.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh
set +e

CG=/sys/fs/cgroup
mkdir -p "$W/data"
echo secret >"$W/data/secret"
echo open >"$W/data/open"
# One more top-level path than fs_rules has keys (no two share a parent key).
python3 -c "
import json, sys
print(json.dumps({'filesystem': {'denyRead': ['/b%d' % i for i in range(int(sys.argv[1]))]}}))" 262200 >"$W/big.json"

# A daemon on the boot's pinned set (run fills the same maps as it would with its own).
sbx-bpf daemon 2>"$W/d.err" &
DAEMON=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d.err")"

# run: refused before the command starts.
t0=$(date +%s)
sbx-bpf run --policy "$W/big.json" -- touch "$W/ran" 2>"$W/run.err"
check run/exit "$?" 1
grep -q "cannot install the policy: the kernel's rule maps are full" "$W/run.err" &&
	pass run/message || fail run/message "$(head -c 300 "$W/run.err")"
[ ! -e "$W/ran" ] && pass run/command-not-started || fail run/command-not-started "it ran"
left=$(find "$CG/sbx-bpf" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l)
check run/no-cgroup-left "$left" 0
echo "INFO 17-full-maps/run: refusing the 262,200-rule policy took $(($(date +%s) - t0)) s" >>"$LOG"

# attach: the previous policy stays, the keys written are taken back.
mkdir -p "$CG/e2e-full" "$CG/e2e-full2"
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data/secret\" ] } }" >"$W/small.json"
sbx-bpf attach "$CG/e2e-full" --policy "$W/small.json" >/dev/null 2>"$W/a1.err"
check attach-small/exit "$?" 0
in_cg() { sh -c "echo \$\$ >$CG/e2e-full/cgroup.procs; exec sbx-probe open $1" 2>/dev/null; }
check attach-small/denies "$(in_cg "$W/data/secret")" EACCES
sbx-bpf attach "$CG/e2e-full" --policy "$W/big.json" >/dev/null 2>"$W/a2.err"
check attach-big/exit "$?" 1
grep -q "the kernel's rule maps are full" "$W/a2.err" && pass attach-big/message ||
	fail attach-big/message "$(head -c 300 "$W/a2.err")"
check attach-big/previous-policy-still-denies "$(in_cg "$W/data/secret")" EACCES
check attach-big/previous-policy-still-allows "$(in_cg "$W/data/open")" OK
check attach-big/list-shows-previous "$(sbx-bpf list --json | jq -r '.[] | select(.cgroup | endswith("e2e-full")) | .policy_hash' |
	wc -l)" 1
# Every key of the refused policy was taken back: another sandbox still fits.
sbx-bpf attach "$CG/e2e-full2" --policy "$W/small.json" >/dev/null 2>"$W/a3.err"
check capacity-returned/exit "$?" 0
sbx-bpf detach "$CG/e2e-full" >/dev/null 2>&1
sbx-bpf detach "$CG/e2e-full2" >/dev/null 2>&1

# No memory left to judge with: every work slot of every CPU taken (sbx-slots). A task an
# enforcing sandbox covers is refused (fail closed: its exec), one under audit alone is let
# go, one outside is untouched; the events that could not be made are counted as lost.
mkdir -p "$CG/e2e-slots" "$CG/e2e-slots-audit"
sbx-bpf attach "$CG/e2e-slots" --policy "$W/small.json" >/dev/null 2>"$W/s1.err"
check slots/attach "$?" 0
sbx-bpf attach "$CG/e2e-slots-audit" --audit --policy "$W/small.json" >/dev/null 2>"$W/s2.err"
check slots/attach-audit "$?" 0
counter() { sbx-bpf status --json | jq -r ".counters.$1"; }
in_slots() { sh -c "echo \$\$ >$CG/$1/cgroup.procs; exec sbx-probe open $2" 2>"$W/slots.err"; }
den0=$(counter denied) lost0=$(counter events_lost)
sbx-slots take >/dev/null 2>"$W/take.err" || fail slots/take "$(cat "$W/take.err")"
enforced=$(in_slots e2e-slots "$W/data/open"; echo "exit $?")
audited=$(in_slots e2e-slots-audit "$W/data/secret")
outside=$(sbx-probe open "$W/data/secret" 2>&1)
sbx-slots give >/dev/null 2>"$W/give.err" || fail slots/give "$(cat "$W/give.err")"
den1=$(counter denied) lost1=$(counter events_lost)
# sh's exec refused: 126 (127 would be "not found"). Its message is a judged write, refused too.
check slots/enforcing-refused "$enforced" "exit 126"
check slots/audit-let-go "$audited" OK
check slots/outside-untouched "$outside" OK
check slots/denied-counted "$([ "$den1" -gt "$den0" ] && echo yes || echo "no: $den0 -> $den1")" yes
check slots/lost-counted "$([ "$lost1" -ge $((lost0 + 2)) ] && echo yes || echo "no: $lost0 -> $lost1")" yes
# The slots back, the same sandboxes judge again.
check slots/back-allows "$(in_slots e2e-slots "$W/data/open")" OK
check slots/back-denies "$(in_slots e2e-slots "$W/data/secret")" EACCES
sbx-bpf detach "$CG/e2e-slots" >/dev/null 2>&1
sbx-bpf detach "$CG/e2e-slots-audit" >/dev/null 2>&1

kill "$DAEMON" 2>/dev/null
wait "$DAEMON" 2>/dev/null
rmdir "$CG/e2e-full" "$CG/e2e-full2" "$CG/e2e-slots" "$CG/e2e-slots-audit" 2>/dev/null
rm -rf "$W"
