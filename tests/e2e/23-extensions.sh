# What many programs share is verified once, as BPF extensions
# (bpf/shared.bpf.c) put in place of stand-ins (docs/design.md, "Verified
# once: extensions"): the matcher and the dentry walk, whose stand-ins
# judge no path; the sending of records, whose stand-in loses each record
# (counted); the lookup of a task's sandboxes, whose stand-in takes no
# chain; the judge of a target task and a path's verdict under the chain,
# whose stand-ins refuse. A pinned set pins their links under ext/, one per
# function and program. With one taken away, that program's stand-in is
# back, and it denies, never allows: a sandboxed read of an allowed file, a
# rename, a chmod or a mkdir where writes are allowed, a task renicing
# itself, are refused (with their events, where the walk's or the
# matcher's stand-in denied and the record's extension is in), while the rest of the host
# is untouched. A file the sandbox read while the walk was linked keeps its
# open memo (bpf/fs.bpf.c), a verdict that stands without a walk: it is
# still let go, which shows the memo is used; so is a file created in a
# directory where one was created before, by its directory memo (the
# matcher is still linked there), while one in a directory not written in
# yet is refused;
# an F_SETOWN refused without its record still fails, and
# the record is counted as lost. With every work slot taken, a task of no
# sandbox that the outside cache has not seen is let go by sbx_unjudged
# and refused by its stand-in. An extension the kernel refuses
# (SBX_TEST_DROP_SHARED) leaves out every program that calls it, each
# named, and run refuses to start until they are accepted by name.
# e2e: programs=own
. /sbx/tests/e2e/lib.sh

PIN=/sys/fs/bpf/sbx
CG=/sys/fs/cgroup/e2e-ext
mkdir -p "$W/data" "$W/fresh" "$CG"
echo secret >"$W/data/secret"
echo open >"$W/open"
echo open >"$W/open2"
echo written >"$W/wfile"
echo written >"$W/wfile2"
touch "$W/ren1" "$W/ren2"
echo "{ \"filesystem\": { \"denyRead\": [ \"$W/data\" ], \"allowWrite\": [ \"$W\" ] } }" >"$W/p.json"

sbx-bpf daemon --events "$W/ev1.json" 2>"$W/d1.err" &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/start "$(cat "$W/d1.err")"
for p in sbx_judge_path@fs_file_open resolve_in@fs_file_open resolve_in@fs_path_rename fs_match@fs_path_rename \
	sbx_judge_path@fs_path_mkdir sbx_judge_path@fs_path_mknod fs_match@fs_path_mknod sbx_emit@fs_path_unlink sbx_emit@fs_file_open sbx_emit@task_file_fcntl sbx_emit@net_socket_connect \
	sbx_current_chain@fs_path_chmod sbx_current_chain@net_socket_connect sbx_unjudged@task_kill \
	sbx_judge_task@task_kill sbx_judge_task@task_setnice fs_name_clear@fs_path_mknod fs_name_clear@fs_path_unlink; do
	[ -e "$PIN/ext/$p" ] && pass "pinned/$p" || fail "pinned/$p" "$(ls "$PIN/ext" 2>&1 | head -5)"
done
sbx-bpf attach "$CG" --fresh --policy "$W/p.json" 2>"$W/a.err"
check attach/exit "$?" 0
CGID=$(stat -c %i "$CG")

# A process in the sandbox that lives through the changes below (an exec would be judged, and so
# would a file it opened): "OP PATH" on each line of one fifo (open, mkdir, rmdir, rename to
# PATH.moved, chmod; setown and nice take none: the fifo's SIGIO owner set to the process outside
# that started it, its own priority set again), its errno's name on the other, both opened before
# any change.
mkfifo "$W/cmd" "$W/ans"
sh -c 'echo $$ >'"$CG"'/cgroup.procs && exec python3 -B -c "$0" "$1"' '
import errno, fcntl, os, sys
w = sys.argv[1]
cmd = open(w + "/cmd")
ans = open(w + "/ans", "w")
for line in cmd:
    op, path = line.split()
    try:
        if op == "open":
            os.close(os.open(path, os.O_RDONLY))
        elif op == "mkdir":
            os.mkdir(path)
        elif op == "create":
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        elif op == "write":
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
        elif op == "truncate":
            os.truncate(path, 0)
        elif op == "rmdir":
            os.rmdir(path)
        elif op == "rename":
            os.rename(path, path + ".moved")
        elif op == "chmod":
            os.chmod(path, 0o600)
        elif op == "nice":
            os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0))
        elif op == "setown":
            fcntl.fcntl(cmd.fileno(), fcntl.F_SETOWN, os.getppid())
        else:
            raise OSError(errno.EINVAL, op)
        a = "OK"
    except OSError as e:
        a = errno.errorcode[e.errno]
    ans.write(a + "\n")
    ans.flush()
