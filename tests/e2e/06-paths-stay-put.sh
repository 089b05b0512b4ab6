# Rules judge paths, so a sandbox must not be able to give a file another
# path or reach it without one: no mounts, unmounts, pivot_root or user
# namespaces, no detached mount clones, no raw block devices or new device
# nodes, no non-directory at a name leading into a mandatory pattern, no
# chattr/btrfs ioctls where writing is denied. Each as root: errno + event.
# Unmounts, pivot_root and new namespaces need CAP_SYS_ADMIN, which a
# sandbox never has (task.bpf.c): that refusal comes first. The hooks
# behind it are checked in audit mode, where the capability is let through.
. /sbx/tests/e2e/lib.sh

WK=$W/work R=$W/ro
mkdir -p "$WK/mnt" "$WK/new/old" "$R" /root/.ssh "$W/outside-mnt"
echo key >/root/.ssh/id_rsa
echo x >"$R/flags"
echo x >"$WK/flags"
mount -t tmpfs sbx-test "$W/outside-mnt"	# made outside: the sandbox must not unmount it
mknod "$W/blkdev" b 7 0		# a loop device node made outside, opened inside
cat >"$W/p.json" <<EOF
{ "filesystem": { "denyRead": ["/root/.ssh"], "allowWrite": ["$WK"] } }
EOF

cat >"$W/cases" <<EOF
mount-tmpfs EACCES mount -t tmpfs none $WK/mnt
bind-mount-secret EACCES mount --bind /root/.ssh $WK/mnt
umount-outside-mount EACCES umount $W/outside-mnt
userns EACCES unshare -U true
pivot-root EACCES unshare -m --propagation unchanged pivot_root $WK/new $WK/new/old
EOF
cat >"$W/probes" <<EOF
open-tree-clone EPERM open-tree /root/.ssh id_rsa
block-device-read EACCES open $W/blkdev r
mknod-block EACCES mknod-dev $WK/blk b
mknod-char EACCES mknod-dev $WK/chr c
git-file EACCES open $WK/sub/.git creat
claude-symlink EACCES symlink $W/elsewhere $WK/.claude
claude-dir-ok OK mkdir $WK/.claude
git-dir-ok OK mkdir $WK/sub/.git
setflags-denied EACCES setflags $R/flags
EOF

cat >"$W/inside.sh" <<'EOF'
W=$1
mkdir -p "$W/work/sub"
# Commands report through their exit status: 0 = done (the escape worked).
while read -r name want args; do
	set -- $args
	if "$@" 2>/dev/null; then echo "$name OK"; else echo "$name EACCES"; fi
