# The VM rig itself: the kernel under test is what the host asked for, and
# the modules later tests need load from the packed module archive.
. /sbx/tests/e2e/lib.sh

check kernel-is-the-one-requested "$(uname -r)" "$SBX_KERNEL_RELEASE"
[ -r /sys/kernel/btf/vmlinux ] && pass kernel-has-btf || fail kernel-has-btf "no /sys/kernel/btf/vmlinux"
grep -qw bpf /sys/kernel/security/lsm && pass bpf-lsm-active || fail bpf-lsm-active "$(cat /sys/kernel/security/lsm)"
for m in veth dummy; do
	modprobe "$m" 2>"$W/err" && pass "modprobe-$m" || fail "modprobe-$m" "$(cat "$W/err")"
done
# The vCPU vm.sh asked for (SBX_VM_CPU): without CMPXCHG16B, which QEMU 7.2
# emulates with wrong flags (scripts/vm.sh, VM_CPU).
case ${SBX_VM_CPU:-} in
*-cx16*)
	if grep -qw cx16 /proc/cpuinfo; then
		fail vcpu-without-cx16 "asked for $SBX_VM_CPU, /proc/cpuinfo has cx16"
	else
		pass vcpu-without-cx16
	fi ;;
esac
for c in cpu memory io pids; do
	grep -qw "$c" /sys/fs/cgroup/cgroup.controllers && pass "controller-$c" || fail "controller-$c" missing
done
