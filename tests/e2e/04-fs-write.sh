# Every rule kind and every mutation, as root inside one sandbox: each case
# checks the errno the probe got and, for a denial, the event (op, path(s),
# rule text, errno); for an allowed case, that no event names its path.
# Then the same mutations from outside while the sandbox is live, audit mode,
# and daemonised descendants.
. /sbx/tests/e2e/lib.sh

R=$W/ro		# readable, not writable
WK=$W/work	# allowWrite; the sandbox's working directory
H=$W/home
mkdir -p "$R/dir" "$R/xattr" "$WK/private/pub/hidden" "$WK/locked/scratch" "$WK/outer/secretdir" \
	"$WK/rmme" "$WK/repo/.git/hooks" "$H/.ssh"
echo key >"$H/.ssh/id_rsa"
echo secret >"$WK/private/secret"
echo pub >"$WK/private/pub/readme"
echo hidden >"$WK/private/pub/hidden/x"
echo s >"$WK/outer/secretdir/s"
echo '[core]' >"$WK/repo/.git/config"
ln -s "$H/.ssh" "$W/sym"
for f in w a rw trunc rtrunc truncate ftruncate reopen unlink chmod chown utimes setxattr \
	removexattr rename-src link-src inherited; do
	echo "content-$f" >"$R/$f"
done
for f in file chmod utimes setxattr unlink rename-a; do echo x >"$WK/$f"; done
echo x >"$WK/locked/f"
echo x >"$WK/locked/g"
sbx-probe setxattr "$R/removexattr" system.posix_acl_access acl:644 >/dev/null

cat >"$W/policy.json" <<EOF
{
  "filesystem": {
    "denyRead": ["$H/.ssh", "$WK/private", "$WK/private/pub/hidden", "$WK/outer/secretdir"],
    "allowRead": ["$WK/private/pub"],
    "allowWrite": ["$WK", "/dev/null"],
    "denyWrite": ["$WK/locked"]
  }
}
EOF
# --allow-write on the command line adds to the file's rules.
EXTRA="--allow-write $WK/locked/scratch"

# The cases: NAME WANT probe-arguments. Run inside the sandbox by cases.sh.
cat >"$W/cases" <<EOF
read-denied EACCES open $H/.ssh/id_rsa
read-other-ok OK open $R/w
read-nested-allow-ok OK open $WK/private/pub/readme
read-nested-deny EACCES open $WK/private/secret
read-re-denied EACCES open $WK/private/pub/hidden/x
read-via-symlink EACCES open $W/sym/id_rsa
read-via-proc-root EACCES open /proc/self/root$H/.ssh/id_rsa
openat2-beneath EACCES openat2 $H .ssh/id_rsa beneath
openat2-in-root EACCES openat2 $H/.ssh /id_rsa in_root
openat2-no-symlinks EACCES openat2 $H .ssh/id_rsa no_symlinks,no_magiclinks,no_xdev
uring-read-denied EACCES uring-open $H/.ssh/id_rsa r
uring-create-denied EACCES uring-open $R/uring-new creat
uring-create-ok OK uring-open $WK/uring-new creat
write-ok OK open $WK/file w
write-denied EACCES open $R/w w
append-denied EACCES open $R/a a
rdwr-denied EACCES open $R/rw rw
write-deny-nested EACCES open $WK/locked/f w
write-re-allowed OK open $WK/locked/scratch/new creat
create-denied EACCES open $R/created creat
create-ok OK open $WK/created creat
create-rdwr-read-denied EACCES open $WK/private/rwnew rwcreat
create-then-open-other EACCES creat-open $WK/cnew $WK/locked/g
open-trunc-denied EACCES open $R/trunc trunc
open-rdonly-trunc-denied EACCES open $R/rtrunc rtrunc
truncate-denied EACCES truncate $R/truncate
truncate-ok OK truncate $WK/file
ftruncate-inherited-denied EACCES ftruncate 3
reopen-inherited-for-write EACCES reopen 4 w
mkdir-denied EACCES mkdir $R/newdir
mkdir-ok OK mkdir $WK/newdir
rmdir-denied EACCES rmdir $R/dir
rmdir-ok OK rmdir $WK/rmme
unlink-denied EACCES unlink $R/unlink
unlink-ok OK unlink $WK/unlink
mknod-denied EACCES mknod $R/fifo
rename-into-ro-denied EACCES rename $WK/rename-a $R/rename-dst
rename-out-of-ro-denied EACCES rename $R/rename-src $WK/stolen
rename-ok OK rename $WK/rename-a $WK/rename-b
rename-denied-dir EACCES rename $WK/private $WK/public
rename-parent-of-denied EACCES rename $WK/outer $WK/outer2
link-read-denied EACCES link $WK/private/secret $WK/leak
link-from-ro-denied EACCES link $R/link-src $WK/link-dst
symlink-into-denied-ok OK symlink $H/.ssh/id_rsa $WK/lnk
read-through-new-symlink EACCES open $WK/lnk
symlink-denied EACCES symlink /etc/passwd $R/lnk
chmod-denied EACCES chmod $R/chmod 600
chmod-ok OK chmod $WK/chmod 600
chown-denied EACCES chown $R/chown 1 1
utimes-denied EACCES utimes $R/utimes
utimes-ok OK utimes $WK/utimes
setxattr-denied EACCES setxattr $R/setxattr system.posix_acl_access acl:640
setxattr-ok OK setxattr $WK/setxattr system.posix_acl_access acl:640
removexattr-denied EACCES removexattr $R/removexattr system.posix_acl_access
trusted-xattr-needs-admin EPERM setxattr $WK/setxattr trusted.sbx v
mandatory-hooks-deep EACCES mkdir $WK/a/b/c/d/e/.git/hooks
mandatory-hook-file EACCES open $WK/repo/.git/hooks/post-checkout creat
mandatory-bashrc EACCES open $WK/.bashrc creat
mandatory-git-config EACCES open $WK/repo/.git/config w
mandatory-rename-onto EACCES rename $WK/file $WK/.profile
rename-git-dir EACCES rename $WK/repo/.git $WK/repo/g2
cgroup-procs EACCES open /sys/fs/cgroup/cgroup.procs w
cgroup-mkdir EACCES mkdir /sys/fs/cgroup/escape
bpffs-create EACCES open /sys/fs/bpf/x creat
dev-null-ok OK open /dev/null w
stdout-pipe-ok OK open /proc/self/fd/1 w
EOF

