# The open memo (bpf/fs.bpf.c; docs/design.md, "The open memo"): a
# read-only open allowed without a word is remembered on the file's inode,
# and the next such open from the same cgroup is let go without judging
# its path again, as long as the path is step for step the one judged and
# no sandbox or rule changed. Each way the memo could outlive what it
# says is tried here: the memo is first shown to be there (tests/vm/sbx-memo),
# then the path or the policy changes, and the next open must be refused,
# errno and event. And it must never be kept for an open that was
# reported: an audited denial, a grant's use.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh

memo_cgroups memo
mkdir -p "$W/sec" "$W/ws"
for d in pub/a pub2 pub3 pub4 pub5 pub6 pub7 pub8 m1 m2 sec/m1 sec/b; do mkdir -p "$W/$d"; done
for f in pub/a/f pub2/f pub3/g pub4/h pub5/f pub6/f pub7/f pub8/f sec/x sec/y; do echo data >"$W/$f"; done
cat >"$W/p.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/sec", "$W/sec2" ], "allowWrite": [ "$W/ws" ] } }
EOF
cat >"$W/p6.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/sec", "$W/sec2", "$W/pub6" ], "allowWrite": [ "$W/ws" ] } }
EOF
cat >"$W/p7.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/pub7" ], "allowWrite": [ "$W/ws" ] } }
EOF
cat >"$W/p8.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/pub8" ], "allowWrite": [ "$W/ws" ] } }
EOF
CGID=$(stat -c %i "$CG")
# kept NAME FILE: the memo of FILE is CG's.
kept() { memo_kept "$1" "$CG" "$2"; }
memo_daemon "$W/p.json" "$W/p7.json"

# --- kept, and used --------------------------------------------------------------------------
check kept/open "$(probe_in "$CG" open "$W/pub/a/f")" OK
kept kept/memo "$W/pub/a/f"
check kept/open-again "$(probe_in "$CG" open "$W/pub/a/f")" OK
check kept/dir-open "$(probe_in "$CG" open "$W/pub/a" dir)" OK
kept kept/dir-memo "$W/pub/a"
check kept/denied-still "$(probe_in "$CG" open "$W/sec/x")" EACCES
check kept/no-memo-for-a-denial "$(sbx-memo "$W/sec/x")" none
memo_denied kept/denied-event read "$W/sec/x"
# Settled, the next open goes without the walk (the deadline stays).
memo_settle unwalked "$CG" "$W/pub/a/f" -- open "$W/pub/a/f" peek
memo_unwalked unwalked/kept-deadline "$CG" "$W/pub/a/f" -- open "$W/pub/a/f" peek
# A file system that checks its dentries again before use (cgroupfs, kernfs: DCACHE_OP_REVALIDATE,
# and not one whose directories the fast path names by inode) can see a directory move without the
# kernel's move counts: its memos are walked every time. The second open's walk holds (the memo is
# not written again: the same sequence count) and does not settle it. cgroupfs is both, so this
# shows that one of the two gates holds, not which.
check revalidating/open "$(probe_in "$CG" open "$CG/cgroup.procs" peek)" OK
kept revalidating/memo "$CG/cgroup.procs"
_seq=$(memo_seq "$CG/cgroup.procs")
check revalidating/open-again "$(probe_in "$CG" open "$CG/cgroup.procs" peek)" OK
check revalidating/never-settled "$(memo_settled "$CG/cgroup.procs")" 0
check revalidating/held-unwritten "$(memo_seq "$CG/cgroup.procs")" "$_seq"

# --- the path changes under it -----------------------------------------------------------------
# Each open after a change reads nothing (peek): with file_permission attached (the daemon's
# attach without --fresh), a read would be judged whole there, whatever the open went by.
# A directory above the file moved (outside the sandbox) into a denied one.
memo_settle parent-moved "$CG" "$W/pub/a/f" -- open "$W/pub/a/f"
mv "$W/pub" "$W/sec/pub"
check parent-moved/denied "$(probe_in "$CG" open "$W/sec/pub/a/f" peek)" EACCES
memo_in_window parent-moved/in-window
memo_denied parent-moved/event read "$W/sec/pub/a/f"
check parent-moved/dir-denied "$(probe_in "$CG" open "$W/sec/pub/a" dir)" EACCES
# A directory above it renamed in place: the same parent, a denied name.
check renamed/open "$(probe_in "$CG" open "$W/pub2/f")" OK
kept renamed/memo "$W/pub2/f"
memo_settle renamed "$CG" "$W/pub2/f" -- open "$W/pub2/f"
mv "$W/pub2" "$W/sec2"
check renamed/denied "$(probe_in "$CG" open "$W/sec2/f" peek)" EACCES
memo_in_window renamed/in-window
memo_denied renamed/event read "$W/sec2/f"
# The file itself moved into a denied directory.
check file-moved/open "$(probe_in "$CG" open "$W/pub3/g")" OK
kept file-moved/memo "$W/pub3/g"
memo_settle file-moved "$CG" "$W/pub3/g" -- open "$W/pub3/g"
mv "$W/pub3/g" "$W/sec/g"
check file-moved/denied "$(probe_in "$CG" open "$W/sec/g" peek)" EACCES
memo_in_window file-moved/in-window
memo_denied file-moved/event read "$W/sec/g"
# A hard link to the file made in a denied directory: the same inode, another path.
check link/open "$(probe_in "$CG" open "$W/pub4/h")" OK
kept link/memo "$W/pub4/h"
memo_settle link "$CG" "$W/pub4/h" -- open "$W/pub4/h"
ln "$W/pub4/h" "$W/sec/h"
check link/denied "$(probe_in "$CG" open "$W/sec/h" peek)" EACCES
memo_in_window link/in-window
memo_denied link/event read "$W/sec/h"
check link/first-name-still-allowed "$(probe_in "$CG" open "$W/pub4/h")" OK
# The file system it is on moved into a denied directory.
mount -t tmpfs memo-m1 "$W/m1" && echo data >"$W/m1/f"
check mount-moved/open "$(probe_in "$CG" open "$W/m1/f")" OK
kept mount-moved/memo "$W/m1/f"
memo_settle mount-moved "$CG" "$W/m1/f" -- open "$W/m1/f"
if mount --move "$W/m1" "$W/sec/m1" 2>"$W/move.err"; then
	check mount-moved/denied "$(probe_in "$CG" open "$W/sec/m1/f" peek)" EACCES
	memo_in_window mount-moved/in-window
	memo_denied mount-moved/event read "$W/sec/m1/f"
	umount "$W/sec/m1"
