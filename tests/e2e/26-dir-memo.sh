# The directory memo (bpf/fs.bpf.c; docs/design.md, "The directory memo"):
# after a write in a directory was allowed without a word, the directory's
# inode keeps its walk and the matcher's state at its path's end, and the
# next write there from the same cgroup walks the directory again without
# names and matches only the new name. Shown first: the memo is kept
# (tests/vm/sbx-memo --dir), and rules on the name itself still apply
# through it (a denyWrite file, the mandatory set). Then each way it could
# outlive what it says is tried, and the next write must be refused, errno
# and event; and it must never be kept where a write was reported or the
# state could expire.
# e2e: programs=pinned
. /sbx/tests/e2e/lib.sh

memo_cgroups dmemo
# lname N C: a name of N bytes, its last one C (the lengths around a dentry's inline store, below).
lname() { printf "%0$(($1 - 1))d%s" 0 "$2" | tr 0 q; }
LENS="7 8 9 15 16 17 30 31 32 33 38 39 40 41 100 255"
LONG_DENY=$(for n in $LENS; do printf ', "%s"' "$W/ws/a/$(lname "$n" x)"; done)
for d in ws/a ws/b ws/c ws/d ws/e ws/f ws/g ws/k ws/m1 ro/m1 ro/b ro/g ro/q; do mkdir -p "$W/$d"; done
cat >"$W/p.json" <<EOF
{ "filesystem": { "allowWrite": [ "$W/ws", "$W/ro/q/one" ], "denyWrite": [ "$W/ws/a/locked", "$W/ws/shut"$LONG_DENY ] } }
EOF
# p2: the same without $W/ws/d
cat >"$W/p2.json" <<EOF
{ "filesystem": { "allowWrite": [ "$W/ws/a", "$W/ws/b", "$W/ws/c", "$W/ws/e", "$W/ws/f", "$W/ws/g" ] } }
EOF
# pe: only $W/ws/a (another sandbox's, and the one above)
cat >"$W/pe.json" <<EOF
{ "filesystem": { "allowWrite": [ "$W/ws/a" ] } }
EOF
CGID=$(stat -c %i "$CG")
# kept NAME DIR [CGROUP-DIR]: DIR holds a directory memo of that cgroup (CG's by default).
# none_holds NAME DIR: DIR holds no memo that could allow anything ("none", or a marker: 0 steps).
kept() { memo_kept "$1" "${3:-$CG}" --dir "$2"; }
none_holds() {
	case "$(sbx-memo --dir "$2" 2>&1)" in
	none | "cgroup="*" steps=0 "*) pass "$1" ;;
	*) fail "$1" "sbx-memo --dir $2: $(sbx-memo --dir "$2" 2>&1)" ;;
	esac
}
memo_daemon "$W/p.json" "$W/pe.json"

# --- kept, used, and the name still judged ----------------------------------------------------
check kept/none-before "$(sbx-memo --dir "$W/ws/a")" none
check kept/create "$(probe_in "$CG" open "$W/ws/a/f1" creat)" OK
kept kept/memo "$W/ws/a"
check kept/create-again "$(probe_in "$CG" open "$W/ws/a/f2" creat)" OK
check kept/mkdir "$(probe_in "$CG" mkdir "$W/ws/a/sub")" OK
check kept/rmdir "$(probe_in "$CG" rmdir "$W/ws/a/sub")" OK
check kept/unlink "$(probe_in "$CG" unlink "$W/ws/a/f1")" OK
check kept/fifo "$(probe_in "$CG" mknod "$W/ws/a/fifo")" OK
test -f "$W/ws/a/f2" && test -p "$W/ws/a/fifo" && test ! -e "$W/ws/a/f1"
check kept/on-disk "$?" 0
# Settled, the next create there goes without the directory's walk (the deadline stays).
memo_settle unwalked "$CG" --dir "$W/ws/a" -- open "$W/ws/a/f4" creat
memo_unwalked unwalked/kept-deadline "$CG" --dir "$W/ws/a" -- open "$W/ws/a/f5" creat
# A denyWrite on a name in the directory: matched from the memo's state, refused.
check name/denied "$(probe_in "$CG" open "$W/ws/a/locked" creat)" EACCES
memo_denied name/event create "$W/ws/a/locked"
check name/fifo-denied "$(probe_in "$CG" mknod "$W/ws/a/locked")" EACCES
# Names loaded from the dentry itself (shorter than its inline store: 32 bytes on 6.1, 40 on 6.12
# and 7.x) and read with a helper past it, matched from the memo's state to the last byte: a name
# with a rule is refused, its twin (the last byte another) allowed, at each length around both.
memo_settle name-length/settled "$CG" --dir "$W/ws/a" -- open "$W/ws/a/f6" creat
for n in $LENS; do
	check "name-length/$n-denied" "$(probe_in "$CG" open "$W/ws/a/$(lname "$n" x)" creat)" EACCES
	check "name-length/$n-twin" "$(probe_in "$CG" open "$W/ws/a/$(lname "$n" y)" creat)" OK