' "$W" 2>"$W/reader.err" &
READER=$!
exec 6>"$W/cmd" 7<"$W/ans"
ask() {
	echo "$1 $2" >&6
	read -r a <&7 && echo "$a" || echo "no answer: $(cat "$W/reader.err")"
}
check linked/open-allowed "$(ask open "$W/open")" OK
check linked/open-denied "$(ask open "$W/data/secret")" EACCES
check linked/mkdir-allowed "$(ask mkdir "$W/made1")" OK
check linked/create-allowed "$(ask create "$W/new1")" OK
check linked/write-allowed "$(ask write "$W/wfile")" OK
check linked/rename-allowed "$(ask rename "$W/ren1")" OK
check linked/chmod-allowed "$(ask chmod "$W/open")" OK
check linked/nice-self-allowed "$(ask nice self)" OK
check linked/setown-denied "$(ask setown -)" EPERM
wait_event linked/setown-event "$W/ev1.json" "any(.[]; .type == \"violation\" and .op == \"signal\" and
	.errno == 1 and .sandbox_cgroup_id == $CGID)"

# A task in a cgroup of no sandbox that the outside cache has not seen yet, every work slot taken
# (sbx-slots): its exec (file_open) reaches sbx_unjudged, which lets it go. The test's own shell
# opens once first, so the cache knows it and its sbx-slots runs whatever sbx_unjudged says.
trap 'sbx-slots give >/dev/null 2>&1' EXIT
no_slot_exec() {
	mkdir "$CG-$1" || return 1
	sbx-probe open "$W/open" >/dev/null 2>&1
	sbx-slots take >/dev/null 2>"$W/take.err" || { cat "$W/take.err"; return 1; }
	sh -c "echo \$\$ >$CG-$1/cgroup.procs; exec sbx-probe open $W/open" 2>"$W/$1.err"
	echo "exit $?"
	sbx-slots give >/dev/null 2>&1
	rmdir "$CG-$1"
}
check linked/no-slot-outside-exec "$(no_slot_exec fresh1)" "OK
exit 0"

# The daemon holds the links too: it goes (the set stays pinned and enforcing), then the pins.
kill -9 "$D"
wait "$D" 2>/dev/null
for p in resolve_in@fs_file_open fs_match@fs_path_rename sbx_emit@task_file_fcntl \
	sbx_current_chain@fs_path_chmod sbx_judge_task@task_setnice sbx_judge_path@fs_path_mkdir \
	sbx_judge_path@fs_path_mknod sbx_unjudged@fs_file_open; do
	rm "$PIN/ext/$p"
done
# The truncation's walk too: path_truncate's (truncate(2); on 6.1 also open(O_TRUNC)'s) and, on 6.2+,
# file_truncate's (open(O_TRUNC)'s).
for p in resolve_in@fs_path_truncate resolve_in@fs_file_truncate; do
	[ ! -e "$PIN/ext/$p" ] || rm "$PIN/ext/$p"
done
counter() { sbx-bpf status --json | jq -r ".counters.$1"; }
# First, so that the records after it in the ring buffer show it sent none.
lost0=$(counter events_lost) violations0=$(counter violations)
check stand-in/setown-refused "$(ask setown -)" EPERM
check stand-in/setown-lost-counted "$(($(counter events_lost) - lost0))" 1
check stand-in/setown-violation-counted "$(($(counter violations) - violations0))" 1
# A file no open has read yet is refused; one read before (linked/open-allowed) has a memo
# (fs.bpf.c), which lets it go without the walk.
check stand-in/open-refused "$(ask open "$W/open2")" EACCES
check stand-in/memo-still-allows "$(ask open "$W/open")" OK
# The same for a write: a file opened for writing before (linked/write-allowed) is opened and
# truncated again (O_TRUNC: its truncation asks nothing its open was not just allowed); one never
# written, and a truncate(2), which is judged, are refused.
echo again >"$W/wfile"
check stand-in/write-memo-still-allows "$(ask write "$W/wfile")" OK
check stand-in/write-truncated "$(stat -c %s "$W/wfile")" 0
check stand-in/write-refused "$(ask write "$W/wfile2")" EACCES
check stand-in/truncate-refused "$(ask truncate "$W/wfile")" EACCES
check stand-in/rename-refused "$(ask rename "$W/ren2")" EACCES
[ -e "$W/ren2" ] && pass stand-in/nothing-renamed || fail stand-in/nothing-renamed "$W/ren2 is gone"
# The stand-ins below send no record: each refusal is counted.
chmod 644 "$W/open"
while read -r op arg want; do
	denied0=$(counter denied)
	check "stand-in/$op-refused" "$(ask "$op" "$arg")" "$want"
	check "stand-in/$op-denied-counted" "$(($(counter denied) - denied0))" 1
