# The open memo for writes (bpf/fs.bpf.c; docs/design.md, "The open memo"):
# an open for writing that was allowed without a word is remembered on the
# file's inode as an open for reading is, with what it allowed (need: r, w
# or both), and an open(O_TRUNC)'s truncation, a moment after its open was
# allowed to write, is not judged again. Shown here: a memo allows only
# what was judged (a file readable but not writable, or writable but not
# readable, is still refused the other, errno and event); what a memo of
# the same path allowed before is kept with it; truncations other than
# O_TRUNC's, and O_RDONLY|O_TRUNC's, are judged; a write in procfs, which
# depends on whose /proc/<pid> it is, keeps none; each way the path or the
# sandboxes can change under it refuses the next write; a reported write
# keeps none. That the memo and the truncation's memory are used at all is
# 23-extensions' (a write let go with the walk taken away).
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh

memo_cgroups wmemo
for d in ws/sec ws/m ws/p ws/o ws/g2 ro x2; do mkdir -p "$W/$d"; done
for f in ro/f ro/n ro/y ws/sec/f ws/g ws/h ws/t ws/m/f ws/mr ws/f2 ws/l ws/p/f ws/o/f ws/g2/f x2/f; do
	echo data >"$W/$f"
done
# /proc is writable, so that a task's own /proc/<pid> is (kernel_fs) and another's is not.
cat >"$W/p.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/ws/sec" ], "allowWrite": [ "$W/ws", "/proc" ] } }
EOF
# p2: the same without $W/ws/p, and $W/ws/g2 writable but not readable
cat >"$W/p2.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/ws/sec", "$W/ws/g2" ], "allowWrite": [ "$W/ws/m", "$W/ws/o", "$W/ws/g2", "/proc" ] } }
EOF
# pe: another sandbox's, which may write $W/x2 (not read it) and nothing else of $W
cat >"$W/pe.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/x2" ], "allowWrite": [ "$W/x2" ] } }
EOF
# kept NAME FILE NEED: FILE's memo is CG's and allows exactly NEED.
kept() { memo_kept "$1" "$CG" "need=$3" "$2"; }

memo_daemon "$W/p.json" "$W/pe.json"

# --- a memo allows what was judged, no more ----------------------------------------------------
check need/none-before "$(sbx-memo "$W/ws/g")" none
check need/write "$(probe_in "$CG" open "$W/ws/g" w)" OK
kept need/write-memo "$W/ws/g" w
# Written, then read: one memo of the same path keeps both.
check need/read "$(probe_in "$CG" open "$W/ws/g")" OK
kept need/both-memo "$W/ws/g" rw
check need/write-again "$(probe_in "$CG" open "$W/ws/g" w)" OK
check need/read-again "$(probe_in "$CG" open "$W/ws/g")" OK
kept need/both-still "$W/ws/g" rw
check need/rdwr "$(probe_in "$CG" open "$W/ws/h" rw)" OK
kept need/rdwr-memo "$W/ws/h" rw
# Readable, not writable: a read's memo does not let a write go.
check need/ro-read "$(probe_in "$CG" open "$W/ro/f")" OK
kept need/ro-memo "$W/ro/f" r
check need/ro-write-denied "$(probe_in "$CG" open "$W/ro/f" w)" EACCES
memo_denied need/ro-write-event write "$W/ro/f"
check need/ro-rdwr-denied "$(probe_in "$CG" open "$W/ro/f" rw)" EACCES
kept need/ro-memo-unchanged "$W/ro/f" r
# Writable, not readable: a write's memo does not let a read go.
check need/wo-write "$(probe_in "$CG" open "$W/ws/sec/f" w)" OK
kept need/wo-memo "$W/ws/sec/f" w
check need/wo-read-denied "$(probe_in "$CG" open "$W/ws/sec/f" peek)" EACCES
memo_denied need/wo-read-event read "$W/ws/sec/f"
check need/wo-rdwr-denied "$(probe_in "$CG" open "$W/ws/sec/f" rw)" EACCES
kept need/wo-memo-unchanged "$W/ws/sec/f" w