cat >"$W/cases.sh" <<'EOF'
# Runs inside the sandbox: one probe per case, "NAME ANSWER" lines.
W=$1
mkdir -p a/b/c/d/e/.git
while read -r name want args; do
	set -- $args
	if [ "$name" = stdout-pipe-ok ]; then
		got=$(sbx-probe "$@" | cat)
	else
		got=$(sbx-probe "$@" 2>/dev/null)
	fi
	echo "$name $got"
done <"$W/cases" >"$W/work/answers"
# Relative path after chdir.
cd "$W/home" && echo "relative-after-chdir $(sbx-probe open .ssh/id_rsa 2>/dev/null)" >>"$W/work/answers"
EOF

cd "$WK"
sbx-bpf run --name e2e-write --policy "$W/policy.json" $EXTRA --events "$W/ev.json" -- \
	sh "$W/cases.sh" "$W" 3<>"$R/ftruncate" 4<"$R/reopen" 2>"$W/human"
rc=$?
[ $rc = 0 ] && pass run-exit-status || fail run-exit-status "exit $rc: $(grep -v 'sbx-bpf: denied' "$W/human" | head -5)"
echo "relative-after-chdir EACCES" >>"$W/cases"

while read -r name want args; do
	got=$(awk -v n="$name" '$1 == n { print $2 }' "$WK/answers")
	check "$name" "$got" "$want"
done <"$W/cases"

# ev NAME OP PATH RULE-TEXT [PATH2]: exactly one event for OP on PATH, with that rule.
ev() {
	if [ -n "${5:-}" ]; then p2=" and .path2 == \"$5\""; else p2=""; fi
	check_json "$1/event" "$W/ev.json" \
		"map(select(.op == \"$2\" and .path == \"$3\"$p2)) | length == 1 and .[0].rule.text == \"$4\" and .[0].errno == 13 and .[0].verdict == \"denied\""
}
# none NAME PATH: no event names PATH.
none() { check_json "$1/no-event" "$W/ev.json" "map(select(.path == \"$2\" or .path2 == \"$2\")) | length == 0"; }

DEF="default: no allowWrite rule covers it"
# Nine routes lead to id_rsa (direct, symlinks, /proc/self/root, openat2,
# io_uring, relative): one event each, all naming the real path and rule.
check_json read-denied/one-event-per-route "$W/ev.json" \
	"map(select(.op == \"read\" and .path == \"$H/.ssh/id_rsa\")) | length == 9 and all(.[]; .rule.text == \"denyRead $H/.ssh\")"
none read-nested-allow-ok "$WK/private/pub/readme"
ev read-nested-deny read "$WK/private/secret" "denyRead $WK/private"
ev read-re-denied read "$WK/private/pub/hidden/x" "denyRead $WK/private/pub/hidden"
check_json uring/event-from-io-worker "$W/ev.json" \
	"map(select(.op == \"create\" and .path == \"$R/uring-new\")) | length == 1"