else
	fail mount-moved/move "$(cat "$W/move.err")"
fi
# The file's directory bound into a denied one: another mount, another path.
check bind/open "$(probe_in "$CG" open "$W/pub5/f")" OK
kept bind/memo "$W/pub5/f"
memo_settle bind "$CG" "$W/pub5/f" -- open "$W/pub5/f"
mount --bind "$W/pub5" "$W/sec/b"
check bind/denied "$(probe_in "$CG" open "$W/sec/b/f" peek)" EACCES
memo_in_window bind/in-window
memo_denied bind/event read "$W/sec/b/f"
umount "$W/sec/b"
# The file system cut loose (umount -l) while a task inside holds a directory of it: its
# files have no path any more, and are refused as unresolved.
mount -t tmpfs memo-m2 "$W/m2" && echo data >"$W/m2/f"
mkfifo "$W/cmd"
in_cg "$CG" python3 -B -c '
import errno, os, sys
w = sys.argv[1]
d = os.open(w + "/m2", os.O_PATH | os.O_DIRECTORY)
for line in open(w + "/cmd"):
    n = line.strip()
    try:
        os.close(os.open("f", os.O_RDONLY, dir_fd=d))
        a = "OK"
    except OSError as e:
        a = errno.errorcode[e.errno]
    with open(w + "/ws/ans-" + n, "w") as f:
        f.write(a + "\n")
' "$W" 2>"$W/reader.err" &
READER=$!
exec 6>"$W/cmd"
ask() {	# the reader answers in $W/ws, where the policy lets it write
	rm -f "$W/ws/ans-$1"
	echo "$1" >&6
	i=0
	while [ ! -s "$W/ws/ans-$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	cat "$W/ws/ans-$1" 2>/dev/null || echo "no answer: $(cat "$W/reader.err")"
}
check detached/open "$(ask 1)" OK
kept detached/memo "$W/m2/f"
umount -l "$W/m2"
check detached/denied "$(ask 2)" EACCES
wait_event detached/event "$W/ev.json" \
	"any(.[]; .type == \"violation\" and .op == \"read\" and .path_unresolved and .errno == 13 and
	 .cgroup_id == $CGID)"
exec 6>&-
wait "$READER" 2>/dev/null

# --- the sandboxes change --------------------------------------------------------------------
# The policy replaced by one that denies the file.
check policy/open "$(probe_in "$CG" open "$W/pub6/f")" OK
kept policy/memo "$W/pub6/f"
sbx-bpf attach "$CG" --policy "$W/p6.json" 2>>"$W/a.err"
check policy/reattach "$?" 0
check policy/denied "$(probe_in "$CG" open "$W/pub6/f")" EACCES
memo_denied policy/event read "$W/pub6/f"
# A task of another sandbox, whose policy denies the file CG's task opened: the memo is CG's.
check other/open "$(probe_in "$CG" open "$W/pub7/f")" OK
kept other/memo "$W/pub7/f"
check other/denied "$(probe_in "$CG2" open "$W/pub7/f")" EACCES
memo_denied other/event read "$W/pub7/f" "$CG2"
# A sandbox attached above one whose task the memo allowed.
sbx-bpf attach "$TOP/inner" --policy "$W/p.json" 2>>"$W/a.err"
check above/attach-inner "$?" 0
check above/open "$(probe_in "$TOP/inner" open "$W/pub8/f")" OK
memo_kept above/memo "$TOP/inner" "$W/pub8/f"
sbx-bpf attach "$TOP" --policy "$W/p8.json" 2>>"$W/a.err"
check above/attach-top "$?" 0
check above/denied "$(probe_in "$TOP/inner" open "$W/pub8/f")" EACCES
memo_denied above/event read "$W/pub8/f" "$TOP/inner"

# --- never kept for a reported open ----------------------------------------------------------
memo_never_reported read "$W/sec/y" r

memo_cgroups_end
exit 0
