# The question every task asks on every hook, "am I in a sandbox?", is
# answered for most of them from a cache of cgroups known to be in none
# (bpf/sandbox.h outside_known). Each denial below is checked for its
# errno and its event. The cache must never outlive what it
# says: a cgroup the cache knows as outside, attached, is judged at once; a
# cgroup made below an attached one after the attach is judged; one moved
# out again goes free; and all of it from many CPUs' caches at once (the
# VM has two). Descriptor uses (file_permission) are judged only while a
# sandbox needs it: status and list say when.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh

CG=/sys/fs/cgroup/e2e-cache
mkdir -p "$W/data" "$CG"
echo secret >"$W/data/secret"
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data\" ], \"allowWrite\": [ \"$W\" ] } }" >"$W/deny.json"
judging() { sbx-bpf status --json | jq -r '.descriptor_judging'; }

sbx-bpf daemon --events "$W/ev.json" 2>"$W/d.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d.err")"
check status/no-judging-at-start "$(judging)" false

# A long-lived process in CG reads the file again and again: each read is an open (the cache's
# question), answered "outside" until the attach, then denied, then free again after detach.
mkfifo "$W/cmd"
in_cg "$CG" python3 -B -c '
import errno, os, sys
w = sys.argv[1]
for line in open(w + "/cmd"):
    n = line.strip()
    try:
        os.close(os.open(w + "/data/secret", os.O_RDONLY))
        a = "OK"
    except OSError as e:
        a = errno.errorcode[e.errno]
    with open(w + "/ans-" + n, "w") as f:
        f.write(a + "\n")
' "$W" 2>"$W/reader.err" &
READER=$!
exec 6>"$W/cmd"
ask() {
	rm -f "$W/ans-$1"
	echo "$1" >&6
	i=0
	while [ ! -s "$W/ans-$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	cat "$W/ans-$1" 2>/dev/null || echo "no answer: $(cat "$W/reader.err")"
}
# Warm every CPU's cache with CG as "outside": opens from the reader and from fresh processes.
for i in 1 2 3 4 5 6; do ask "warm$i" >/dev/null; in_cg "$CG" sbx-probe open "$W/data/secret" >/dev/null; done
check before/outside "$(ask 1)" OK
sbx-bpf attach "$CG" --policy "$W/deny.json" 2>"$W/a.err"
check attach/exit "$?" 0
check attach/cached-cgroup-denied "$(ask 2)" EACCES
check attach/fresh-process-denied "$(in_cg "$CG" sbx-probe open "$W/data/secret")" EACCES
ok=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	[ "$(in_cg "$CG" sbx-probe open "$W/data/secret")" = EACCES ] && ok=$((ok + 1))
done
check attach/every-cpu-denies "$ok" 10
# A cgroup made below the attached one, after the attach: a new id, never cached, judged.
mkdir "$CG/sub"
check below/new-child-denied "$(in_cg "$CG/sub" sbx-probe open "$W/data/secret")" EACCES
CGID=$(stat -c %i "$CG")
wait_event attach/cached-cgroup-event "$W/ev.json" \
	"any(.[]; .type == \"violation\" and .op == \"read\" and .path == \"$W/data/secret\" and .errno == 13 and
	 .cgroup_id == $CGID and .sandbox_cgroup_id == $CGID)"
wait_event below/new-child-event "$W/ev.json" \
	"any(.[]; .type == \"violation\" and .op == \"read\" and .path == \"$W/data/secret\" and .errno == 13 and
	 .cgroup_id == $(stat -c %i "$CG/sub") and .sandbox_cgroup_id == $CGID)"
# Attached without --fresh: descriptor uses are judged, and status and list say so.
check judging/attach-turns-on "$(judging)" true
check judging/list "$(sbx-bpf list --json | jq -r '.[0].judges_descriptor_uses')" true
sbx-bpf detach "$CG" 2>>"$W/a.err"
check detach/exit "$?" 0
check detach/free-again "$(ask 3)" OK
check detach/child-free "$(in_cg "$CG/sub" sbx-probe open "$W/data/secret")" OK
check judging/detach-turns-off "$(judging)" false
exec 6>&-
wait "$READER"
rmdir "$CG/sub"

