// SPDX-License-Identifier: GPL-2.0
/*
 * moves.bpf.c — where the kernel's two move counts are, and what they read
 * (sbx_abi.h struct sbx_moves), for the loader (userspace/moves.c).
 *
 * Programs:
 *   syscall/moves_read   denies nothing: run once through BPF_PROG_TEST_RUN
 *                        to find rename_lock and mount_lock by name
 *                        (bpf_kallsyms_lookup_name, which only this program
 *                        type may call) and read their sequence counts, and
 *                        again, the addresses kept, to see them move.
 *
 * The sequence count is the first word of a seqlock_t (seqcount_spinlock_t,
 * whose first member is the seqcount_t, whose first member is the count),
 * with or without lockdep: the address of the lock is that of its count.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sbx_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* What the loader reads back (the object's .bss). */
struct sbx_moves moves;

#define ENOENT 2

static const char rename_name[] = "rename_lock";
static const char mount_name[] = "mount_lock";

/* Count @i: found by @name (@size bytes with its NUL) unless known, then read. */
static __always_inline void moves_one(__u32 i, const char *name, int size)
{
	__u64 addr = moves.addr[i & 1];
	long err = 0;

	if (!addr && bpf_kallsyms_lookup_name(name, size, 0, &addr))
		addr = 0;
	moves.addr[i & 1] = addr;
	err = addr ? bpf_probe_read_kernel(&moves.count[i & 1], sizeof(__u32), (const void *)addr) : -ENOENT;
	moves.err[i & 1] = err;
}

SEC("syscall")
int moves_read(void *ctx)
{
	moves_one(SBX_MOVES_RENAME, rename_name, sizeof(rename_name));
	moves_one(SBX_MOVES_MOUNT, mount_name, sizeof(mount_name));
	return 0;
}
