#!/usr/bin/env bash
# The VM rig's reading of a guest that died (scripts/vm.sh crash): the
# console logs it boots again after, and why (TCG's int3 patching race, a
# soft lockup, an oops whose saved RFLAGS has a reserved bit set, which no
# x86 CPU does), and the deaths that stay failures.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=vm-rig
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1: $2"; }
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT

# $1: name, $2: console text, $3: what `vm.sh crash` must print (exactly).
expect() {
	local got
	printf '%b' "$2" >"$W/console.log"
	got=$("$ROOT/scripts/vm.sh" crash "$W/console.log" 2>&1)
	[ "$got" = "$3" ] && pass "$1" || fail "$1" "printed '$got', not '$3'"
}

expect int3-race '[   13.64] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\r\n[   13.64] RIP: 0010:__alloc_pages_noprof+0x178/0x310\r\n' \
	'resumed: RIP: 0010:__alloc_pages_noprof+0x178'
expect soft-lockup '[   36.32] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [sleep:158]\n' \
	'resumed: soft lockup - CPU#0 stuck for 26s! [sleep:158]'
# The 6.12 guest QEMU 7.2's cmpxchg16b killed (scripts/vm.sh, guest_cpu): a GPF with impossible flags.
expect emulator-flags '[  464.20] Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1]\n[  464.20] RIP: 0010:__kmalloc_node_track_caller_noprof+0x1a7/0x430\n[  464.20] RSP: 0018:ff463a0100ae3ae0 EFLAGS: fca62f52\n' \
	'resumed: an oops saved RFLAGS fca62f52, which no CPU does'
# Flags a CPU can save (IF, ZF, RF, ID set): a crash of the guest's own, a failure.
expect plain-oops '[  10.00] BUG: kernel NULL pointer dereference, address: 0000000000000008\n[  10.00] RSP: 0018:ffffa3be017a3bb8 EFLAGS: 00210246\n' ''
expect no-log '' ''
