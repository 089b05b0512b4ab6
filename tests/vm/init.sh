#!/bin/sh
# PID 1 of the test VM (rdinit=/sbx/init): mount what a real host has, then
# run the e2e suite, the demo, the benchmark or a shell, and power off.
# Results go to the second serial port (ttyS1), read by scripts/vm.sh on the host.
export PATH=/sbx/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
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

run_suite() {
	echo "SUITE-START $(uname -r)" >"$SBX_RESULTS"
	for t in /sbx/tests/e2e/[0-9]*.sh; do
		name=$(basename "$t" .sh)
		case " ${SBX_TESTS:-$name} " in *" $name "*) ;; *) continue ;; esac
		log=/tmp/$name.results
		: >"$log"
		echo "== $name" >/dev/console
		SBX_RESULT_LOG=$log SBX_TEST=$name timeout -k 5 "$SBX_TEST_TIMEOUT" sh "$t" \
			>/tmp/$name.out 2>&1
		rc=$?
		cat "$log" >"$SBX_RESULTS"
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			echo "FAIL $name/timeout (killed after ${SBX_TEST_TIMEOUT}s)" >"$SBX_RESULTS"
		elif [ $rc -ne 0 ] && ! grep -q '^FAIL' "$log"; then
			echo "FAIL $name/exit (script exited $rc)" >"$SBX_RESULTS"
		fi
		if [ $rc -ne 0 ]; then
			sed 's/^/    | /' "/tmp/$name.out" | tail -40 >"$SBX_RESULTS"
		fi
	done
	echo "SUITE-DONE" >"$SBX_RESULTS"
}

case "$SBX_MODE" in
test) run_suite ;;
demo) sh /sbx/tests/vm/demo.sh 2>&1 | tee "$SBX_RESULTS"; echo "SUITE-DONE" >"$SBX_RESULTS" ;;
bench) {	# SBX_BENCH_ONLY=open|connect runs one of the two
	[ "${SBX_BENCH_ONLY:-open}" = open ] && sh /sbx/bench/open-overhead.sh
	[ "${SBX_BENCH_ONLY:-connect}" = connect ] && sh /sbx/bench/connect-overhead.sh; } 2>&1 | tee "$SBX_RESULTS"
	echo "SUITE-DONE" >"$SBX_RESULTS" ;;
shell)
	echo 'export PATH=/sbx/bin:$PATH' >/etc/profile.d/sbx.sh	# bash -l resets PATH
	echo "sbx-bpf VM: $(uname -r); sbx-bpf and tests are in /sbx. Exit the shell to power off."
	setsid -c /bin/bash -l </dev/ttyS0 >/dev/ttyS0 2>&1 ;;
esac
sync
echo o >/proc/sysrq-trigger
sleep 10