done
memo_denied name-length/event-31 create "$W/ws/a/$(lname 31 x)"
memo_denied name-length/event-41 create "$W/ws/a/$(lname 41 x)"
memo_unwalked name-length/still-unwalked "$CG" --dir "$W/ws/a" -- open "$W/ws/a/f7" creat
# The mandatory set: a name, and the leading part of a pattern, which may only be a directory.
check mandatory/denied "$(probe_in "$CG" open "$W/ws/a/.bashrc" creat)" EACCES
memo_denied mandatory/event create "$W/ws/a/.bashrc"
check mandatory/file-named-git "$(probe_in "$CG" open "$W/ws/a/.git" creat)" EACCES
memo_denied mandatory/git-event create "$W/ws/a/.git"
check mandatory/still-kept "$(sbx-memo --dir "$W/ws/a" | cut -d' ' -f1)" "cgroup=$CGID"
check mandatory/allowed-after "$(probe_in "$CG" open "$W/ws/a/f3" creat)" OK
# A directory denied writing, with one file in it allowed: that file's create keeps a memo whose own
# verdict denies. Another name there misses every rule (the quick way answers for it): the memo's
# verdict must still refuse it, with its event.
check denied-dir/create-allowed "$(probe_in "$CG" open "$W/ro/q/one" creat)" OK
kept denied-dir/memo "$W/ro/q"
check denied-dir/other-denied "$(probe_in "$CG" open "$W/ro/q/two" creat)" EACCES
memo_denied denied-dir/event create "$W/ro/q/two"
check denied-dir/unlink-allowed "$(probe_in "$CG" unlink "$W/ro/q/one")" OK
check denied-dir/on-disk "$(ls "$W/ro/q" | wc -l)" 0

# --- the path changes under it -----------------------------------------------------------------
# The directory moved (outside the sandbox) to where writing is denied.
check moved/create "$(probe_in "$CG" open "$W/ws/b/f" creat)" OK
kept moved/memo "$W/ws/b"
memo_settle moved "$CG" --dir "$W/ws/b" -- open "$W/ws/b/f0" creat
mv "$W/ws/b" "$W/ro/b2"
check moved/denied "$(probe_in "$CG" open "$W/ro/b2/g" creat)" EACCES
memo_in_window moved/in-window
memo_denied moved/event create "$W/ro/b2/g"
check moved/unlink-denied "$(probe_in "$CG" unlink "$W/ro/b2/f")" EACCES
memo_denied moved/unlink-event unlink "$W/ro/b2/f"
# Renamed in place to a denyWrite name: the same parent, another name.
check renamed/create "$(probe_in "$CG" open "$W/ws/c/f" creat)" OK
kept renamed/memo "$W/ws/c"
memo_settle renamed "$CG" --dir "$W/ws/c" -- open "$W/ws/c/f0" creat
mv "$W/ws/c" "$W/ws/shut"
check renamed/denied "$(probe_in "$CG" open "$W/ws/shut/g" creat)" EACCES
memo_in_window renamed/in-window
memo_denied renamed/event create "$W/ws/shut/g"
# A directory above it moved: ws/e/deep's memo, ws/e moved out of ws.
mkdir -p "$W/ws/e/deep"
check above-moved/create "$(probe_in "$CG" open "$W/ws/e/deep/f" creat)" OK
kept above-moved/memo "$W/ws/e/deep"
memo_settle above-moved "$CG" --dir "$W/ws/e/deep" -- open "$W/ws/e/deep/f0" creat
mv "$W/ws/e" "$W/ro/e"
check above-moved/denied "$(probe_in "$CG" open "$W/ro/e/deep/g" creat)" EACCES
memo_in_window above-moved/in-window
memo_denied above-moved/event create "$W/ro/e/deep/g"
# Its file system moved to where writing is denied. Its root, and a directory in it: a memo of a
# mount's root opens with the mount crossing, which no move check lets go unwalked; the other
# opens with its dentry, and only the mount count tells it the mount moved.
mount -t tmpfs dmemo-m1 "$W/ws/m1" && mkdir "$W/ws/m1/in"
check mount-moved/create "$(probe_in "$CG" open "$W/ws/m1/f" creat)" OK
kept mount-moved/memo "$W/ws/m1"
check mount-moved/create-in "$(probe_in "$CG" open "$W/ws/m1/in/f" creat)" OK
kept mount-moved/memo-in "$W/ws/m1/in"
memo_settle mount-moved "$CG" --dir "$W/ws/m1/in" -- open "$W/ws/m1/in/f0" creat
if mount --move "$W/ws/m1" "$W/ro/m1" 2>"$W/move.err"; then
	check mount-moved/denied-in "$(probe_in "$CG" open "$W/ro/m1/in/g" creat)" EACCES
	memo_in_window mount-moved/in-window
	memo_denied mount-moved/event-in create "$W/ro/m1/in/g"
	check mount-moved/denied "$(probe_in "$CG" open "$W/ro/m1/g" creat)" EACCES
	memo_denied mount-moved/event create "$W/ro/m1/g"
	umount "$W/ro/m1"
else
	fail mount-moved/move "$(cat "$W/move.err")"
