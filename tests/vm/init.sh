#!/bin/sh
# PID 1 of the test VM (rdinit=/sbx/init): mount what a real host has, then
# run the e2e suite, the demo, the benchmark or a shell, and power off.
# Results go to the second serial port (ttyS1), read by scripts/vm.sh on the host.
export PATH=/sbx/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
# The benchmarks run bwrap, which pivot_root()s; the kernel refuses that when
# the root is the initramfs itself (rootfs has no parent mount). Make the
# root a bind mount of it first, as switch_root does, and start again there.
# If that fails, the benchmarks say bwrap does not run and leave it out.
# (/proc for mount(8); the one mounted here stays hidden under the new root.)
if [ -z "$SBX_ROOT_MOVED" ] && grep -q '^SBX_MODE=bench$' /sbx/config; then
	mount -t proc proc /proc
	mkdir -p /.root && mount --bind / /.root && cd /.root && mount --move . / &&
		SBX_ROOT_MOVED=1 exec chroot . /sbx/init
	cd / && umount /proc
fi
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# The first cpu.max quota flips the kernel's CFS-bandwidth static key, patching
# code (int3) that other vCPUs may be running; under TCG that race once
# crashed the guest in enqueue_task_fair mid-suite. Flip it once, here, idle,
# with a quota no test reaches (100 CPUs), in a cgroup that stays empty.
echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null &&
	mkdir -p /sys/fs/cgroup/vm-static-keys &&
	echo "10000000 100000" >/sys/fs/cgroup/vm-static-keys/cpu.max
mount -t bpf bpf /sys/fs/bpf
mount -t securityfs securityfs /sys/kernel/security
hostname sbx-vm
ip link set lo up
# The same for the networking stack's once-per-boot hash secrets
# (net_get_random_once: inet/inet6 ehash, udp): the first TCP and UDP
# packet over IPv4 and IPv6 flips their static keys, which under TCG once
# crashed 6.12 in inet6_ehashfn mid-suite. Send them now, idle.
for a in 127.0.0.1 ::1; do
	/sbx/bin/sbx-probe connect "$a" 1 >/dev/null 2>&1
	/sbx/bin/sbx-probe sendto "$a" 9 >/dev/null 2>&1
done
sleep 0.2
. /sbx/config
export SBX_RESULTS=/dev/ttyS1 SBX_TEST_TIMEOUT

# Up to 120 s for the children that hold a finished run's own links until
# they go to be gone: a file that counts the kernel's programs must not
# count theirs (wait_unloads).
. /sbx/tests/vm/unloads.sh

# One test file, its result lines and its time to the results port.
run_one() {
	t=$1 name=$(basename "$1" .sh)
	log=/tmp/$name.results
	: >"$log"
	echo "== $name ($2 programs)" >/dev/console
	wait_unloads 1200 || echo "FAIL vm/unload-before-$name: an unload child is still there after 120 s" >"$SBX_RESULTS"
	t0=$(date +%s)
	SBX_RESULT_LOG=$log SBX_TEST=$name SBX_PROGRAMS=$2 timeout -k 5 "$SBX_TEST_TIMEOUT" sh "$t" \
		>/tmp/$name.out 2>&1
	rc=$?
	echo "INFO $name/took $(($(date +%s) - t0)) s (guest clock)" >>"$log"
	cat "$log" >"$SBX_RESULTS"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "FAIL $name/timeout (killed after ${SBX_TEST_TIMEOUT}s)" >"$SBX_RESULTS"
	elif [ $rc -ne 0 ] && ! grep -q '^FAIL' "$log"; then
		echo "FAIL $name/exit (script exited $rc)" >"$SBX_RESULTS"
	fi
	if [ $rc -ne 0 ]; then
		sed 's/^/    | /' "/tmp/$name.out" | tail -40 >"$SBX_RESULTS"
	fi
}

# The programs most files share: loaded and pinned once per boot by a
# daemon that runs while they do (their `run`s then load nothing and get
# their events through it). A set that does not load fails loudly, here and
# in every file that needed it (lib.sh checks the pin).
SHARED_PID=
# $1: "load" the first time (the set is loaded and pinned), "adopt" after a
# file that ran its own daemon on the pinned set (nothing loads).
shared_start() {
	t0=$(date +%s)
	sbx-bpf daemon --events /tmp/shared-daemon.jsonl 2>>/tmp/shared-daemon.err &
	SHARED_PID=$!
	i=0
	while [ ! -S /run/sbx-bpf/events.sock ] && kill -0 $SHARED_PID 2>/dev/null && [ $i -lt 3000 ]; do
		sleep 0.1; i=$((i + 1))
	done
	if [ -S /run/sbx-bpf/events.sock ] && [ -e /sys/fs/bpf/sbx/meta ]; then
		[ "$1" = load ] && echo "PASS vm/shared-programs-loaded" >"$SBX_RESULTS"
	else
		echo "FAIL vm/shared-programs-${1}ed: $(tr '\n' ' ' </tmp/shared-daemon.err | tail -c 1500)" >"$SBX_RESULTS"
	fi
	[ "$1" = load ] &&
		echo "INFO vm/shared-programs-load took $(($(date +%s) - t0)) s (guest clock)" >"$SBX_RESULTS"
	return 0
}
# A daemon a test file or benchmark left running (the lock file's pid) goes.
stop_left_daemon() {
	pid=$(cat /run/sbx-bpf/daemon.pid 2>/dev/null)
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && sleep 1
	return 0
}
# The shared daemon stops; the set stays pinned (and enforcing) for a file
# whose own daemon adopts it. A daemon such a file left behind goes too.
shared_pause() {
	[ -n "$SHARED_PID" ] && kill "$SHARED_PID" 2>/dev/null && wait "$SHARED_PID" 2>/dev/null
	SHARED_PID=
	stop_left_daemon
}
shared_stop() {
	shared_pause
	sbx-bpf unload >/dev/null 2>&1
}

