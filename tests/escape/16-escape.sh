# The adversarial suite (tests/escape/README.md): a root process inside a
# sandbox tries to get out, one vector at a time. For every vector: (a) the
# attempt fails with the errno the hook gives, (b) what it went for is
# unchanged, checked from outside, (c) a violation event names it.
# Vectors run in one `sbx-bpf run` (tests/escape/attacks.sh); a few that
# need the sandbox's own root process, or another policy, get a run each.
. /sbx/tests/e2e/lib.sh
set +e

mkdir -p "$W/secret" "$W/protected" "$W/work" "$W/work/jail" "$W/work/mnt" "$W/sock"
echo SECRET-KEY-MATERIAL >"$W/secret/key"
echo ORIGINAL >"$W/protected/file"
echo ORIGINAL >"$W/protected/inherited"
echo public >"$W/work/pub"
cp /sbx/bin/sbx-probe /sbx/bin/sbx-escape "$W/work/" 2>/dev/null
HOSTNAME0=$(hostname)

# Outside: the "agent" being attacked, fd servers, an upstream DNS.
sbx-escape victim "$W/victim" &
VICTIM_SH=$!
sbx-escape scm-serve "$W/sock/read.sock" "$W/secret/key" r &
SCM1=$!
sbx-escape scm-serve "$W/sock/write.sock" "$W/protected/file" w &
SCM2=$!
dnsmasq --no-resolv --no-hosts --listen-address=127.0.0.1 --bind-interfaces --port=53 \
	--pid-file="$W/dnsmasq.pid" --host-record=short.escape.test,127.0.0.6,2 ||
	fail setup/dnsmasq "dnsmasq did not start"
export SBX_DNS_UPSTREAM=127.0.0.1:53
wait_for "$W/victim" 100 && wait_for "$W/sock/write.sock" 100 || fail setup/helpers "no victim or fd server"
read -r VPID VADDR <"$W/victim"
# The kernel's program count once it holds still (programs of an earlier test are freed lazily).
progs_settled() {
	a=$(sbx-probe bpf-progs)
	for i in $(seq 20); do
		sleep 0.5
		b=$(sbx-probe bpf-progs)
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo "$a"
}
BPF_PROGS0=$(progs_settled)

cat >"$W/p.json" <<EOF
{ "filesystem": { "denyRead": [ "$W/secret" ],
                  "allowWrite": [ "$W/work", "$W/sock", "/dev/null", "/dev/ptmx", "/dev/pts" ] },
  "network": { "allowedDomains": [ "short.escape.test" ], "allowUnixSockets": [ "$W/sock" ] } }
EOF

# fd 3: opened outside for appending to a file the policy does not let the
# sandbox write; fd 4: opened outside for reading a read-denied file.
VPID=$VPID VADDR=$VADDR W=$W sbx-bpf run --name e2e-escape --policy "$W/p.json" --pids 64 \
	--events "$W/ev.json" -- sh /sbx/tests/escape/attacks.sh \
	>"$W/work/answers" 2>"$W/work/human" 3>>"$W/protected/inherited" 4<"$W/secret/key"
check run/exit "$?" 0

# result NAME: what the attack printed inside.
result() { awk -v n="$1" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }' "$W/work/answers"; }
# vec NAME WANT JQ: (a) the answer, (c) an event the filter selects.
vec() {
	check "$1/refused" "$(result "$1")" "$2"
	check_json "$1/event" "$W/ev.json" "any(.[]; .type == \"violation\" and .verdict == \"denied\" and ($3))"
}
S=$W/secret/key
P=$W/protected/file
CAP='.op == "capability" and .detail == '

# --- files: names, links, races, back doors to a path ------------------------------
vec hardlink EACCES ".op == \"link\" and .path == \"$S\""
vec rename-denied-dir EACCES ".op == \"rename\" and .path == \"$W/secret\""
vec rename-parent EACCES ".op == \"rename\" and .path == \"$W\""
vec symlink EACCES ".op == \"read\" and .path == \"$S\" and .process.comm == \"sbx-probe\""
vec symlink-race EACCES ".op == \"read\" and .path == \"$S\" and .process.comm == \"sbx-escape\""
vec proc-self-root EACCES ".op == \"read\" and .path == \"$S\""
vec proc-self-cwd EACCES ".op == \"read\" and .path == \"$S\""
vec opath-reopen EACCES ".op == \"read\" and .path == \"$S\""
vec openat2-every-resolve "EACCES EACCES EACCES EACCES EACCES EACCES" ".op == \"read\" and .path == \"$S\""
vec open-by-handle EACCES ".op == \"read\" and .path == \"$S\""
vec uring-open EACCES ".op == \"read\" and .path == \"$S\""
vec uring-unlink EACCES ".op == \"unlink\" and .path == \"$P\""
vec uring-connect EACCES ".op == \"connect\" and .net.address == \"127.0.0.9\" and .net.port == 9"
vec memfd-exec EACCES ".op == \"read\" and .path == \"$S\" and .process.comm != \"sbx-probe\""
vec chroot-dotdot EACCES ".op == \"read\" and .path == \"$S\""
vec mandatory-by-rename EACCES ".op == \"rename\" and .path2 == \"$W/work/.bashrc\""
vec setxattr EACCES ".op == \"setxattr\" and .path == \"$P\""
[ ! -e "$W/work/k" ] && [ -d "$W/secret" ] && [ -e "$P" ] && [ ! -e "$W/work/.bashrc" ] &&
	pass files/unchanged || fail files/unchanged "$(ls -la "$W" "$W/work")"