# --- truncation: open(O_TRUNC)'s goes with its open; every other is judged ---------------------
check trunc/open "$(probe_in "$CG" open "$W/ws/t" trunc)" OK
check trunc/emptied "$(stat -c %s "$W/ws/t")" 0
kept trunc/memo "$W/ws/t" w
echo data >"$W/ws/t"
check trunc/again "$(probe_in "$CG" open "$W/ws/t" trunc)" OK
check trunc/emptied-again "$(stat -c %s "$W/ws/t")" 0
check trunc/truncate-allowed "$(probe_in "$CG" truncate "$W/ws/t")" OK
# O_RDONLY|O_TRUNC truncates, though its open asks only to read: a read's memo does not cover it.
check trunc/rdonly-denied "$(probe_in "$CG" open "$W/ro/f" rtrunc)" EACCES
memo_denied trunc/rdonly-event truncate "$W/ro/f"
check trunc/rdonly-kept-data "$(cat "$W/ro/f")" data
check trunc/truncate-denied "$(probe_in "$CG" truncate "$W/ro/f")" EACCES
check trunc/truncate-kept-data "$(cat "$W/ro/f")" data
# The note is for its own file: an open(O_TRUNC) that made its file leaves one (no truncation
# follows), and the same task's truncate(2) of a file it may not write, at once, is judged.
check trunc/note-other-file "$(probe_in "$CG" open-truncate "$W/ws/nf" rwtrunc "$W/ro/n")" EACCES
memo_denied trunc/note-other-file-event truncate "$W/ro/n"
check trunc/note-other-file-kept-data "$(cat "$W/ro/n")" data

# --- procfs: a write there is the writer's own /proc/<pid> or refused, so no memo --------------
# A task of the sandbox writes its own comm (allowed), then another of the same sandbox tries it.
# O_WRONLY alone: with O_CREAT, a first open would be judged at path_mknod, and the open let go
# by the kernel's mark of a file it created (created_now), keeping no memo either way. It tells
# its pid, the write's outcome and comm read back in one rename: the file is whole once it is there.
in_cg "$CG" python3 -B -c '
import os, sys, time
w = sys.argv[1]
comm = "/proc/%d/comm" % os.getpid()
try:
    fd = os.open(comm, os.O_WRONLY)
    os.write(fd, b"wmemo-a")
    os.close(fd)
    r = "OK"
except OSError as e:
    r = e.strerror.replace(" ", "-")
with open(comm) as f:
    now = f.read().strip()
with open(w + "/a.tmp", "w") as f:
    f.write("%d %s %s\n" % (os.getpid(), r, now))
os.rename(w + "/a.tmp", w + "/a")
time.sleep(60)
' "$W/ws" 2>"$W/a-err" &
AJOB=$!
wait_for "$W/ws/a" 100
read -r A rc comm <"$W/ws/a"
check procfs/own-write "$rc" OK
check procfs/own-written "$comm" wmemo-a
# (Its read of comm may keep a memo of reading: reads in procfs do not depend on who reads.)
case "$(sbx-memo "/proc/$A/comm")" in
none | *" need=r") pass procfs/no-write-memo ;;
*) fail procfs/no-write-memo "sbx-memo /proc/$A/comm: $(sbx-memo "/proc/$A/comm")" ;;
esac
check procfs/other-denied "$(probe_in "$CG" open "/proc/$A/comm" w)" EACCES
memo_denied procfs/other-event write "/proc/$A/comm"
kill "$A"
wait "$AJOB" 2>/dev/null