ev write-denied write "$R/w" "$DEF"
ev append-denied write "$R/a" "$DEF"
ev rdwr-denied write "$R/rw" "$DEF"
ev write-deny-nested write "$WK/locked/f" "denyWrite $WK/locked"
none write-re-allowed "$WK/locked/scratch/new"
ev create-denied create "$R/created" "$DEF"
[ ! -e "$R/created" ] && pass create-denied/no-file-left || fail create-denied/no-file-left "exists"
[ -e "$WK/created" ] && pass create-ok/file-exists || fail create-ok/file-exists "missing"
none create-ok "$WK/created"
# An open that creates its file is judged at path_mknod; the open itself
# only when it asks for more than that (O_RDWR: the read) or names another file.
ev create-rdwr-read-denied read "$WK/private/rwnew" "denyRead $WK/private"
none create-then-open-other "$WK/cnew"
ev create-then-open-other write "$WK/locked/g" "denyWrite $WK/locked"
check create-then-open-other/content-kept "$(cat "$WK/locked/g")" x
check open-rdonly-trunc/content-kept "$(cat "$R/rtrunc")" content-rtrunc
ev truncate-denied truncate "$R/truncate" "$DEF"
check truncate-denied/content-kept "$(cat "$R/truncate")" content-truncate
ev ftruncate-inherited-denied truncate "$R/ftruncate" "$DEF"
check ftruncate-inherited/content-kept "$(cat "$R/ftruncate")" content-ftruncate
ev reopen-inherited-for-write write "$R/reopen" "$DEF"
ev mkdir-denied mkdir "$R/newdir" "$DEF"
ev rmdir-denied rmdir "$R/dir" "$DEF"
ev unlink-denied unlink "$R/unlink" "$DEF"
[ -e "$R/unlink" ] && pass unlink-denied/file-kept || fail unlink-denied/file-kept gone
ev mknod-denied create "$R/fifo" "$DEF"
ev rename-into-ro-denied rename "$WK/rename-a" "$DEF" "$R/rename-dst"
ev rename-out-of-ro-denied rename "$R/rename-src" "$DEF" "$WK/stolen"
ev rename-denied-dir rename "$WK/private" "denyRead $WK/private" "$WK/public"
[ -e "$WK/private/secret" ] && pass rename-denied-dir/kept || fail rename-denied-dir/kept moved
check_json rename-parent-of-denied/event "$W/ev.json" \
	"map(select(.op == \"rename\" and .path == \"$WK/outer\" and .path2 == \"$WK/outer2\")) | length == 1 and .[0].moves_between_rules and .[0].rule.text == \"denyRead $WK/outer/secretdir\""
ev link-read-denied link "$WK/private/secret" "denyRead $WK/private" "$WK/leak"
[ ! -e "$WK/leak" ] && pass link-read-denied/no-name || fail link-read-denied/no-name "exists"
ev link-from-ro-denied link "$R/link-src" "$DEF" "$WK/link-dst"
ev symlink-denied symlink "$R/lnk" "$DEF"
ev chmod-denied chmod "$R/chmod" "$DEF"
ev chown-denied chown "$R/chown" "$DEF"
ev utimes-denied utimes "$R/utimes" "$DEF"
ev setxattr-denied setxattr "$R/setxattr" "$DEF"
ev removexattr-denied removexattr "$R/removexattr" "$DEF"
none chmod-ok "$WK/chmod"
none utimes-ok "$WK/utimes"
none setxattr-ok "$WK/setxattr"
ev mandatory-hooks-deep mkdir "$WK/a/b/c/d/e/.git/hooks" "mandatory: .git/hooks"
ev mandatory-hook-file create "$WK/repo/.git/hooks/post-checkout" "mandatory: .git/hooks"
[ ! -e "$WK/repo/.git/hooks/post-checkout" ] && pass mandatory-hook-file/no-file-left ||
	fail mandatory-hook-file/no-file-left exists
ev mandatory-bashrc create "$WK/.bashrc" "mandatory: .bashrc"
ev mandatory-git-config write "$WK/repo/.git/config" "mandatory: .git/config"
ev mandatory-rename-onto rename "$WK/file" "mandatory: .profile" "$WK/.profile"
check_json rename-git-dir/event "$W/ev.json" \
	"map(select(.op == \"rename\" and .path == \"$WK/repo/.git\")) | length == 1 and .[0].moves_between_rules"
ev cgroup-procs write /sys/fs/cgroup/cgroup.procs "mandatory: cgroup, bpf and security file systems"
ev cgroup-mkdir mkdir /sys/fs/cgroup/escape "mandatory: cgroup, bpf and security file systems"
ev bpffs-create create /sys/fs/bpf/x "mandatory: cgroup, bpf and security file systems"
grep -q "sbx-bpf: denied write $WK/repo/.git/config (mandatory: .git/config) pid [0-9]* sbx-probe" "$W/human" &&
	pass human-line-mandatory || fail human-line-mandatory "$(grep git/config "$W/human")"