check files/secret-intact "$(cat "$S")" SECRET-KEY-MATERIAL
check setxattr/unchanged "$(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' "$P")" "[]"

# --- mounts and namespaces ------------------------------------------------------------
vec bind-mount EACCES ".op == \"mount\" and .path == \"$W/work/mnt\""
vec unshare-mnt EPERM "$CAP\"CAP_SYS_ADMIN\""
vec unshare-user EACCES ".op == \"userns_create\""
vec setns-pidfd EPERM "$CAP\"CAP_SYS_ADMIN\""
vec setns-proc EACCES ".op == \"ptrace\" and .target.pid == $VPID"
mountpoint -q "$W/work/mnt" && fail mounts/unchanged "a mount on $W/work/mnt" || pass mounts/unchanged

# --- cgroups and our own BPF objects --------------------------------------------------
vec cgroup-move EACCES ".op == \"write\" and ((.path // \"\") | endswith(\"cgroup.procs\"))"
vec subtree-control EACCES ".op == \"write\" and ((.path // \"\") | endswith(\"cgroup.subtree_control\"))"
check cgroup-move/still-inside "$(result cgroup-after)" "$(result cgroup-before)"
vec clone3-cgroup EPERM ".op == \"clone_into_cgroup\" and .detail == \"CLONE_INTO_CGROUP\""
grep -q '^child: 0::/$' "$W/work/human" && fail clone3-cgroup/unchanged "a child ran in the root cgroup" ||
	pass clone3-cgroup/unchanged
# 6.1 asks for CAP_BPF (unprivileged_bpf_disabled) before the bpf hook; 6.12 asks the hook first.
BPFCAP="(.op == \"capability\" and .process.comm == \"sbx-escape\" and (.detail == \"CAP_BPF\" or .detail == \"CAP_SYS_ADMIN\"))"
vec bpf-link-detach EPERM "(.op == \"bpf\" and .detail == \"BPF_LINK_GET_NEXT_ID\") or $BPFCAP"
vec bpf-prog-load EPERM "(.op == \"bpf\" and .detail == \"BPF_PROG_LOAD\") or $BPFCAP"
vec bpf-map-create EPERM "(.op == \"bpf\" and .detail == \"BPF_MAP_CREATE\") or $BPFCAP"
vec bpffs-write EACCES "((.path // \"\") | startswith(\"/sys/fs/bpf\"))"
vec securityfs-write EACCES "((.path // \"\") | startswith(\"/sys/kernel/security\"))"
check bpf/still-enforcing "$(result still-enforcing)" EACCES

# --- the agent outside: tracing, memory, signals --------------------------------------
TGT=".target.pid == $VPID"
vec ptrace-attach EPERM ".op == \"ptrace\" and $TGT"
vec ptrace-seize EPERM ".op == \"ptrace\" and $TGT"
vec proc-mem-write EACCES ".op == \"write\" and .path == \"/proc/$VPID/mem\""
vec proc-mem-read EACCES ".op == \"ptrace\" and $TGT"
vec vm-writev EPERM ".op == \"ptrace\" and $TGT"
vec pidfd-getfd EPERM ".op == \"ptrace\" and $TGT"
vec kill-9 EPERM ".op == \"signal\" and $TGT and .detail == \"SIGKILL\""
vec sigstop EPERM ".op == \"signal\" and $TGT and .detail == \"SIGSTOP\""
vec pidfd-kill EPERM ".op == \"signal\" and $TGT and .arg == 9"
vec sigio-owner EPERM ".op == \"signal\" and .detail == \"F_SETOWN\""
vec fiosetown EPERM ".op == \"signal\" and .detail == \"FIOSETOWN\""
vec renice EPERM ".op == \"sched\" and $TGT"
vec prlimit EPERM ".op == \"sched\" and $TGT"
sleep 0.2
check victim/memory-intact "$(cat "$W/victim.state")" INTACT
check victim/no-signal "$(cat "$W/victim.sig" 2>/dev/null)" ""
state=$(awk '{ print $3 }' /proc/"$VPID"/stat 2>/dev/null)
case $state in S | R) pass victim/alive-not-stopped ;; *) fail victim/alive-not-stopped "state '$state'" ;; esac
check control/kill-own-child "$(result control-kill-own-child)" OK	# inside the sandbox, signals work