done <<EOF
chmod $W/open EACCES
nice self EPERM
mkdir $W/made2 EACCES
create $W/fresh/new2 EACCES
EOF
check stand-in/chmod-nothing-changed "$(stat -c %a "$W/open")" 644
[ -e "$W/made2" ] && fail stand-in/nothing-made "$W/made2 exists" || pass stand-in/nothing-made
[ -e "$W/fresh/new2" ] && fail stand-in/nothing-created "$W/fresh/new2 exists" || pass stand-in/nothing-created
check stand-in/dir-memo-still-allows "$(ask create "$W/new3")" OK
check stand-in/outside-untouched "$(sbx-probe open "$W/open")" OK
# sbx_unjudged's stand-in refuses a call without a work slot, even outside every sandbox: sh's exec, 126.
check stand-in/no-slot-outside-exec "$(no_slot_exec fresh2)" "exit 126"
# Another program's links are its own: path_rmdir still judges by the policy.
check stand-in/others-linked "$(ask rmdir "$W/made1")" OK
# Refused with a record after the ones above: once it is read, theirs would be too.
check stand-in/open-again-refused "$(ask open "$W/open2")" EACCES
# A daemon adopting the set collects what was denied meanwhile (the fifos not its to hold open).
sbx-bpf daemon --events "$W/ev2.json" 2>"$W/d2.err" 6>&- 7<&- &
D=$!
wait_for /run/sbx-bpf/events.sock 600 || fail daemon/restart "$(cat "$W/d2.err")"
wait_event stand-in/open-event "$W/ev2.json" "any(.[]; .type == \"violation\" and .op == \"read\" and
	.errno == 13 and .path_unresolved == true and .sandbox_cgroup_id == $CGID)"
wait_event stand-in/rename-event "$W/ev2.json" "any(.[]; .type == \"violation\" and .op == \"rename\" and
	.path == \"$W/ren2\" and .errno == 13 and (.path_unresolved // false) == false and
	.sandbox_cgroup_id == $CGID)"
# Records are read in order: the refused setown's, had it sent one, would be in already.
n=$(jq -s '[.[] | select(.type == "violation" and .op == "signal")] | length' "$W/ev2.json")
check stand-in/setown-no-record "$n" 0
# sbx_judge_path's stand-in refuses without a record, as sbx_judge_task's (read up to the second open's).
wait_event stand-in/open-again-event "$W/ev2.json" "[.[] | select(.type == \"violation\" and .op == \"read\" and
	.path_unresolved == true and .sandbox_cgroup_id == $CGID)] | length >= 2"
n=$(jq -s '[.[] | select(.type == "violation" and .op == "mkdir")] | length' "$W/ev2.json")
check stand-in/mkdir-no-record "$n" 0
exec 6>&- 7<&-
wait "$READER"
kill "$D" 2>/dev/null
wait "$D" 2>/dev/null
sbx-bpf detach "$CG" >/dev/null 2>&1
sbx-bpf unload >/dev/null 2>"$W/unload.err" || fail unload "$(cat "$W/unload.err")"
wait_unloads 1200

# --- the extension refused: every program that calls it is a gap, named; run starts nothing --
SBX_TEST_DROP_SHARED=1 sbx-bpf run --policy "$W/p.json" -- sh -c "touch $W/ran" 2>"$W/run.err"
check refused/run-exit-1 "$?" 1
[ ! -e "$W/ran" ] && pass refused/not-started || fail refused/not-started "it ran"
grep -q "file_open: its shared code cannot load: left out on request (SBX_TEST_DROP_SHARED)" "$W/run.err" &&
grep -q "path_mkdir: its shared code cannot load" "$W/run.err" &&
grep -q "unix_stream_connect: its shared code cannot load" "$W/run.err" &&
grep -q "task_kill: its shared code cannot load" "$W/run.err" &&
grep -q -- "--accept-missing" "$W/run.err" && pass refused/names-each || fail refused/names-each "$(cat "$W/run.err")"
# Accepted by name, it starts without them, and says so.
ACCEPT=$(grep -- --accept-missing "$W/run.err" | tail -1 | awk '{ print $NF }')
SBX_TEST_DROP_SHARED=1 sbx-bpf run --accept-missing "$ACCEPT" --policy "$W/p.json" -- sh -c "touch $W/ran" \
	2>"$W/run2.err"
check refused/accepted-runs "$?" 0
[ -e "$W/ran" ] && pass refused/accepted-started || fail refused/accepted-started "$(cat "$W/run2.err")"
grep -q "running without the file_open hook (accepted)" "$W/run2.err" && pass refused/accepted-says ||
	fail refused/accepted-says "$(cat "$W/run2.err")"
wait_unloads 1200

rmdir "$CG" 2>/dev/null
rm -rf "$W"