done <"$W/cases"
while read -r name want args; do
	set -- $args
	if [ "$1" = mknod-dev ]; then
		# mknod(2) for a device node, through python: sbx-probe makes FIFOs.
		got=$(python3 -c "
import os, stat, sys
try:
    os.mknod(sys.argv[1], 0o600 | (stat.S_IFBLK if sys.argv[2] == 'b' else stat.S_IFCHR), os.makedev(7, 0)); print('OK')
except PermissionError: print('EACCES')
except OSError as e: print('E%d' % e.errno)" "$2" "$3")
	else
		got=$(sbx-probe "$@" 2>/dev/null)
	fi
	echo "$name $got"
done <"$W/probes"
EOF

cd "$WK"
sbx-bpf run --policy "$W/p.json" --events "$W/ev.json" -- sh "$W/inside.sh" "$W" >"$W/answers" 2>"$W/human"
check run-exit-status "$?" 0
cat "$W/cases" "$W/probes" | while read -r name want args; do
	check "$name" "$(awk -v n="$name" '$1 == n { print $2 }' "$W/answers")" "$want"
done

NS="mandatory: no mounts or user namespaces in a sandbox"
SYS="mandatory: no bpf, kernel loading, perf events, host-administration capabilities or terminal input in a sandbox"
DEV="mandatory: no block devices or new device nodes"
ev() {	# ev NAME OP PATH RULE-TEXT: at least one such event, all denials
	check_json "$1/event" "$W/ev.json" \
		"map(select(.op == \"$2\" and .path == \"$3\")) | length >= 1 and all(.[]; .rule.text == \"$4\" and .errno == 13)"
}
# mount(2) asks the LSM before CAP_SYS_ADMIN; umount and unshare (for pivot_root) ask for the capability first.
ev mount-tmpfs mount "$WK/mnt" "$NS"
check_json capability/event "$W/ev.json" \
	"map(select(.op == \"capability\" and .detail == \"CAP_SYS_ADMIN\")) | length >= 2 and
	 all(.[]; .rule.text == \"$SYS\" and .errno == 1 and .path == null)"
check_json userns/event "$W/ev.json" "map(select(.op == \"userns_create\")) | length >= 1 and .[0].rule.text == \"$NS\""
check_json open-tree-clone/event "$W/ev.json" \
	'any(.[]; .op == "capability" and .detail == "CAP_SYS_ADMIN" and .process.comm == "sbx-probe")'
ev block-device-read read "$W/blkdev" "$DEV"
ev mknod-block create "$WK/blk" "$DEV"
ev mknod-char create "$WK/chr" "$DEV"
check_json git-file/event "$W/ev.json" \
	"map(select(.op == \"create\" and .path == \"$WK/sub/.git\")) | length == 1 and .[0].directory_only"
check_json claude-symlink/event "$W/ev.json" \
	"map(select(.op == \"symlink\" and .path == \"$WK/.claude\")) | length == 1 and .[0].directory_only"
ev setflags-denied ioctl "$R/flags" "default: no allowWrite rule covers it"
mountpoint -q "$W/outside-mnt" && pass outside-mount-still-there || fail outside-mount-still-there gone
[ ! -e "$WK/blk" ] && [ ! -e "$WK/chr" ] && pass no-device-nodes-left || fail no-device-nodes-left exists
grep -q "sbx-bpf: denied create $WK/sub/.git (mandatory: .git/.*; only a directory may have this name)" "$W/human" &&
	pass human-line-directory-only || fail human-line-directory-only "$(grep '\.git' "$W/human")"

# Outside the sandbox the same operations work (the hooks judge only sandboxes).
check outside/mount "$(mount -t tmpfs none "$WK/mnt" && echo OK)" OK
umount "$WK/mnt"
check outside/userns "$(unshare -U true && echo OK)" OK
check outside/setflags "$(sbx-probe setflags "$R/flags")" OK
umount "$W/outside-mnt"

# chroot and a private mount namespace do not change the verdict: the path is
# the file's place in the host's tree.
mkdir -p "$W/jail/bin"
cp /sbx/bin/sbx-probe "$W/jail/bin/"
echo jailed >"$W/jail/secret"
cat >"$W/p2.json" <<EOF2
{ "filesystem": { "denyRead": ["$W/jail/secret", "/root/.ssh"], "allowWrite": ["$WK"] } }
EOF2
out=$(sbx-bpf run --policy "$W/p2.json" --events "$W/ev2.json" -- sh -c "
	chroot $W/jail /bin/sbx-probe open /secret
	chroot $W/jail /bin/sbx-probe open /bin/sbx-probe
	unshare -m true 2>/dev/null && echo UNSHARED || echo REFUSED" 2>/dev/null | tr '\n' ' ')
check chroot-allowed-private-ns-refused "$out" "EACCES OK REFUSED "
check_json chroot/event-host-path "$W/ev2.json" \
	"map(select(.path == \"$W/jail/secret\")) | length == 1 and .[0].rule.text == \"denyRead $W/jail/secret\""
# A private mount namespace made outside (the sandbox cannot) changes nothing either.
out=$(unshare -m --propagation private sh -c "mount -t tmpfs none /mnt &&
	sbx-bpf run --policy '$W/p2.json' --events '$W/ev3.json' -- sbx-probe open /root/.ssh/id_rsa" 2>/dev/null)
check private-mount-ns "$out" EACCES
check_json private-mount-ns/event "$W/ev3.json" \
	'map(select(.path == "/root/.ssh/id_rsa")) | length == 1 and .[0].rule.text == "denyRead /root/.ssh"'

# Audit mode lets the capability through (with an audit event) and so
# reaches the mount hooks, which report what they would have refused.
cat >"$W/audit.json" <<EOF2
{ "mode": "audit", "filesystem": { "allowWrite": ["$WK"] } }
EOF2
sbx-bpf run --policy "$W/audit.json" --events "$W/ev4.json" -- sh -c "
	mount -t tmpfs none $WK/mnt && umount $WK/mnt
	unshare -m --propagation unchanged pivot_root $WK/new $WK/new/old
	sbx-probe open-tree /root/.ssh id_rsa" >/dev/null 2>&1
check_json audit/capability "$W/ev4.json" \
	'any(.[]; .op == "capability" and .verdict == "audit" and .detail == "CAP_SYS_ADMIN" and .errno == 0)'
for op in mount umount pivot_root; do
	check_json "audit/$op" "$W/ev4.json" "any(.[]; .op == \"$op\" and .verdict == \"audit\" and .rule.text == \"$NS\")"
done
# A file read through a detached clone of a mount has no path in the tree: denied (here, audited) as unresolvable.
check_json audit/open-tree-clone "$W/ev4.json" 'any(.[]; .op == "read" and .path_unresolved and .verdict == "audit")'
mountpoint -q "$WK/mnt" && { fail audit/unmounted "still mounted"; umount "$WK/mnt"; } || pass audit/unmounted

# sbx-bpf interrupted: SIGTERM goes to the command; a setsid daemon it left
# is killed with the cgroup; the cgroup and the policy are gone.
sbx-bpf run --name e2e-int --policy "$W/p2.json" -- sh -c \
	"setsid sleep 7771 </dev/null >/dev/null 2>&1 & touch $WK/int-ready; exec sleep 7772" 2>/dev/null &
runpid=$!
wait_for "$WK/int-ready" 300
kill -TERM $runpid
wait $runpid
check interrupted/exit-143 "$?" 143
[ ! -e /sys/fs/cgroup/sbx-bpf/e2e-int ] && pass interrupted/cgroup-removed || fail interrupted/cgroup-removed left
pgrep -f 'sleep 777[12]' >/dev/null && fail interrupted/daemon-killed "$(pgrep -af 'sleep 777')" ||
	pass interrupted/daemon-killed

# A block device behind an open(O_CREAT) (fs.bpf.c, created_now). On a
# disk file system, a name not in the dentry cache gets path_mknod from
# open(O_CREAT) before the lookup finds that it exists (lookup_open,
# may_o_create): path_mknod then allows a regular file in an allowWrite
# directory, and the open that follows is of the existing block device,
# which must still be refused as one. tmpfs keeps every name cached, so
# this takes ext4: the VM's scratch disk (08-limits formats it again).
D=/mnt/e2e-paths
if scratch_disk $D; then
	mkdir -p $D/w $D/ro
	mknod $D/w/blk b 7 0
	mknod $D/ro/blk b 7 0
	echo "{ \"filesystem\": { \"allowWrite\": [\"$D/w\"] } }" >"$W/disk.json"
	sync
	echo 2 >/proc/sys/vm/drop_caches	# the names out of the dentry cache
	out=$(sbx-bpf run --policy "$W/disk.json" --events "$W/ev-disk.json" -- sh -c "
		sbx-probe open $D/w/blk wcreat; sbx-probe open $D/ro/blk wcreat" 2>/dev/null | tr '\n' ' ')
	check uncached-block/denied "$out" "EACCES EACCES "
	# path_mknod ran for the uncached name: where writing is denied, it reported the create it refused.
	check_json uncached-block/mknod-ran "$W/ev-disk.json" \
		"map(select(.path == \"$D/ro/blk\" and .op == \"create\")) | length == 1"
	check_json uncached-block/refused-as-device "$W/ev-disk.json" \
		"map(select(.path == \"$D/w/blk\")) | length == 1 and .[0].op == \"write\" and .[0].rule.text == \"$DEV\""
	umount $D && pass uncached-block/unmounted || fail uncached-block/unmounted "$D still mounted (08-limits formats the disk)"
else
	fail uncached-block/disk "no ext4 scratch disk (/dev/vda): $(cat "$W/err-disk")"
fi
