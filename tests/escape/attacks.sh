# Run inside the sandbox, as root, by 16-escape.sh: every attack once, one
# line "NAME RESULT" each on stdout (the last line the attack printed: OK,
# an errno name, CTRUNC…). $W, $VPID (the victim outside) and $VADDR (the
# address of its "INTACT" buffer) come from the environment; fd 3 and 4 are
# inherited from outside (see 16-escape.sh).
S=$W/secret/key
P=$W/protected/file
a() {
	n=$1
	shift
	r=$("$@" 2>/dev/null | tail -n 1)
	echo "$n ${r:-none}"
}

# Files: names, links, races, back doors to a path.
a hardlink sbx-probe link "$S" "$W/work/k"
a rename-denied-dir sbx-probe rename "$W/secret" "$W/work/s"
a rename-parent sbx-probe rename "$W" "$W.moved"
ln -s "$S" "$W/work/ln"
a symlink sbx-probe open "$W/work/ln"
a symlink-race sbx-escape symlink-race "$W/work/race" "$W/work/pub" "$S" 3
a proc-self-root sbx-probe open "/proc/self/root$S"
a proc-self-cwd sh -c "cd '$W/secret' && sbx-probe open /proc/self/cwd/key"
a opath-reopen sbx-escape opath-reopen "$S" r
echo "openat2-every-resolve $(for f in beneath in_root no_symlinks no_magiclinks no_xdev none; do
	sbx-probe openat2 "$W" secret/key "$f" r 2>/dev/null; done | tr '\n' ' ')"
a open-by-handle sbx-escape open-by-handle "$S" "$W/work"
a uring-open sbx-escape uring-open "$S" r
a uring-unlink sbx-escape uring-unlink "$P"
a uring-connect sbx-escape uring-connect 127.0.0.9 9
a memfd-exec sbx-escape memfd-exec /sbx/bin/sbx-probe open "$S"
a chroot-dotdot sbx-escape chroot-escape "$W/work/jail" "$S"
: >"$W/work/evil"
a mandatory-by-rename sbx-probe rename "$W/work/evil" "$W/work/.bashrc"
a setxattr sbx-probe setxattr "$P" user.x 1

# Mounts and namespaces.
a bind-mount sbx-escape bind-mount "$W/secret" "$W/work/mnt"
a unshare-mnt sbx-escape unshare mnt
a unshare-user sbx-escape unshare user
a setns-pidfd sbx-escape setns-pidfd "$VPID" mnt
a setns-proc sbx-escape setns-proc "$VPID" mnt

# Cgroups and our own BPF objects.
a cgroup-before cat /proc/self/cgroup
a cgroup-move sbx-escape cgroup-move /sys/fs/cgroup
a cgroup-after cat /proc/self/cgroup
a clone3-cgroup sbx-escape clone3-cgroup /sys/fs/cgroup
a subtree-control sbx-escape write-file /sys/fs/cgroup/cgroup.subtree_control -memory
a bpf-link-detach sbx-escape bpf-link-detach
a bpf-prog-load sbx-escape bpf-prog-load
a bpf-map-create sbx-escape bpf-map-create
a bpffs-write sbx-probe open /sys/fs/bpf/evil creat
a securityfs-write sbx-escape write-file /sys/kernel/security/lsm x
a still-enforcing sbx-probe open "$S"

# The agent outside: tracing, memory, signals, scheduling.
a ptrace-attach sbx-escape ptrace-attach "$VPID"
a ptrace-seize sbx-escape ptrace-seize "$VPID"
a proc-mem-write sbx-escape proc-mem-write "$VPID" "$VADDR" PWNED
a proc-mem-read sbx-escape proc-mem-read "$VPID" "$VADDR"
a vm-writev sbx-escape vm-writev "$VPID" "$VADDR" PWNED
a pidfd-getfd sbx-escape pidfd-getfd "$VPID" 0
a kill-9 sbx-escape kill "$VPID" KILL
a sigstop sbx-escape kill "$VPID" STOP
a pidfd-kill sbx-escape pidfd-kill "$VPID" KILL
a sigio-owner sbx-escape sigio "$VPID" 9
a fiosetown sbx-escape fiosetown "$VPID"
a renice sbx-escape renice "$VPID"
a prlimit sbx-escape prlimit "$VPID"
a control-kill-own-child sh -c 'sleep 30 & p=$!; sbx-escape kill $p KILL'

# The kernel: modules, kexec, perf, capabilities, its own files, terminals.
a module-autoload sbx-escape socket-proto 115 dgram
a init-module sbx-escape init-module
a finit-module sbx-escape finit-module /sbx/bin/sbx-probe
a kexec-load sbx-escape kexec-load
a perf-open sbx-escape perf-open
a sethostname sbx-escape sethostname evil
a settime sbx-escape settime
a sched-fifo sbx-escape sched-fifo
a reboot sbx-escape reboot
a proc-sys-write sbx-escape write-file /proc/sys/kernel/hostname evil
a sys-write sbx-escape write-file /sys/class/net/lo/mtu 65536
a dev-mem sbx-escape dev-mem
a tiocsti sbx-escape tiocsti

# Descriptors from outside.
a inherited-write sbx-escape fd-write 3
a inherited-truncate sbx-probe ftruncate 3
a inherited-read sbx-escape fd-read 4
a scm-splice sbx-escape scm-recv "$W/sock/read.sock" splice
a scm-sendfile sbx-escape scm-recv "$W/sock/read.sock" sendfile
a scm-write sbx-escape scm-recv "$W/sock/write.sock" write

# Network: denied addresses by other routes, and a DNS answer gone stale.
a tcp-fastopen sbx-probe tfo 127.0.0.9 80
a udp-unconnected sbx-probe sendto 127.0.0.9 54
ip=$(getent hosts short.escape.test | awk '{ print $1 }')
a stale-dns-fresh sbx-probe connect "${ip:-none}" 7
sleep 4
a stale-dns sbx-probe connect "${ip:-none}" 7

# Limits: a fork bomb under --pids.
a fork-bomb sbx-probe forks 200