# --- the kernel: modules, kexec, perf, capabilities, its own files ---------------------
# L2TP over IP (protocol 115) is a module: the kernel asks for it on the task's behalf, and may not.
case $(result module-autoload) in OK | none) fail module-autoload/refused "got '$(result module-autoload)'" ;;
*) pass module-autoload/refused ;; esac
check_json module-autoload/event "$W/ev.json" \
	'any(.[]; .op == "kernel_load" and .errno == 1 and (.detail | startswith("module request net-pf-2-proto-115")))'
lsmod 2>/dev/null | grep -q '^l2tp_ip ' && fail module-autoload/not-loaded "l2tp_ip is loaded" ||
	pass module-autoload/not-loaded
vec init-module EPERM "$CAP\"CAP_SYS_MODULE\""
vec finit-module EPERM "$CAP\"CAP_SYS_MODULE\""
vec kexec-load EPERM "$CAP\"CAP_SYS_BOOT\""
# Debian's perf_event_paranoid=3 asks for CAP_SYS_ADMIN before the LSM hook: either refuses.
vec perf-open EACCES ".op == \"perf_event_open\" or ($CAP\"CAP_SYS_ADMIN\" and .process.comm == \"sbx-escape\")"
vec sethostname EPERM "$CAP\"CAP_SYS_ADMIN\""
vec settime EPERM "$CAP\"CAP_SYS_TIME\""
vec sched-fifo EPERM "$CAP\"CAP_SYS_NICE\""
vec reboot EPERM "$CAP\"CAP_SYS_BOOT\""
vec proc-sys-write EACCES ".op == \"write\" and .path == \"/proc/sys/kernel/hostname\""
vec sys-write EACCES ".op == \"write\" and ((.path // \"\") | endswith(\"/net/lo/mtu\"))"
vec dev-mem EACCES ".op == \"read\" and .path == \"/dev/mem\""
vec tiocsti EPERM ".op == \"tty_input\" and .detail == \"TIOCSTI\""
check kernel/hostname-unchanged "$(hostname)" "$HOSTNAME0"
check bpf/no-new-programs "$(progs_settled)" "$BPF_PROGS0"

# --- descriptors from outside ------------------------------------------------------------
vec inherited-write EACCES ".op == \"write\" and .path == \"$W/protected/inherited\" and .descriptor == \"use\""
vec inherited-truncate EACCES ".op == \"truncate\" and .path == \"$W/protected/inherited\""
vec inherited-read EACCES ".op == \"read\" and .path == \"$S\" and .descriptor == \"use\""
vec scm-splice CTRUNC ".op == \"read\" and .path == \"$S\" and .descriptor == \"received\""
vec scm-sendfile CTRUNC ".op == \"read\" and .path == \"$S\" and .descriptor == \"received\""
vec scm-write CTRUNC ".op == \"write\" and .path == \"$P\" and .descriptor == \"received\""
check descriptors/inherited-unchanged "$(cat "$W/protected/inherited")" ORIGINAL
check descriptors/file-unchanged "$(cat "$P")" ORIGINAL

# --- network ---------------------------------------------------------------------------
vec tcp-fastopen EACCES ".op == \"sendto\" and .net.address == \"127.0.0.9\""
vec udp-unconnected EACCES ".op == \"sendto\" and .net.address == \"127.0.0.9\" and .net.port == 54 and .net.protocol == \"udp\""
check stale-dns/fresh "$(result stale-dns-fresh)" ECONNREFUSED
vec stale-dns EACCES ".op == \"connect\" and .net.address == \"127.0.0.6\" and (.rule.text | test(\"expired\"))"

# --- limits --------------------------------------------------------------------------------
check fork-bomb/refused "$(result fork-bomb)" EAGAIN
check_json fork-bomb/event "$W/ev.json" 'any(.[]; .type == "lifecycle" and .event == "pids_max")'

# --- the sandbox's root process: its parent is outside -------------------------------------
out=$(sbx-bpf run --name e2e-escape-root --policy "$W/p.json" --events "$W/ev-root.json" -- \
	sbx-escape traceme-self 2>/dev/null)
check traceme/refused "$out" EPERM
check_json traceme/event "$W/ev-root.json" \
	'any(.[]; .op == "ptrace" and .verdict == "denied" and .detail == "traceme" and .target.comm == "sbx-bpf")'
# The same attacks from outside any sandbox work: the hooks judge only sandboxes.
check outside/ptrace "$(sbx-escape proc-mem-read "$VPID" "$VADDR")" OK
check outside/bpf "$(sbx-escape bpf-map-create)" OK
check outside/kill-usr1 "$(sbx-escape kill "$VPID" USR1)" OK
sleep 0.3
check outside/victim-got-usr1 "$(cat "$W/victim.sig" 2>/dev/null)" SIGUSR1

kill "$VICTIM_SH" "$SCM1" "$SCM2" "$(cat "$W/dnsmasq.pid")" 2>/dev/null
wait 2>/dev/null
rm -rf "$W"