# --fresh on a cgroup whose only process holds nothing the kernel judges (its stdio /dev/null
# and a fifo): no judging. It is frozen while looked at and runs on after: it answers afterwards.
mkfifo "$W/cmd2"
in_cg "$CG" sh -c 'read x; exit 7' <"$W/cmd2" >/dev/null 2>&1 &
P=$!
exec 7>"$W/cmd2"
sleep 0.5
sbx-bpf attach "$CG" --fresh --policy "$W/deny.json" 2>"$W/f.err"
check fresh/exit "$?" 0
check fresh/not-judging "$(judging)" false
check fresh/list "$(sbx-bpf list --json | jq -r '.[0].judges_descriptor_uses')" false
check fresh/thawed "$(cat "$CG/cgroup.freeze")" 0
echo yes >&7
exec 7>&-
wait "$P"
check fresh/process-ran-on "$?" 7
check fresh/enforced "$(in_cg "$CG" sbx-probe open "$W/data/secret")" EACCES
sbx-bpf detach "$CG" 2>>"$W/f.err"

# --fresh on a cgroup whose process holds a file open from before: judging turns on, and its
# next read through that descriptor is refused (exit 13: EACCES).
in_cg "$CG" python3 -B -c '
import os, sys, time
w = sys.argv[1]
fd = os.open(w + "/data/secret", os.O_RDONLY)
open(w + "/held", "w").close()
while not os.path.exists(w + "/go"):
    time.sleep(0.1)
try:
    os.pread(fd, 1, 0)
except OSError as e:
    sys.exit(e.errno)
' "$W" </dev/null >/dev/null 2>&1 &
H=$!
wait_for "$W/held" 100
sbx-bpf attach "$CG" --fresh --policy "$W/deny.json" 2>"$W/f2.err"
check fresh-held/exit "$?" 0
check fresh-held/judging "$(judging)" true
: >"$W/go"
wait "$H"
check fresh-held/read-refused "$?" 13
sbx-bpf detach "$CG" 2>>"$W/f2.err"
check fresh-held/off-after-detach "$(judging)" false

# A run whose command inherits a file beyond its stdio: judged while it runs, not after.
sbx-bpf run --deny-read "$W/data" -- sleep 3 3<"$W/data/secret" 2>/dev/null &
R=$!
i=0; got=false
while [ $i -lt 50 ] && [ "$got" != true ]; do got=$(judging); sleep 0.1; i=$((i + 1)); done
check run-inherited/judging-during "$got" true
wait "$R"
check run-inherited/off-after "$(judging)" false
out=$(sbx-bpf run --deny-read "$W/data" -- sbx-probe open "$W/data/secret" 2>/dev/null)
check run-clean/enforced "$out" EACCES
check run-clean/never-judging "$(judging)" false