grep -q "sbx-bpf: denied rename $WK/private -> $WK/public (denyRead $WK/private) pid" "$W/human" &&
	pass human-line-two-paths || fail human-line-two-paths "$(grep rename "$W/human" | head -3)"
check_json every-event-is-a-denial "$W/ev.json" \
	'all(.[]; .verdict == "denied" and .errno == (if .op == "capability" then 1 else 13 end) and
	 .schema == "sbx-bpf.event/3" and .sandbox == "e2e-write")'
# trusted.* needs CAP_SYS_ADMIN, which no sandbox has: refused before the path is judged.
check_json trusted-xattr-needs-admin/event "$W/ev.json" \
	'map(select(.op == "capability")) | length == 1 and .[0].detail == "CAP_SYS_ADMIN" and .[0].process.comm == "sbx-probe"'

# Outside the sandbox, while it is live: the same mutations succeed.
rm -f "$WK/ready" "$W/go"
sbx-bpf run --name e2e-live-w --policy "$W/policy.json" --events "$W/ev-live.json" -- \
	sh -c "sbx-probe open $R/w w >$WK/inside; touch $WK/ready; while [ ! -e $W/go ]; do sleep 0.1; done" \
	2>/dev/null &
runpid=$!
if wait_for "$WK/ready" 300; then
	check outside/write "$(sbx-probe open "$R/w" w)" OK
	check outside/create "$(sbx-probe open "$R/outside-new" creat)" OK
	check outside/mkdir "$(sbx-probe mkdir "$R/outside-dir")" OK
	check outside/rename "$(sbx-probe rename "$R/outside-new" "$R/outside-renamed")" OK
	check outside/chmod "$(sbx-probe chmod "$R/chmod" 600)" OK
	check outside/unlink "$(sbx-probe unlink "$R/outside-renamed")" OK
	check outside/read-denied-file "$(sbx-probe open "$H/.ssh/id_rsa")" OK
	check outside/bashrc "$(sbx-probe open "$W/.bashrc" creat)" OK
else
	fail outside/write "sandbox did not get ready"
fi
touch "$W/go"
wait $runpid
check outside/inside-still-denied "$(cat "$WK/inside")" EACCES
check_json outside/only-inside-reported "$W/ev-live.json" "length == 1 and .[0].path == \"$R/w\""

# Daemonised descendants (setsid + double fork) stay confined.
sbx-bpf run --policy "$W/policy.json" --events "$W/ev-daemon.json" -- sh -c "
	setsid sh -c '(sbx-probe open $R/w w >$WK/daemon.out 2>/dev/null &)' </dev/null
	i=0; while [ ! -s $WK/daemon.out ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done" 2>/dev/null
check daemon/denied "$(cat "$WK/daemon.out" 2>/dev/null)" EACCES
check_json daemon/event "$W/ev-daemon.json" "length == 1 and .[0].op == \"write\" and .[0].path == \"$R/w\""

# Audit mode from the policy file: everything allowed, everything reported.
sed 's/^{/{ "mode": "audit",/' "$W/policy.json" >"$W/audit.json"
out=$(sbx-bpf run --policy "$W/audit.json" --events "$W/ev-audit.json" -- sh -c "
	sbx-probe open $R/w w; sbx-probe mkdir $R/audit-dir; sbx-probe open $H/.ssh/id_rsa;
	sbx-probe open $R/audit-new creat; sbx-probe utimes $R/utimes" 2>/dev/null | tr '\n' ' ')
check audit/allows "$out" "OK OK OK OK OK "
[ -d "$R/audit-dir" ] && pass audit/mkdir-happened || fail audit/mkdir-happened missing
# A create reports its path_mknod and its open: the audit record of one does not stand for the other.
check_json audit/events "$W/ev-audit.json" \
	'length == 6 and all(.[]; .verdict == "audit" and .errno == 0) and ([.[].op] | sort) == ["create", "mkdir", "read", "utimes", "write", "write"]'

# A write whose path is too long to resolve is denied, with an event saying so.
python3 - "$WK" <<'PY'
import os, sys
os.chdir(sys.argv[1])
for i in range(45):
    os.mkdir("d" * 100); os.chdir("d" * 100)
PY
cat >"$W/deep-write.py" <<PY
import os
os.chdir("$WK")
for i in range(45): os.chdir("d" * 100)
try:
    open("new-file", "w").write("x"); print("OK")
except PermissionError: print("EACCES")
PY
out=$(sbx-bpf run --policy "$W/policy.json" --events "$W/ev-long.json" -- python3 "$W/deep-write.py" 2>/dev/null)
check long-path-write-denied "$out" EACCES
check_json long-path-write-event "$W/ev-long.json" \
	'map(select(.path_unresolved)) | length >= 1 and .[0].op == "create" and .[0].rule.id == null'