# "# e2e: programs=own": the file loads the programs itself (its own daemon,
# or `run` loading its own: the daemon-less path, loads that must succeed
# or fail on their own), with nothing pinned; these run first.
# "# e2e: programs=pinned": the file runs daemons of its own (its options,
# its events file, kill -9 and restarts) on the boot's pinned set, which
# they adopt instead of loading the programs again; it leaves the set
# pinned, with nothing of its own attached.
# Any other file shares the pinned set and the daemon init.sh runs.
run_suite() {
	echo "SUITE-START $(uname -r)" >"$SBX_RESULTS"
	echo "== $(uname -r): $(cat /proc/cmdline)" >/dev/console
	own= pinned= shared=
	for t in /sbx/tests/e2e/[0-9]*.sh /sbx/tests/escape/[0-9]*.sh; do
		name=$(basename "$t" .sh)
		case " ${SBX_TESTS:-$name} " in *" $name "*) ;; *) continue ;; esac
		case $(grep -m1 '^# e2e: programs=' "$t") in
		*=own) own="$own $t" ;;
		*=pinned) pinned="$pinned $t" ;;
		*) shared="$shared $t" ;;
		esac
	done
	for t in $own; do run_one "$t" own; done
	[ -n "$shared$pinned" ] && shared_start load
	for t in $pinned; do
		shared_pause
		run_one "$t" pinned
		shared_pause
		shared_start adopt
	done
	for t in $shared; do run_one "$t" shared; done
	shared_stop
	echo "SUITE-DONE" >"$SBX_RESULTS"
}

# SBX_BENCH_ONLY: the benchmarks to run, in this order (space or comma
# separated); all of them by default, in one boot. Each gets
# SBX_BENCH_TIMEOUT seconds (default 1200), and leaves no daemon and no
# pinned programs behind for the next.
BENCHES="cost open connect compare startup scale events verifier"
run_benches() {
	for b in $(echo "${SBX_BENCH_ONLY:-$BENCHES}" | tr , ' '); do
		case " $BENCHES " in
		*" $b "*) ;;
		*) echo "FAIL bench/$b: unknown benchmark (SBX_BENCH_ONLY: $BENCHES)"; continue ;;
		esac
		case $b in open | connect) s=$b-overhead ;; *) s=$b ;; esac
		echo "== bench/$s.sh" >/dev/console
		t0=$(date +%s)
		timeout -k 10 "${SBX_BENCH_TIMEOUT:-1200}" sh "/sbx/bench/$s.sh"
		rc=$?
		echo "(bench/$s.sh: $(($(date +%s) - t0)) s)"
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			echo "FAIL bench/$b/timeout (killed after ${SBX_BENCH_TIMEOUT:-1200}s)"
		fi
		wait_unloads 1200 || echo "FAIL bench/$b/unload: an unload child is still there after 120 s"
		# What a failed or killed benchmark left: its daemon, the pinned set.
		stop_left_daemon
		[ ! -e /sys/fs/bpf/sbx ] || sbx-bpf unload >/dev/null 2>&1
		echo
	done
}

case "$SBX_MODE" in
test) run_suite ;;
demo) sh /sbx/tests/vm/demo.sh 2>&1 | tee "$SBX_RESULTS"; echo "SUITE-DONE" >"$SBX_RESULTS" ;;
demo-containers)
	sh /sbx/tests/vm/demo-containers.sh 2>&1 | tee "$SBX_RESULTS"; echo "SUITE-DONE" >"$SBX_RESULTS" ;;
bench) run_benches 2>&1 | tee "$SBX_RESULTS"; echo "SUITE-DONE" >"$SBX_RESULTS" ;;
shell)
	echo 'export PATH=/sbx/bin:$PATH' >/etc/profile.d/sbx.sh	# bash -l resets PATH
	echo "sbx-bpf VM: $(uname -r); sbx-bpf and tests are in /sbx. Exit the shell to power off."
	setsid -c /bin/bash -l </dev/ttyS0 >/dev/ttyS0 2>&1 ;;
esac
sync
echo o >/proc/sysrq-trigger
sleep 10