# Arming (attach --from-exec, a container engine's): a cgroup every CPU knows as outside, attached
# so. The hooks ask "outside?" before anything else, file_open's exec test included: the attach
# must have voided the cache, or the first exec would not arm the sandbox. A subshell's open
# before the exec is let go (arming); the exec'd probe arms it and is refused, with its event.
echo secret >"$W/data/secret-arm"
for i in 1 2 3 4 5 6; do in_cg "$CG" sbx-probe open "$W/data/secret-arm" >/dev/null; done
check arming/outside-before "$(in_cg "$CG" sbx-probe open "$W/data/secret-arm")" OK
sbx-bpf attach "$CG" --fresh --from-exec --policy "$W/deny.json" 2>"$W/arm.err"
check arming/attach "$?" 0
got=$(sh -c 'echo $$ >'"$CG"'/cgroup.procs
	if (read l <'"$W/data/secret-arm"'); then echo OK; else echo EACCES; fi
	exec sbx-probe open '"$W/data/secret-arm" 2>/dev/null | tr '\n' ' ')
check arming/before-and-after-exec "$got" "OK EACCES "
wait_event arming/event "$W/ev.json" "any(.[]; .type == \"violation\" and .op == \"read\" and
	.path == \"$W/data/secret-arm\" and .errno == 13 and .cgroup_id == $CGID and .sandbox_cgroup_id == $CGID)"
sbx-bpf detach "$CG" 2>>"$W/arm.err"
check arming/free-after-detach "$(in_cg "$CG" sbx-probe open "$W/data/secret-arm")" OK

# A task moved by someone else (a service manager) out of its sandbox and into another, again and
# again, while it opens a denied file without pause. A call that read the task's cgroup before a
# move walks the levels of the cgroup it was moved to and finds no sandbox there: the "outside" it
# learns is of that cgroup, never of the one it read first (sandbox.h outside_keep), or every task
# of that sandbox would go unjudged until the next attach. The task goes CG, FREE, CG2, FREE, CG:
# four moves before it is back in a cgroup it left, so a call stalled across one move out and one
# back (which outside_keep cannot see) does not make this fail. Afterwards both sandboxes judge.
FREE=/sys/fs/cgroup/e2e-cache-free
CG2=/sys/fs/cgroup/e2e-cache-2
mkdir -p "$FREE" "$CG2"
echo secret >"$W/data/secret-move"
echo secret >"$W/data/secret-after"
sbx-bpf attach "$CG" --policy "$W/deny.json" 2>"$W/mv.err"
check moved/attach "$?" 0
sbx-bpf attach "$CG2" --policy "$W/deny.json" 2>>"$W/mv.err"
check moved/attach-2 "$?" 0
sh -c 'echo $$ >'"$CG"'/cgroup.procs && exec sbx-probe open-loop "$1" "$2"' sh \
	"$W/data/secret-move" "$W/stop" >"$W/loop.out" 2>&1 &
L=$!
sleep 1
n=0
end=$(($(date +%s) + 40))
while [ $n -lt 3000 ] && { [ $((n % 100)) -ne 0 ] || [ "$(date +%s)" -lt $end ]; }; do
	echo $L >"$FREE/cgroup.procs" && echo $L >"$CG2/cgroup.procs" &&
		echo $L >"$FREE/cgroup.procs" && echo $L >"$CG/cgroup.procs" || break
	n=$((n + 1))
done
: >"$W/stop"
wait "$L"
check moved/loop-exit "$?" 0
read -r refused allowed other first <"$W/loop.out"
echo "INFO $T/moved: $n rounds of four moves; the task's opens: $refused refused, $allowed let go" >>"$LOG"
check moved/many-moves "$([ $n -ge 500 ] && echo yes || echo "only $n")" yes
check moved/refused-and-let-go "$([ "${refused:-0}" -gt 0 ] && [ "${allowed:-0}" -gt 0 ] && echo yes ||
	echo "$(cat "$W/loop.out")")" yes
for c in "$CG" "$CG2"; do
	ok=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(in_cg "$c" sbx-probe open "$W/data/secret-after")" = EACCES ] && ok=$((ok + 1))
	done
	check "moved/${c##*/}-still-judged" "$ok" 10
	id=$(stat -c %i "$c")
	wait_event "moved/${c##*/}-event" "$W/ev.json" "any(.[]; .type == \"violation\" and .op == \"read\" and
		.path == \"$W/data/secret-after\" and .errno == 13 and .cgroup_id == $id and .sandbox_cgroup_id == $id)"
done
sbx-bpf detach "$CG" 2>>"$W/mv.err"
check moved/detach "$?" 0
sbx-bpf detach "$CG2" 2>>"$W/mv.err"
check moved/detach-2 "$?" 0
rmdir "$FREE" "$CG2"

kill "$D"; wait "$D" 2>/dev/null
rmdir "$CG" 2>/dev/null
