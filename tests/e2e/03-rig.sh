# The VM rig itself: the kernel under test is what the host asked for, and
# the modules later tests need load from the packed module archive.
. /sbx/tests/e2e/lib.sh

check kernel-is-the-one-requested "$(uname -r)" "$SBX_KERNEL_RELEASE"
[ -r /sys/kernel/btf/vmlinux ] && pass kernel-has-btf || fail kernel-has-btf "no /sys/kernel/btf/vmlinux"
grep -qw bpf /sys/kernel/security/lsm && pass bpf-lsm-active || fail bpf-lsm-active "$(cat /sys/kernel/security/lsm)"
for m in veth dummy; do
	modprobe "$m" 2>"$W/err" && pass "modprobe-$m" || fail "modprobe-$m" "$(cat "$W/err")"
done
# The vCPU vm.sh asked for (SBX_VM_CPU, scripts/vm.sh guest_cpu): without
# CMPXCHG16B, which QEMU 7.2 emulates with wrong flags, unless the kernel
# needs it (6.18+: BPF local storage allocates with kmalloc_nolock()).
case ${SBX_VM_CPU:-} in
*-cx16*) want=absent ;;
max) want=present ;;
*) want= ;;
esac
if [ -n "$want" ]; then
	grep -qw cx16 /proc/cpuinfo && got=present || got=absent
	check vcpu-cx16-as-asked "$got" "$want"
fi
for c in cpu memory io pids; do
	grep -qw "$c" /sys/fs/cgroup/cgroup.controllers && pass "controller-$c" || fail "controller-$c" missing
done