fi
# The directory bound where writing is denied: the same inode under another mount.
check bind/create "$(probe_in "$CG" open "$W/ws/f/f" creat)" OK
kept bind/memo "$W/ws/f"
memo_settle bind "$CG" --dir "$W/ws/f" -- open "$W/ws/f/f0" creat
mount --bind "$W/ws/f" "$W/ro/b"
check bind/denied "$(probe_in "$CG" open "$W/ro/b/g" creat)" EACCES
memo_in_window bind/in-window
memo_denied bind/event create "$W/ro/b/g"
check bind/first-path-allowed "$(probe_in "$CG" open "$W/ws/f/h" creat)" OK
umount "$W/ro/b"

# --- the sandboxes change --------------------------------------------------------------------
check policy/create "$(probe_in "$CG" open "$W/ws/d/f" creat)" OK
kept policy/memo "$W/ws/d"
sbx-bpf attach "$CG" --policy "$W/p2.json" 2>>"$W/a.err"
check policy/reattach "$?" 0
check policy/denied "$(probe_in "$CG" open "$W/ws/d/g" creat)" EACCES
memo_denied policy/event create "$W/ws/d/g"
# A task of another sandbox, whose policy denies writing where CG's task wrote.
check other/create "$(probe_in "$CG" open "$W/ws/g/f" creat)" OK
kept other/memo "$W/ws/g"
check other/denied "$(probe_in "$CG2" open "$W/ws/g/g" creat)" EACCES
memo_denied other/event create "$W/ws/g/g" "$CG2"
# A sandbox attached above one whose task the memo allowed.
sbx-bpf attach "$TOP/inner" --policy "$W/p.json" 2>>"$W/a.err"
check above/attach-inner "$?" 0
check above/create "$(probe_in "$TOP/inner" open "$W/ws/g/h" creat)" OK
kept above/memo "$W/ws/g" "$TOP/inner"
sbx-bpf attach "$TOP" --policy "$W/pe.json" 2>>"$W/a.err"
check above/attach-top "$?" 0
check above/denied "$(probe_in "$TOP/inner" open "$W/ws/g/i" creat)" EACCES
memo_denied above/event create "$W/ws/g/i" "$TOP/inner"
# Two sandboxes judge each write there now: no memo is kept for such a chain.
check above/nested-allowed "$(probe_in "$TOP/inner" open "$W/ws/a/nested" creat)" OK
check above/no-memo-for-two "$(sbx-memo --dir "$W/ws/a" | cut -d' ' -f1)" "cgroup=$CGID"

# --- never kept for a reported write, nor from a state that expires ---------------------------
sbx-bpf attach "$CGA" --audit --policy "$W/p.json" 2>>"$W/a.err"
check audit/attach "$?" 0
check audit/create "$(probe_in "$CGA" open "$W/ro/g/audited" creat)" OK
check audit/no-memo "$(sbx-memo --dir "$W/ro/g")" none
wait_event audit/event "$W/ev.json" \
	"any(.[]; .op == \"create\" and .path == \"$W/ro/g/audited\" and .verdict == \"audit\" and
	 .cgroup_id == $(stat -c %i "$CGA"))"
sbx-bpf attach "$CGG" --policy "$W/p.json" 2>>"$W/a.err"
check grant/attach "$?" 0
check grant/create-before "$(probe_in "$CGG" open "$W/ws/k/f" creat)" OK
kept grant/memo-before "$W/ws/k" "$CGG"
# A grant of reading on a writable directory: the writes beneath it are the policy's, silent, but
# the state at ws/h/sub's end came through the grant's entry at ws/h, which expires: no memo is
# kept there while it lasts. ws/k's path passes no entry the grant changed, and keeps its own.
mkdir -p "$W/ws/h/sub"
sbx-bpf grant "$CGG" --read "$W/ws/h" --ttl 60s >"$W/g2.out" 2>&1
check grant/read-exit "$?" 0
check grant/create-beneath "$(probe_in "$CGG" open "$W/ws/h/sub/f" creat)" OK
none_holds grant/no-memo-through-expiring "$W/ws/h/sub"
check grant/create-beside "$(probe_in "$CGG" open "$W/ws/k/g" creat)" OK
kept grant/memo-beside "$W/ws/k" "$CGG"
# A write a grant allows is reported, and keeps nothing; revoked, the next one is refused.
sbx-bpf grant "$CGG" --write "$W/ro/g" --ttl 60s >"$W/g.out" 2>&1
check grant/exit "$?" 0
check grant/create "$(probe_in "$CGG" open "$W/ro/g/granted" creat)" OK
check grant/no-memo "$(sbx-memo --dir "$W/ro/g")" none
sbx-bpf revoke "$CGG" --all >"$W/r.out" 2>&1
check grant/revoke "$?" 0
check grant/denied-after-revoke "$(probe_in "$CGG" open "$W/ro/g/late" creat)" EACCES
memo_denied grant/event create "$W/ro/g/late" "$CGG"
# With no grant left, memos are kept again.
check grant/create-after "$(probe_in "$CGG" open "$W/ws/k/h" creat)" OK
kept grant/memo-after "$W/ws/k" "$CGG"

memo_cgroups_end
exit 0