# --- the path changes under it -----------------------------------------------------------------
# A directory above the file moved (outside the sandbox) where the policy allows no write.
check moved/write "$(probe_in "$CG" open "$W/ws/m/f" w)" OK
kept moved/memo "$W/ws/m/f" w
mv "$W/ws/m" "$W/ro/m"
check moved/denied "$(probe_in "$CG" open "$W/ro/m/f" w)" EACCES
memo_denied moved/event write "$W/ro/m/f"
# Read, then moved (outside the sandbox) where it may be written, not read, then written: the
# write's memo is of the new path, and keeps nothing of what the old one allowed.
check merge/read "$(probe_in "$CG" open "$W/ws/mr")" OK
kept merge/read-memo "$W/ws/mr" r
mv "$W/ws/mr" "$W/ws/sec/mr"
check merge/write "$(probe_in "$CG" open "$W/ws/sec/mr" w)" OK
kept merge/write-memo "$W/ws/sec/mr" w
check merge/read-denied "$(probe_in "$CG" open "$W/ws/sec/mr" peek)" EACCES
memo_denied merge/read-event read "$W/ws/sec/mr"
# The file itself moved there.
check file-moved/write "$(probe_in "$CG" open "$W/ws/f2" w)" OK
kept file-moved/memo "$W/ws/f2" w
mv "$W/ws/f2" "$W/ro/f2"
check file-moved/denied "$(probe_in "$CG" open "$W/ro/f2" trunc)" EACCES
memo_denied file-moved/event write "$W/ro/f2"
check file-moved/kept-data "$(cat "$W/ro/f2")" data
# A hard link to it there: the same inode, another path.
check link/write "$(probe_in "$CG" open "$W/ws/l" w)" OK
kept link/memo "$W/ws/l" w
ln "$W/ws/l" "$W/ro/l"
check link/denied "$(probe_in "$CG" open "$W/ro/l" w)" EACCES
memo_denied link/event write "$W/ro/l"
check link/first-name-still-allowed "$(probe_in "$CG" open "$W/ws/l" w)" OK

# --- the sandboxes change --------------------------------------------------------------------
# The policy replaced by one that allows no write there; and by one under which a file read
# before may be written but not read: the write's memo keeps nothing of the old policy's read.
check policy/write "$(probe_in "$CG" open "$W/ws/p/f" w)" OK
kept policy/memo "$W/ws/p/f" w
check policy/read "$(probe_in "$CG" open "$W/ws/g2/f")" OK
kept policy/read-memo "$W/ws/g2/f" r
sbx-bpf attach "$CG" --policy "$W/p2.json" 2>>"$W/a.err"
check policy/reattach "$?" 0
check policy/denied "$(probe_in "$CG" open "$W/ws/p/f" w)" EACCES
memo_denied policy/event write "$W/ws/p/f"
check policy/write-after "$(probe_in "$CG" open "$W/ws/g2/f" w)" OK
kept policy/write-after-memo "$W/ws/g2/f" w
check policy/read-denied "$(probe_in "$CG" open "$W/ws/g2/f" peek)" EACCES
memo_denied policy/read-event read "$W/ws/g2/f"
# A task of another sandbox, whose policy allows no write of the file CG's task wrote.
check other/write "$(probe_in "$CG" open "$W/ws/o/f" w)" OK
kept other/memo "$W/ws/o/f" w
check other/denied "$(probe_in "$CG2" open "$W/ws/o/f" w)" EACCES
memo_denied other/event write "$W/ws/o/f" "$CG2"
# CG reads a file the other sandbox may write but not read; the other's write keeps nothing of
# CG's read.
check other-merge/read "$(probe_in "$CG" open "$W/x2/f")" OK
kept other-merge/read-memo "$W/x2/f" r
check other-merge/write "$(probe_in "$CG2" open "$W/x2/f" w)" OK
memo_kept other-merge/write-memo "$CG2" need=w "$W/x2/f"
check other-merge/read-denied "$(probe_in "$CG2" open "$W/x2/f" peek)" EACCES
memo_denied other-merge/read-event read "$W/x2/f" "$CG2"

# --- never kept for a reported write ----------------------------------------------------------
memo_never_reported write "$W/ro/y" w

memo_cgroups_end
exit 0
